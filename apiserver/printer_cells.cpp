#include "apiserver/printer_cells.hpp"

#include <cstdio>
#include <ctime>
#include <set>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace printer_cells {

const json& at(const json& object, Path path) {
  static const json missing;
  const json* node = &object;
  for (const char* key : path) {
    if (!node->is_object()) return missing;
    auto it = node->find(key);
    if (it == node->end()) return missing;
    node = &*it;
  }
  return *node;
}

std::string text(const json& object, Path path) {
  const json& v = at(object, path);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::int64_t integer(const json& object, Path path) {
  const json& v = at(object, path);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return static_cast<std::int64_t>(v.get<double>());
  return 0;
}

std::size_t count(const json& object, Path path) {
  const json& v = at(object, path);
  return v.is_object() || v.is_array() ? v.size() : 0;
}

bool flag(const json& object, Path path) {
  const json& v = at(object, path);
  return v.is_boolean() && v.get<bool>();
}

const json& items(const json& object, Path path) {
  static const json empty = json::array();
  const json& v = at(object, path);
  return v.is_array() ? v : empty;
}

std::string or_none(std::string s) { return s.empty() ? "<none>" : s; }

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

std::optional<TableClock::time_point> parse_time(const json& timestamp) {
  if (!timestamp.is_string()) return std::nullopt;
  const auto& s = timestamp.get_ref<const std::string&>();
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6)
    return std::nullopt;
  // system_clock counts nanoseconds in 64 bits: beyond ~1678..2262 the arithmetic overflows
  if (tm.tm_year < 1900 || tm.tm_year > 2200) return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t i = static_cast<std::size_t>(consumed);
  std::chrono::nanoseconds fraction{0};  // MicroTime's; an age truncates it, as Go does
  if (i < s.size() && s[i] == '.') {
    long long scale = 100'000'000;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10)
      fraction += std::chrono::nanoseconds((s[i] - '0') * scale);
  }
  long offset = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int hours = 0, minutes = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &hours, &minutes) != 2) return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (hours * 3600L + minutes * 60L);
  } else if (i >= s.size() || (s[i] != 'Z' && s[i] != 'z')) {
    return std::nullopt;
  }
  std::time_t seconds = ::timegm(&tm);
  if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
  return TableClock::from_time_t(seconds - offset) + std::chrono::duration_cast<TableClock::duration>(fraction);
}

std::string format_labels(const json& labels) {
  if (!labels.is_object() || labels.empty()) return "<none>";
  std::vector<std::string> parts;
  for (auto it = labels.begin(); it != labels.end(); ++it)  // nlohmann's object is ordered by key
    parts.push_back(it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump()));
  return joined(parts);
}

}  // namespace printer_cells

using printer_cells::at;
using printer_cells::items;
using printer_cells::joined;
using printer_cells::parse_time;
using printer_cells::text;

std::string label_selector_text(const json& selector) {
  std::vector<std::pair<std::string, std::string>> requirements;  // (key, text)
  if (const json& labels = at(selector, {"matchLabels"}); labels.is_object())
    for (auto it = labels.begin(); it != labels.end(); ++it)
      requirements.emplace_back(it.key(), it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : ""));
  for (const auto& e : items(selector, {"matchExpressions"})) {
    auto key = text(e, {"key"});
    auto op = text(e, {"operator"});
    std::set<std::string> values;
    for (const auto& v : items(e, {"values"}))
      if (v.is_string()) values.insert(v.get<std::string>());
    std::string list = "(" + joined({values.begin(), values.end()}) + ")";
    if (op == "In") requirements.emplace_back(key, key + " in " + list);
    else if (op == "NotIn") requirements.emplace_back(key, key + " notin " + list);
    else if (op == "Exists") requirements.emplace_back(key, key);
    else if (op == "DoesNotExist") requirements.emplace_back(key, "!" + key);
  }
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> parts;
  for (auto& r : requirements) parts.push_back(std::move(r.second));
  return joined(parts);
}

std::string human_duration(std::chrono::seconds elapsed) {
  auto s = elapsed.count();
  if (s < -1) return "<invalid>";  // up to two seconds of clock skew reads as "now"
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  auto minutes = s / 60;
  if (minutes < 10) return std::to_string(minutes) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  if (minutes < 180) return std::to_string(minutes) + "m";
  auto hours = s / 3600;
  if (hours < 8) return std::to_string(hours) + "h" + (minutes % 60 ? std::to_string(minutes % 60) + "m" : "");
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) return std::to_string(hours / 24) + "d" + (hours % 24 ? std::to_string(hours % 24) + "h" : "");
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  auto days = hours / 24;
  if (hours < 24 * 365 * 8) return std::to_string(days / 365) + "y" + (days % 365 ? std::to_string(days % 365) + "d" : "");
  return std::to_string(days / 365) + "y";
}

std::string age_of(const json& timestamp, TableClock::time_point now) {
  auto at_time = parse_time(timestamp);
  if (!at_time) return "<unknown>";
  return human_duration(std::chrono::duration_cast<std::chrono::seconds>(now - *at_time));
}

}  // namespace kinformer::apiserver
