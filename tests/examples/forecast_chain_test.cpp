// The forecast chain (examples/forecasting/forecast_chain.hpp) in-process (through
// examples/forecasting/forecast_stack.hpp), against
// an embedded API server over loopback HTTP and the trained etth1_s_24 model: what
// reaches the forecaster and what the writer puts into status.
#include "examples/forecasting/forecast_chain.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>

#include "examples/forecasting/forecast_stack.hpp"
#include "examples/forecasting/series_api.hpp"
#include "tests/support/eventually.hpp"

namespace fc = kinformer::forecasting;
using kinformer::testing::eventually;
using namespace std::chrono_literals;

namespace {

const std::string model_prefix = std::string(KINFORMER_SOURCE_DIR) + "/models/weights/etth1_s_24";
const std::string ns = "metrics";
constexpr std::chrono::milliseconds chain_deadline = 60s;  // a forecast runs the model under a loaded CI
constexpr std::int64_t start = 1467331200;  // 2016-07-01T00:00:00Z

std::vector<fc::MetricPoint> hourly(int n, std::int64_t from = start) {
  std::vector<fc::MetricPoint> points;
  for (int i = 0; i < n; ++i) points.push_back({from + i * 3600, 20.0 + 5.0 * std::sin(i * 0.26)});
  return points;
}

/// An embedded server and a ForecastStack (inference actor, informer, chain) on it.
struct ChainFixture {
  std::unique_ptr<kinformer::apiserver::Server> server;
  std::unique_ptr<fc::ForecastStack> stack;
  std::mutex mu;
  std::vector<fc::WrittenForecast> written;  // guarded by mu
  std::vector<std::string> errors;           // guarded by mu

  ChainFixture() {
    auto started = fc::start_embedded_server();
    REQUIRE(started);
    server = std::move(started).value();
    fc::StackOptions options;
    options.server = server->url();
    options.namespace_ = ns;
    options.model = "h24";
    options.config_path = model_prefix + ".json";
    options.weights_path = model_prefix + ".safetensors";
    options.scaler_path = model_prefix + ".scaler.json";
    options.backend = "onednn";
    options.quiet = true;
    options.on_written = [this](const fc::WrittenForecast& w) {
      std::lock_guard<std::mutex> lock(mu);
      written.push_back(w);
    };
    options.on_error = [this](const std::string& why) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(why);
    };
    auto made = fc::ForecastStack::start(options);
    if (!made) FAIL("the forecast stack did not start: " << made.error().to_string());
    stack = std::move(made).value();
  }
  ~ChainFixture() {
    stack.reset();
    (void)server->stop();
  }
  const fc::ChainStats& stats() const { return stack->stats(); }
  /// The forecasts written for the series `name` so far.
  std::size_t written_for(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    return static_cast<std::size_t>(std::count_if(written.begin(), written.end(), [&](const fc::WrittenForecast& w) {
      return w.series && w.series->name == name;
    }));
  }
  /// Creates the series `name` with a full window and waits for its forecast: every
  /// change to the series before it has then passed the whole chain, whose hops keep
  /// the informer's order (actors/processor.hpp "Routing").
  void forecast_marker(const std::string& name) {
    REQUIRE(fc::call(stack->client(), "POST", fc::series_collection_path(ns),
                     fc::new_series_body(ns, name, "temperature", "°C", 3600, hourly(96))));
    REQUIRE(eventually([&] { return written_for(name) == 1; },
                       "the marker series " + name + "'s forecast", chain_deadline));
  }
  std::size_t error_count() {
    std::lock_guard<std::mutex> lock(mu);
    return errors.size();
  }
  fc::MetricSeries stored(const std::string& name) {
    auto got = fc::call(stack->client(), "GET", fc::series_path(ns, name));
    REQUIRE(got);
    auto object = kinformer::Object::parse(got->body);
    REQUIRE(object);
    auto series = fc::MetricSeries::decode(*object.value());
    REQUIRE(series);
    return series.value();
  }
  void append(const std::string& name, const std::vector<fc::MetricPoint>& points, std::size_t drop) {
    REQUIRE(fc::call(stack->client(), "PATCH", fc::series_path(ns, name),
                     fc::append_points_patch(points, drop), "application/json-patch+json"));
  }
};

}  // namespace

TEST_CASE_METHOD(ChainFixture,
                 "a series is forecast once its window is full and the forecast lands in its status",
                 "[forecast_chain][integration]") {
  auto points = hourly(95);
  REQUIRE(fc::call(stack->client(), "POST", fc::series_collection_path(ns),
                   fc::new_series_body(ns, "a", "temperature", "°C", 3600, points)));
  // One point short of a window: the forecaster's predicate keeps it away.
  forecast_marker("after-short");
  CHECK(written_for("a") == 0);
  CHECK(*stats().windows == 1);  // the marker's

  const auto next = hourly(1, points.back().time + 3600);
  append("a", next, 0);
  REQUIRE(eventually([&] { return written_for("a") == 1; },
                     "the first forecast to be written into status", chain_deadline));
  auto series = stored("a");
  REQUIRE(series.forecast);
  CHECK(series.forecast->model == "h24");
  CHECK(series.forecast->based_on == next.back().time);
  REQUIRE(series.forecast->points.size() == 24);
  CHECK(series.forecast->points.front().time == next.back().time + 3600);
  for (const auto& p : series.forecast->points) CHECK(std::isfinite(p.value));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(written.back().scaled.values.size() == 24);
    CHECK(written.back().forecast.points[0].value == series.forecast->points[0].value);  // what status holds
  }

  // The writer's own status write changes no generation: no second forecast (the
  // marker is created after that write, so its event comes after the write's).
  forecast_marker("after-status");
  CHECK(written_for("a") == 1);
  CHECK(*stats().forecasts == 3);  // a's and the two markers'

  // Each appended point (dropping the oldest) gives one more forecast, from that point.
  append("a", hourly(1, next.back().time + 3600), 1);
  REQUIRE(eventually([&] { return written_for("a") == 2; },
                     "the second forecast to be written into status", chain_deadline));
  CHECK(stored("a").forecast->based_on == next.back().time + 3600);
  CHECK(stored("a").points.size() == 96);
  CHECK(error_count() == 0);
}

TEST_CASE_METHOD(ChainFixture, "a window with a gap is reported and never forecast",
                 "[forecast_chain][integration]") {
  auto points = hourly(95);
  points.push_back({points.back().time + 7200, 20.0});  // a missing hour
  REQUIRE(fc::call(stack->client(), "POST", fc::series_collection_path(ns),
                   fc::new_series_body(ns, "gappy", "temperature", "°C", 3600, points)));
  REQUIRE(eventually([&] { return error_count() == 1; }, "the window builder to report the gap", chain_deadline));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(errors[0].find("a gap before") != std::string::npos);
  }
  forecast_marker("after-gap");
  CHECK(written_for("gappy") == 0);
  CHECK_FALSE(stored("gappy").forecast);
}
