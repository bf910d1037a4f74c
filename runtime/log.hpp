// runtime/log.hpp
//
// The one logger of kinformer (issue 15, item 3): levels and key=value fields, one
// line per record, written through spdlog (Debian's libspdlog-dev) to stderr.
//
//   log::info("apiserver", "serving", {{"url", server.url()}, {"port", port}});
//   // 2026-12-01T02:30:00.123Z info apiserver serving url=http://127.0.0.1:8080 port=8080
//
// Contract
//   * A line is: UTC timestamp, level, component, message, then the fields in order
//     as key=value; a value with a space, '"', '=' or a control character is quoted
//     with '"' and '\' escaped and newlines as \n, so every record stays on one line.
//   * Secrets are never written: a field whose key names one (token, password, secret,
//     authorization, private_key, api_key, or ending in _token, _password, _secret; not
//     "key", which names objects) is written as
//     key=[redacted], and "Bearer <credential>" inside any value or message is
//     written as "Bearer [redacted]".
//   * The level starts from KINFORMER_LOG_LEVEL (trace, debug, info, warn, error,
//     off; default info) and can be changed with set_level(); a record below the
//     level costs one atomic load and formats nothing.
//   * log_to() sends lines to a stream instead (a test reading what was logged);
//     log_to_stderr() goes back. Writing is serialised: lines never interleave.
// Threading: every function may be called from any thread.
// Errors: never throws out of a log call (a failing sink drops the line).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

namespace kinformer::log {

enum class Level : std::uint8_t { trace, debug, info, warn, error, off };

/// One key=value pair; numbers and strings convert implicitly.
struct Field {
  Field(std::string_view k, std::string_view v) : key(k), value(v) {}
  Field(std::string_view k, const std::string& v) : key(k), value(v) {}
  Field(std::string_view k, const char* v) : key(k), value(v ? v : "") {}
  template <class Number, class = std::enable_if_t<std::is_arithmetic_v<Number>>>
  Field(std::string_view k, Number v) : key(k), value(to_text(v)) {}

  std::string_view key;
  std::string value;

 private:
  template <class Number>
  static std::string to_text(Number v) {
    if constexpr (std::is_same_v<Number, bool>)
      return v ? "true" : "false";
    else
      return std::to_string(v);
  }
};

using Fields = std::initializer_list<Field>;

void set_level(Level level);
Level level();
bool enabled(Level level);
/// "info" -> Level::info; false for an unknown name.
bool parse_level(std::string_view name, Level& out);

void write(Level level, std::string_view component, std::string_view message, Fields fields = {});

inline void trace(std::string_view component, std::string_view message, Fields fields = {}) {
  if (enabled(Level::trace)) write(Level::trace, component, message, fields);
}
inline void debug(std::string_view component, std::string_view message, Fields fields = {}) {
  if (enabled(Level::debug)) write(Level::debug, component, message, fields);
}
inline void info(std::string_view component, std::string_view message, Fields fields = {}) {
  if (enabled(Level::info)) write(Level::info, component, message, fields);
}
inline void warn(std::string_view component, std::string_view message, Fields fields = {}) {
  if (enabled(Level::warn)) write(Level::warn, component, message, fields);
}
inline void error(std::string_view component, std::string_view message, Fields fields = {}) {
  if (enabled(Level::error)) write(Level::error, component, message, fields);
}

/// Lines go to `out` (which must outlive the logging, or until log_to_stderr()).
void log_to(std::ostream& out);
void log_to_stderr();

/// The record as it is written after the timestamp and level: "component message k=v ...".
/// Exposed for tests of the escaping and redaction rules.
std::string format_record(std::string_view component, std::string_view message, Fields fields);

}  // namespace kinformer::log
