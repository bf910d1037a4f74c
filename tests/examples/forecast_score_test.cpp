// The score of a forecast against the points that came since, beside the naive forecast
// (examples/forecasting/forecast_score.hpp), and its round trip through status.
#include "examples/forecasting/forecast_score.hpp"

#include <catch2/catch.hpp>

#include "runtime/object.hpp"

namespace fc = kinformer::forecasting;

namespace {

constexpr std::int64_t hour = 3600, t0 = 1514764800;  // 2018-01-01T00:00:00Z

// Hourly points 0..n-1 with the given values; intervalSeconds 1 h.
fc::MetricSeries hourly(const std::vector<double>& values) {
  fc::MetricSeries s;
  s.key = "metrics/a";
  s.interval_seconds = hour;
  for (std::size_t i = 0; i < values.size(); ++i) s.points.push_back({t0 + static_cast<std::int64_t>(i) * hour, values[i]});
  return s;
}

}  // namespace

TEST_CASE("the naive forecast repeats the last day up to the forecast's basis", "[forecast_score][unit]") {
  std::vector<double> values;
  for (int i = 0; i < 30; ++i) values.push_back(i);
  auto s = hourly(values);
  // based on point 25: the day is points 2..25, repeated from point 26 on
  auto naive = fc::naive_last_day(s, t0 + 25 * hour, {t0 + 26 * hour, t0 + 27 * hour, t0 + 51 * hour});
  REQUIRE(naive.size() == 3);
  CHECK(naive[0].value == 2);
  CHECK(naive[1].value == 3);
  CHECK(naive[2].value == 3);  // 25 steps on: one day later, the same hour
  // a history shorter than a day repeats what there is
  auto short_series = hourly({5, 7});
  auto repeated = fc::naive_last_day(short_series, t0 + hour, {t0 + 2 * hour, t0 + 3 * hour, t0 + 4 * hour});
  REQUIRE(repeated.size() == 3);
  CHECK(repeated[0].value == 5);
  CHECK(repeated[1].value == 7);
  CHECK(repeated[2].value == 5);
  CHECK(fc::naive_last_day(short_series, t0 - hour, {t0}).empty());
}

TEST_CASE("a forecast is scored on the points that arrived, beside the naive forecast", "[forecast_score][unit]") {
  std::vector<double> values(24, 10.0);  // a flat day: the naive forecast is 10
  values.push_back(12);                  // point 24 arrived after the forecast based on 23
  values.push_back(14);                  // point 25
  auto s = hourly(values);
  fc::SeriesForecast f;
  f.model = "m";
  f.based_on = t0 + 23 * hour;
  f.points = {{t0 + 24 * hour, 11}, {t0 + 25 * hour, 14}, {t0 + 26 * hour, 99}};  // the third has not come
  s.forecast = f;
  auto score = fc::score_forecast(s);
  REQUIRE(score);
  CHECK(score->based_on == f.based_on);
  CHECK(score->points == 2);
  CHECK(score->model_mae == Approx(0.5));  // |11-12|, |14-14|
  CHECK(score->naive_mae == Approx(3.0));  // |10-12|, |10-14|
  CHECK(score->ratio == Approx(0.5 / 3.0));

  s.points.resize(24);  // none of its points has come yet
  CHECK_FALSE(fc::score_forecast(s));
  s.forecast.reset();
  CHECK_FALSE(fc::score_forecast(s));
}

TEST_CASE("the score goes into status and is read back, and a forecast without one removes the old",
          "[forecast_score][metric_series][unit]") {
  fc::SeriesForecast f;
  f.model = "etth1_s_24";
  f.based_on = t0;
  f.points = {{t0 + hour, 1.5}};
  f.last_score = fc::ForecastScore{t0 - hour, 3, 0.25, 0.5, 0.5};
  auto patch = fc::forecast_status_patch(f);
  CHECK(patch.find("\"naive\":\"last_day\"") != std::string::npos);
  const std::string object = R"({"apiVersion":"metrics.kinformer.io/v1","kind":"MetricSeries","metadata":{"name":"a","namespace":"metrics","resourceVersion":"3"},"spec":{"intervalSeconds":3600,"points":[]},)" +
                             patch.substr(1);
  auto parsed = kinformer::Object::parse(object);
  REQUIRE(parsed);
  auto series = fc::MetricSeries::decode(*parsed.value());
  REQUIRE(series);
  REQUIRE(series->forecast);
  REQUIRE(series->forecast->last_score);
  CHECK(series->forecast->last_score->based_on == t0 - hour);
  CHECK(series->forecast->last_score->points == 3);
  CHECK(series->forecast->last_score->model_mae == 0.25);
  CHECK(series->forecast->last_score->naive_mae == 0.5);
  f.last_score.reset();
  CHECK(fc::forecast_status_patch(f).find("\"lastScore\":null") != std::string::npos);
}

TEST_CASE("hostile scores and far-away forecast times are refused or cost no more than near ones",
          "[forecast_score][metric_series][unit]") {
  for (const std::string score : {R"({"basedOn":"2018-01-01T00:00:00Z","points":1e300,"modelMae":1,"naiveMae":1,"ratio":1})",
                                  R"({"basedOn":"2018-01-01T00:00:00Z","points":-3,"modelMae":1,"naiveMae":1,"ratio":1})",
                                  R"({"basedOn":"2018-01-01T00:00:00Z","points":2,"modelMae":"x","naiveMae":1,"ratio":1})",
                                  R"({"points":2,"modelMae":1,"naiveMae":1,"ratio":1})"}) {
    const std::string object = R"({"apiVersion":"metrics.kinformer.io/v1","kind":"MetricSeries","metadata":{"name":"a","namespace":"metrics","resourceVersion":"3"},"spec":{"intervalSeconds":3600,"points":[]},"status":{"forecast":{"model":"m","basedOn":"2018-01-01T00:00:00Z","points":[],"lastScore":)" +
                               score + "}}}";
    auto parsed = kinformer::Object::parse(object);
    REQUIRE(parsed);
    INFO(score);
    CHECK_FALSE(fc::MetricSeries::decode(*parsed.value()));
  }
  // A forecast point a million years after its basis (the old code built every step: 35 GB): the same hour of the
  // last day, found from one day of naive forecast.
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back(i);
  auto s = hourly(values);
  const std::int64_t far = t0 + 23 * hour + 1000000LL * 365 * 24 * hour;
  auto naive = fc::naive_last_day(s, t0 + 23 * hour, {far});
  REQUIRE(naive.size() == 1);
  CHECK(naive[0].value == (1000000LL * 365 * 24 - 1) % 24);
}
