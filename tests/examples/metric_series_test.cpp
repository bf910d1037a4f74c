// MetricSeries (examples/forecasting/metric_series.hpp): decoding, times, the
// bodies the examples send, and the SVG chart (examples/forecasting/forecast_plot.hpp).
#include "examples/forecasting/metric_series.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "examples/forecasting/forecast_plot.hpp"

namespace fc = kinformer::forecasting;
using nlohmann::json;

namespace {

json series_json(json points, json status = nullptr) {
  json body = {
      {"apiVersion", "metrics.kinformer.io/v1"},
      {"kind", "MetricSeries"},
      {"metadata", {{"name", "s"}, {"namespace", "m"}, {"resourceVersion", "7"}, {"generation", 3}}},
      {"spec",
       {{"metric", "oil temperature"}, {"unit", "°C"}, {"intervalSeconds", 3600}, {"points", points}}}};
  if (!status.is_null()) body["status"] = status;
  return body;
}

kinformer::Result<fc::MetricSeries> decode(const json& body) {
  auto object = kinformer::Object::parse(body.dump());
  REQUIRE(object);
  return fc::MetricSeries::decode(*object.value());
}

}  // namespace

TEST_CASE("times round-trip through RFC 3339 and the ETT CSV spelling", "[metric_series][unit]") {
  auto t = fc::parse_time("2016-07-01T00:00:00Z");
  REQUIRE(t);
  CHECK(t.value() == 1467331200);
  CHECK(fc::format_time(t.value()) == "2016-07-01T00:00:00Z");
  auto csv = fc::parse_time("2018-02-20 23:00:00");
  REQUIRE(csv);
  CHECK(fc::format_time(csv.value()) == "2018-02-20T23:00:00Z");
  for (const char* bad : {"", "2016-07-01", "2016-13-01T00:00:00Z", "2016-07-01T24:00:00Z",
                          "2016/07/01T00:00:00Z", "2016-07-01T00:00:0xZ", "2016-07-01T00:00:00+01:00"})
    CHECK_FALSE(fc::parse_time(bad));
}

TEST_CASE("a MetricSeries decodes its points, unit and forecast", "[metric_series][unit]") {
  json status = {{"forecast",
                  {{"model", "h24"},
                   {"basedOn", "2016-07-01T01:00:00Z"},
                   {"points", {{{"time", "2016-07-01T02:00:00Z"}, {"value", 31.5}}}}}}};
  auto series = decode(series_json({{{"time", "2016-07-01T00:00:00Z"}, {"value", 30.531}},
                                    {{"time", "2016-07-01T01:00:00Z"}, {"value", 27.787}}},
                                   status));
  REQUIRE(series);
  CHECK(series->key == "m/s");
  CHECK(series->generation == 3);
  CHECK(series->unit == "°C");
  CHECK(series->interval_seconds == 3600);
  REQUIRE(series->points.size() == 2);
  CHECK(series->points[0].value == 30.531);  // exactly the double written
  CHECK(series->points[1].time - series->points[0].time == 3600);
  REQUIRE(series->forecast);
  CHECK(series->forecast->model == "h24");
  CHECK(series->forecast->based_on == series->points[1].time);
  CHECK(series->forecast->points.size() == 1);
}

TEST_CASE("a malformed MetricSeries is a decode error that names the point", "[metric_series][unit]") {
  SECTION("a value that is not a number") {
    auto series = decode(series_json({{{"time", "2016-07-01T00:00:00Z"}, {"value", "hot"}}}));
    REQUIRE_FALSE(series);
    CHECK(series.error().message.find("spec.points[0].value") != std::string::npos);
  }
  SECTION("times that do not increase") {
    auto series = decode(series_json({{{"time", "2016-07-01T01:00:00Z"}, {"value", 1}},
                                      {{"time", "2016-07-01T01:00:00Z"}, {"value", 2}}}));
    REQUIRE_FALSE(series);
    CHECK(series.error().message.find("spec.points[1].time") != std::string::npos);
  }
  SECTION("points that are not an array") { CHECK_FALSE(decode(series_json(json{{"time", "x"}}))); }
  SECTION("a forecast without a parsable basedOn") {
    CHECK_FALSE(decode(series_json(json::array(), {{"forecast", {{"basedOn", "yesterday"}}}})));
  }
}

TEST_CASE("the append patch drops the oldest points and appends the new ones", "[metric_series][unit]") {
  auto ops = json::parse(fc::append_points_patch({{1467331200, 1.25}}, 1));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0] == json{{"op", "remove"}, {"path", "/spec/points/0"}});
  CHECK(ops[1]["path"] == "/spec/points/-");
  CHECK(ops[1]["value"] == json{{"time", "2016-07-01T00:00:00Z"}, {"value", 1.25}});
  auto status = json::parse(fc::forecast_status_patch({"h24", 1467331200, {{1467334800, 2.5}}, std::nullopt}));
  CHECK(status["status"]["forecast"]["basedOn"] == "2016-07-01T00:00:00Z");
  CHECK(status["status"]["forecast"]["points"][0]["value"] == 2.5);
}

TEST_CASE("the SVG chart draws history and forecast apart with axes, units and the series name",
          "[metric_series][plot][unit]") {
  json points = json::array();
  for (int h = 0; h < 48; ++h)
    points.push_back({{"time", fc::format_time(1467331200 + h * 3600)}, {"value", 20 + h % 24}});
  json forecast = json::array();
  for (int h = 48; h < 72; ++h)
    forecast.push_back({{"time", fc::format_time(1467331200 + h * 3600)}, {"value", 25.5}});
  auto series = decode(series_json(
      points,
      {{"forecast",
        {{"model", "h24<&>"}, {"basedOn", fc::format_time(1467331200 + 47 * 3600)}, {"points", forecast}}}}));
  REQUIRE(series);
  const std::string svg = fc::render_svg(series.value());
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("m/s") != std::string::npos);                   // the series' name
  CHECK(svg.find("oil temperature (°C)") != std::string::npos);  // the value axis with its unit
  CHECK(svg.find("time (UTC") != std::string::npos);             // the time axis
  CHECK(svg.find("h24&lt;&amp;&gt;") != std::string::npos);      // object text is escaped
  CHECK(svg.find("h24<&>") == std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"7 4\" points=") != std::string::npos);  // the forecast line is dashed
  CHECK(svg.find("07-01 12:00") != std::string::npos);                       // a time tick
  // The naive forecast (the last day repeated from the forecast's basis) is drawn faintly,
  // and the values that came only when the caller knows them.
  CHECK(svg.find("stroke-dasharray=\"3 3\" points=") != std::string::npos);
  CHECK(svg.find("naive (last day repeated)") != std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"1 3\" points=") == std::string::npos);
  const std::string with_actual = fc::render_svg(series.value(), {{1467331200 + 48 * 3600, 21.0}, {1467331200 + 49 * 3600, 22.0}});
  CHECK(with_actual.find("stroke-dasharray=\"1 3\" points=") != std::string::npos);
  CHECK(with_actual.find(">actual</text>") != std::string::npos);
  // Without points it says so rather than drawing an empty frame.
  auto empty = decode(series_json(json::array()));
  REQUIRE(empty);
  CHECK(fc::render_svg(empty.value()).find("no points yet") != std::string::npos);
}
