// runtime/log.cpp: records formatted here, written by one spdlog logger.
#include "runtime/log.hpp"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <ostream>

namespace kinformer::log {

namespace {

Level initial_level() {
  Level out = Level::info;
  if (const char* env = std::getenv("KINFORMER_LOG_LEVEL")) (void)parse_level(env, out);
  return out;
}

std::atomic<Level>& current_level() {
  static std::atomic<Level> level{initial_level()};
  return level;
}

std::shared_ptr<spdlog::logger> make_logger(spdlog::sink_ptr sink) {
  auto logger = std::make_shared<spdlog::logger>("kinformer", std::move(sink));
  logger->set_formatter(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %v",
                                                                    spdlog::pattern_time_type::utc));
  logger->set_level(spdlog::level::trace);  // the level check is ours (current_level)
  logger->flush_on(spdlog::level::trace);   // a crash must not eat the last lines
  return logger;
}

struct Output {
  std::mutex mu;
  std::shared_ptr<spdlog::logger> logger = make_logger(std::make_shared<spdlog::sinks::stderr_sink_mt>());
};

Output& output() {
  static Output out;
  return out;
}

std::shared_ptr<spdlog::logger> logger() {
  auto& out = output();
  std::lock_guard<std::mutex> lock(out.mu);
  return out.logger;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool secret_key(std::string_view key) {
  std::string k(key);
  for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Not "key" or "*_key": kinformer logs object keys ("namespace/name") under key=.
  return k == "token" || k == "password" || k == "secret" || k == "authorization" || k == "private_key" ||
         k == "api_key" || ends_with(k, "_token") || ends_with(k, "_password") || ends_with(k, "_secret");
}

// "Bearer abc.def" -> "Bearer [redacted]": the credential runs to the next space or quote.
std::string scrub_bearer(std::string_view text) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    auto found = text.find("Bearer ", at);
    if (found == std::string_view::npos) break;
    out.append(text.substr(at, found + 7 - at));
    out += "[redacted]";
    at = found + 7;
    while (at < text.size() && text[at] != ' ' && text[at] != '"' && text[at] != '\n') ++at;
  }
  out.append(text.substr(at));
  return out;
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (unsigned char c : v)
    if (c <= ' ' || c == '"' || c == '=' || c == 0x7f) return true;
  return false;
}

std::string quoted(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (static_cast<unsigned char>(c) < ' ' || c == 0x7f)
      out += '?';
    else
      out += c;
  }
  return out + "\"";
}

// A message is free text, but stays on one line.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace:
      return spdlog::level::trace;
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
    case Level::error:
      return spdlog::level::err;
    case Level::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

void set_level(Level level) { current_level().store(level, std::memory_order_relaxed); }
Level level() { return current_level().load(std::memory_order_relaxed); }
bool enabled(Level l) { return l != Level::off && l >= level(); }

bool parse_level(std::string_view name, Level& out) {
  static constexpr std::pair<std::string_view, Level> names[] = {
      {"trace", Level::trace}, {"debug", Level::debug}, {"info", Level::info},
      {"warn", Level::warn},   {"error", Level::error}, {"off", Level::off}};
  for (const auto& [n, l] : names)
    if (n == name) return out = l, true;
  return false;
}

std::string format_record(std::string_view component, std::string_view message, Fields fields) {
  std::string out(component);
  out += ' ';
  out += scrub_bearer(one_line(message));
  for (const auto& field : fields) {
    out += ' ';
    out += field.key;
    out += '=';
    if (secret_key(field.key)) {
      out += "[redacted]";
      continue;
    }
    auto value = scrub_bearer(field.value);
    out += needs_quotes(value) ? quoted(value) : value;
  }
  return out;
}

void write(Level level, std::string_view component, std::string_view message, Fields fields) {
  if (!enabled(level)) return;
  try {
    // Our level names ("warn", not spdlog's "warning"), so lines match the API and KINFORMER_LOG_LEVEL.
    static constexpr std::string_view names[] = {"trace", "debug", "info", "warn", "error", "off"};
    std::string line(names[static_cast<int>(level)]);
    line += ' ';
    line += format_record(component, message, fields);
    logger()->log(to_spdlog(level), "{}", line);
  } catch (...) {
    // Logging must never take the caller down (bad_alloc, a failing stream).
  }
}

void log_to(std::ostream& out) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out, true);
  auto& o = output();
  std::lock_guard<std::mutex> lock(o.mu);
  o.logger = make_logger(std::move(sink));
}

void log_to_stderr() {
  auto& o = output();
  std::lock_guard<std::mutex> lock(o.mu);
  o.logger = make_logger(std::make_shared<spdlog::sinks::stderr_sink_mt>());
}

}  // namespace kinformer::log
