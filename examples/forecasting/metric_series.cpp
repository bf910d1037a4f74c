#include "examples/forecasting/metric_series.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace kinformer::forecasting {
namespace {

using nlohmann::json;

constexpr std::string_view group_version = "/apis/metrics.kinformer.io/v1";

Result<MetricPoint> decode_point(const json& point, const std::string& where) {
  if (!point.is_object()) return Error{Errc::decode_failed, where + " is not an object"};
  auto time = point.find("time");
  auto value = point.find("value");
  if (time == point.end() || !time->is_string())
    return Error{Errc::decode_failed, where + ".time is not a string"};
  if (value == point.end() || !value->is_number() || !std::isfinite(value->get<double>()))
    return Error{Errc::decode_failed, where + ".value is not a finite number"};
  auto seconds = parse_time(time->get_ref<const std::string&>());
  if (!seconds) return Error{Errc::decode_failed, where + ".time: " + seconds.error().message};
  return MetricPoint{seconds.value(), value->get<double>()};
}

Result<std::vector<MetricPoint>> decode_points(const json& parent, const std::string& where) {
  std::vector<MetricPoint> points;
  auto list = parent.find("points");
  if (list == parent.end() || list->is_null()) return points;
  if (!list->is_array()) return Error{Errc::decode_failed, where + " is not an array"};
  points.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    auto point = decode_point((*list)[i], at);
    if (!point) return point.error();
    if (!points.empty() && point.value().time <= points.back().time)
      return Error{Errc::decode_failed, at + ".time does not come after the point before it"};
    points.push_back(point.value());
  }
  return points;
}

json points_json(const std::vector<MetricPoint>& points) {
  json list = json::array();
  for (const auto& p : points) list.push_back({{"time", format_time(p.time)}, {"value", p.value}});
  return list;
}

std::string string_or_empty(const json& parent, const char* name) {
  auto it = parent.find(name);
  return it != parent.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<MetricSeries> MetricSeries::decode(const Object& object) {
  MetricSeries series;
  series.key = std::string(object.key());
  series.namespace_ = std::string(object.namespace_());
  series.name = std::string(object.name());
  series.resource_version = std::string(object.resource_version());
  series.generation = object.generation();
  json doc = json::parse(object.json(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return Error{Errc::decode_failed, series.key + ": not a JSON object"};
  if (auto spec = doc.find("spec"); spec != doc.end() && spec->is_object()) {
    series.metric = string_or_empty(*spec, "metric");
    series.unit = string_or_empty(*spec, "unit");
    if (auto interval = spec->find("intervalSeconds"); interval != spec->end()) {
      if (!interval->is_number_integer() || interval->get<std::int64_t>() <= 0)
        return Error{Errc::decode_failed, series.key + ": spec.intervalSeconds is not a positive integer"};
      series.interval_seconds = interval->get<std::int64_t>();
    }
    auto points = decode_points(*spec, series.key + ": spec.points");
    if (!points) return points.error();
    series.points = std::move(points).value();
  }
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) return series;
  auto forecast = status->find("forecast");
  if (forecast == status->end() || !forecast->is_object()) return series;
  SeriesForecast f;
  f.model = string_or_empty(*forecast, "model");
  auto based_on = parse_time(string_or_empty(*forecast, "basedOn"));
  if (!based_on)
    return Error{Errc::decode_failed, series.key + ": status.forecast.basedOn: " + based_on.error().message};
  f.based_on = based_on.value();
  auto points = decode_points(*forecast, series.key + ": status.forecast.points");
  if (!points) return points.error();
  f.points = std::move(points).value();
  if (auto score = forecast->find("lastScore"); score != forecast->end() && score->is_object()) {
    ForecastScore sc;
    auto scored = parse_time(string_or_empty(*score, "basedOn"));
    auto number = [&](const char* key, double& into) {
      auto it = score->find(key);
      if (it == score->end() || !it->is_number()) return false;
      into = it->get<double>();
      return true;
    };
    auto count = score->find("points");
    const bool count_ok = count != score->end() && count->is_number_integer() && count->get<std::int64_t>() >= 0 &&
                          count->get<std::int64_t>() <= 1000000;
    if (!scored || !count_ok || !number("modelMae", sc.model_mae) ||
        !number("naiveMae", sc.naive_mae) || !number("ratio", sc.ratio))
      return Error{Errc::decode_failed, series.key + ": status.forecast.lastScore needs basedOn, points (an integer "
                                                     "0..1000000), modelMae, naiveMae and ratio"};
    sc.based_on = scored.value();
    sc.points = static_cast<int>(count->get<std::int64_t>());
    f.last_score = sc;
  }
  series.forecast = std::move(f);
  return series;
}

std::string format_time(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[80];  // room for any int the format could print
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

Result<std::int64_t> parse_time(std::string_view text) {
  // Exactly "YYYY-MM-DD?HH:MM:SS" with an optional trailing 'Z'; anything else is rejected.
  const bool zulu = !text.empty() && text.back() == 'Z';
  const std::string_view body = zulu ? text.substr(0, text.size() - 1) : text;
  auto bad = [&] {
    return Error{Errc::decode_failed, "'" + std::string(text) + "' is not YYYY-MM-DDTHH:MM:SSZ"};
  };
  if (body.size() != 19 || (body[10] != 'T' && body[10] != ' ')) return bad();
  for (std::size_t i : {4u, 7u})
    if (body[i] != '-') return bad();
  for (std::size_t i : {13u, 16u})
    if (body[i] != ':') return bad();
  auto number = [&](std::size_t at, std::size_t digits) {
    int n = 0;
    for (std::size_t i = at; i < at + digits; ++i) {
      if (body[i] < '0' || body[i] > '9') return -1;
      n = n * 10 + (body[i] - '0');
    }
    return n;
  };
  std::tm tm{};
  tm.tm_year = number(0, 4) - 1900;
  tm.tm_mon = number(5, 2) - 1;
  tm.tm_mday = number(8, 2);
  tm.tm_hour = number(11, 2);
  tm.tm_min = number(14, 2);
  tm.tm_sec = number(17, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 59)
    return bad();
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string series_collection_path(std::string_view namespace_) {
  return std::string(group_version) + "/namespaces/" + std::string(namespace_) + "/metricseries";
}

std::string series_path(std::string_view namespace_, std::string_view name) {
  return series_collection_path(namespace_) + "/" + std::string(name);
}

std::string forecast_status_target(std::string_view namespace_, std::string_view name) {
  return series_path(namespace_, name);  // issue 17: + "/status"
}

std::string namespace_body(std::string_view name) {
  return json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", std::string(name)}}}}
      .dump();
}

std::string new_series_body(std::string_view namespace_, std::string_view name, std::string_view metric,
                            std::string_view unit, std::int64_t interval_seconds,
                            const std::vector<MetricPoint>& points) {
  json body = {{"apiVersion", "metrics.kinformer.io/v1"},
               {"kind", "MetricSeries"},
               {"metadata", {{"name", std::string(name)}, {"namespace", std::string(namespace_)}}},
               {"spec",
                {{"metric", std::string(metric)},
                 {"unit", std::string(unit)},
                 {"intervalSeconds", interval_seconds},
                 {"points", points_json(points)}}}};
  return body.dump();
}

std::string append_points_patch(const std::vector<MetricPoint>& added, std::size_t drop_oldest) {
  json ops = json::array();
  for (std::size_t i = 0; i < drop_oldest; ++i) ops.push_back({{"op", "remove"}, {"path", "/spec/points/0"}});
  for (const auto& p : added)
    ops.push_back({{"op", "add"},
                   {"path", "/spec/points/-"},
                   {"value", {{"time", format_time(p.time)}, {"value", p.value}}}});
  return ops.dump();
}

std::string forecast_status_patch(const SeriesForecast& forecast) {
  json body = {{"model", forecast.model},
               {"basedOn", format_time(forecast.based_on)},
               {"points", points_json(forecast.points)}};
  // null removes a score left from before (merge-patch semantics), so status never pairs
  // a new forecast with a score that no longer applies to the series.
  body["lastScore"] = nullptr;
  if (const auto& s = forecast.last_score)
    body["lastScore"] = {{"basedOn", format_time(s->based_on)}, {"points", s->points}, {"modelMae", s->model_mae},
                         {"naiveMae", s->naive_mae}, {"naive", "last_day"}, {"ratio", s->ratio}};
  json patch = {{"status", {{"forecast", std::move(body)}}}};
  return patch.dump();
}

}  // namespace kinformer::forecasting
