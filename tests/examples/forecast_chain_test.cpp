// The forecast chain (examples/forecasting/forecast_chain.hpp) in-process (through
// examples/forecasting/forecast_stack.hpp), against
// an embedded API server over loopback HTTP and the trained etth1_s_24 model: what
// reaches the forecaster and what the writer puts into status.
#include "examples/forecasting/forecast_chain.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "examples/forecasting/forecast_stack.hpp"
#include "examples/forecasting/series_api.hpp"

namespace fc = kinformer::forecasting;
using namespace std::chrono_literals;

namespace {

const std::string model_prefix = std::string(KINFORMER_SOURCE_DIR) + "/models/weights/etth1_s_24";
const std::string ns = "metrics";
constexpr std::int64_t start = 1467331200;  // 2016-07-01T00:00:00Z

/// Polls until `done`, or fails the test saying what it waited for.
template <class Pred>
bool wait_for(Pred done, const std::string& what, std::chrono::milliseconds deadline = 60s) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) {
      FAIL_CHECK("timed out waiting for " << what);
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

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
  std::size_t written_count() {
    std::lock_guard<std::mutex> lock(mu);
    return written.size();
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
  std::this_thread::sleep_for(1s);
  CHECK(written_count() == 0);
  CHECK(*stats().windows == 0);

  const auto next = hourly(1, points.back().time + 3600);
  append("a", next, 0);
  REQUIRE(wait_for([&] { return written_count() == 1; }, "the first forecast to be written into status"));
  auto series = stored("a");
  REQUIRE(series.forecast);
  CHECK(series.forecast->model == "h24");
  CHECK(series.forecast->based_on == next.back().time);
  REQUIRE(series.forecast->points.size() == 24);
  CHECK(series.forecast->points.front().time == next.back().time + 3600);
  for (const auto& p : series.forecast->points) CHECK(std::isfinite(p.value));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(written[0].scaled.values.size() == 24);
    CHECK(written[0].forecast.points[0].value == series.forecast->points[0].value);  // what status holds
  }

  // The writer's own status write changes no generation: no second forecast.
  std::this_thread::sleep_for(1s);
  CHECK(written_count() == 1);
  CHECK(*stats().forecasts == 1);

  // Each appended point (dropping the oldest) gives one more forecast, from that point.
  append("a", hourly(1, next.back().time + 3600), 1);
  REQUIRE(wait_for([&] { return written_count() == 2; }, "the second forecast to be written into status"));
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
  REQUIRE(wait_for([&] { return error_count() == 1; }, "the window builder to report the gap"));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(errors[0].find("a gap before") != std::string::npos);
  }
  std::this_thread::sleep_for(500ms);
  CHECK(written_count() == 0);
  CHECK_FALSE(stored("gappy").forecast);
}
