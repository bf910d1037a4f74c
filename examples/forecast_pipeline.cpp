// examples/forecast_pipeline.cpp
//
// MetricSeries forecasts through a handler chain. The program keeps a few
// hourly oil-temperature series (replayed from the ETT CSV, each from its own days of
// the test split) as MetricSeries objects on an API server
// (its own embedded one, or --server URL started with `kinformer apiserver
// --resource metrics.kinformer.io/v1/MetricSeries/metricseries`), appends a point
// to each every --period-ms, and an informer over HTTP runs the forecasting chain
// on every change (examples/forecasting/forecast_chain.hpp): window builder →
// forecaster (asks the batched inference actor, answers through a response
// promise; only series with a full window) → status writer (PATCHes the forecast
// into .status over HTTP). It prints each forecast as it is written and, at the
// end, writes one SVG chart per series (history, forecast, the naive forecast and the
// values that actually came) into --svg-dir.
//
//   build/bin/forecast_pipeline --duration 8
//   build/bin/forecast_pipeline --server http://127.0.0.1:8080 --svg-dir /tmp/plots
//
// Exit code 0 when forecasts were written into status, 1 otherwise, 2 on bad options.
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "apiserver/server.hpp"
#include "examples/forecasting/forecast_plot.hpp"
#include "examples/forecasting/forecast_stack.hpp"
#include "examples/forecasting/metric_series.hpp"
#include "examples/forecasting/series_api.hpp"
#include "models/ett_dataset.hpp"
#include "models/model_error.hpp"
#include "models/openmp_env.hpp"
#include "runtime/help_option.hpp"
#include "runtime/stop_signals.hpp"

namespace {

namespace fc = kinformer::forecasting;
using namespace std::chrono_literals;

constexpr const char* usage =
    "usage: forecast_pipeline [--server URL] [--duration SECONDS] [--period-ms MS] [--series N]\n"
    "                         [--svg-dir DIR] [--model PREFIX] [--backend auto|onednn|reference|cuda] [--data CSV]\n"
    "  --server: an API server serving metrics.kinformer.io/v1/MetricSeries/metricseries\n"
    "            (default: an embedded one on a free loopback port)\n"
    "  --duration: seconds of feeding points (default 6); --period-ms: between points (default 150)\n"
    "  --series: how many series (1..26, default 3); --svg-dir: where the charts go (default "
    "forecast_plots)\n"
    "  --model: PREFIX.json, PREFIX.safetensors and PREFIX.scaler.json (default the trained etth1_s_24)\n"
    "  --data: the ETT CSV whose target column (the scaler's, OT) the series replay, each from its own\n"
    "          week of the test split (default ../shared/data/ett/ETTh1.csv beside the source tree)\n";

const auto started = std::chrono::steady_clock::now();
std::mutex out_mu;

void say(const std::string& line) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
          .count();
  std::lock_guard<std::mutex> lock(out_mu);
  std::printf("[%6lld ms] %s\n", static_cast<long long>(ms), line.c_str());
  std::fflush(stdout);
}

struct Options {
  std::string server, svg_dir = "forecast_plots", model = KINFORMER_DEFAULT_MODEL, backend = "auto",
              data = KINFORMER_DEFAULT_ETT_CSV;
  double duration_s = 6;
  long period_ms = 150;
  long series = 3;
};

bool parse(int argc, char** argv, Options& o) {
  std::map<std::string, std::string> flags;
  if (!fc::parse_flags(argc, argv,
                       {"server", "svg-dir", "model", "backend", "duration", "period-ms", "series", "data"}, flags))
    return false;
  auto number = [&](const char* name, auto& into) {
    if (!flags.count(name)) return true;
    char* end = nullptr;
    into = static_cast<std::decay_t<decltype(into)>>(std::strtod(flags[name].c_str(), &end));
    return *end == '\0';
  };
  if (flags.count("server")) o.server = flags["server"];
  if (flags.count("svg-dir")) o.svg_dir = flags["svg-dir"];
  if (flags.count("model")) o.model = flags["model"];
  if (flags.count("backend")) o.backend = flags["backend"];
  if (flags.count("data")) o.data = flags["data"];
  return number("duration", o.duration_s) && number("period-ms", o.period_ms) && number("series", o.series) &&
         o.duration_s > 0 && o.duration_s <= 3600 && o.period_ms >= 1 && o.period_ms <= 60000 &&
         o.series >= 1 && o.series <= 26;
}

// A replay of one ETT column from a CSV read in place (CC BY-ND: never copied), starting at
// `first_row`: the model's own domain, so the chart shows a real forecast, and the rows after
// the last one fed are the values that actually came.
class EttFeed {
 public:
  EttFeed(std::shared_ptr<const kinformer::models::EttTable> table, int column, std::size_t first_row)
      : table_(std::move(table)), column_(column), first_(first_row), row_(first_row) {}
  bool has_next() const { return row_ < table_->rows(); }
  fc::MetricPoint next() { return at(row_++); }
  // The `n` rows after time `t`, fed or not (fewer at the end of the file).
  std::vector<fc::MetricPoint> after(std::int64_t t, std::size_t n) const {
    std::vector<fc::MetricPoint> out;
    for (std::size_t r = first_; r < table_->rows() && out.size() < n; ++r)
      if (auto p = at(r); p.time > t) out.push_back(p);
    return out;
  }

 private:
  fc::MetricPoint at(std::size_t row) const {
    return {fc::parse_time(table_->timestamps[row]).value(),
            table_->values[row * table_->columns.size() + static_cast<std::size_t>(column_)]};
  }
  std::shared_ptr<const kinformer::models::EttTable> table_;
  int column_;
  std::size_t first_, row_;
};

std::string describe(const fc::WrittenForecast& w) {
  const auto& points = w.forecast.points;
  double lo = points.front().value, hi = lo;
  for (const auto& p : points) lo = std::min(lo, p.value), hi = std::max(hi, p.value);
  char text[256];
  std::snprintf(text, sizeof text, "forecast %s from %s: next %zu h %.1f -> %.1f %s (min %.1f, max %.1f)",
                w.series->key.c_str(), fc::format_time(w.forecast.based_on).c_str(), points.size(),
                points.front().value, points.back().value, w.series->unit.c_str(), lo, hi);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  kinformer::models::reexec_with_passive_wait_policy(argv);
  Options o;
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "forecast_pipeline: bad options\n%s", usage);
    return 2;
  }
  const kinformer::StopSignals stop_signals;  // before any thread starts: only the feeding loop takes them

  // The API server: embedded unless --server.
  std::unique_ptr<kinformer::apiserver::Server> embedded;
  if (o.server.empty()) {
    auto server = fc::start_embedded_server();
    if (!server) {
      std::fprintf(stderr, "forecast_pipeline: %s\n", server.error().message.c_str());
      return 1;
    }
    embedded = std::move(server).value();
    o.server = embedded->url();
    say("embedded API server on " + o.server + " serving MetricSeries");
  }
  const std::string ns = "metrics";
  fc::StackOptions stack_options;
  stack_options.server = o.server;
  stack_options.namespace_ = ns;
  stack_options.model = o.model.substr(o.model.find_last_of('/') + 1);
  stack_options.config_path = o.model + ".json";
  stack_options.weights_path = o.model + ".safetensors";
  stack_options.scaler_path = o.model + ".scaler.json";
  stack_options.backend = o.backend;
  stack_options.on_written = [](const fc::WrittenForecast& w) { say(describe(w)); };
  stack_options.on_error = [](const std::string& why) { say("error: " + why); };
  auto stack = fc::ForecastStack::start(stack_options);
  if (!stack) {
    std::fprintf(stderr, "forecast_pipeline: %s\n", stack.error().message.c_str());
    return 1;
  }
  auto& client = (*stack)->client();
  const fc::WindowShape& shape = (*stack)->shape();

  // Each series replays the scaler's target column from its own week of the test split, and
  // starts 4 points short of a window: no forecast until its window is full.
  std::shared_ptr<const kinformer::models::EttTable> table;
  int column = -1;
  std::size_t test_start = 0;
  try {
    table = std::make_shared<const kinformer::models::EttTable>(kinformer::models::read_ett_csv(o.data));
    const auto target = kinformer::models::read_ett_scaler(o.model + ".scaler.json").target;
    for (std::size_t c = 0; c < table->columns.size(); ++c)
      if (table->columns[c] == target) column = static_cast<int>(c);
    if (column < 0) throw kinformer::models::ModelError("no column '" + target + "' in " + o.data);
    test_start = static_cast<std::size_t>(kinformer::models::split_rows(*table, kinformer::models::EttSplit::test, 0).first);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "forecast_pipeline: %s\n", e.what());
    return 2;
  }
  std::vector<EttFeed> feeds;
  std::vector<std::string> names;
  for (int i = 0; i < o.series; ++i) {
    feeds.emplace_back(table, column, test_start + static_cast<std::size_t>(i) * 4 * 24);
    names.push_back(std::string("oil-temp-") + static_cast<char>('a' + i));
    std::vector<fc::MetricPoint> points;
    for (int k = 0; k < shape.seq_len - 4; ++k) points.push_back(feeds.back().next());
    auto created =
        fc::call(client, "POST", fc::series_collection_path(ns),
                 fc::new_series_body(ns, names.back(), "transformer oil temperature", "°C", 3600, points));
    if (!created && created.error().message.find("409") != std::string::npos) {  // left from an earlier run
      (void)fc::call(client, "DELETE", fc::series_path(ns, names.back()), "");
      created =
          fc::call(client, "POST", fc::series_collection_path(ns),
                   fc::new_series_body(ns, names.back(), "transformer oil temperature", "°C", 3600, points));
    }
    if (!created) {
      std::fprintf(stderr, "forecast_pipeline: %s\n", created.error().message.c_str());
      return 1;
    }
    say("created " + ns + "/" + names.back() + " with " + std::to_string(points.size()) +
        " hourly points (a window is " + std::to_string(shape.seq_len) + ")");
  }
  const auto feed_until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(o.duration_s * 1000));
  long appended = 0;
  bool interrupted = false;
  while (!interrupted && std::chrono::steady_clock::now() < feed_until) {
    if (stop_signals.wait_for(std::chrono::milliseconds(o.period_ms))) interrupted = true;
    for (int i = 0; i < o.series && !interrupted; ++i) {
      if (!feeds[static_cast<std::size_t>(i)].has_next()) continue;  // the file ended for this series
      // Keep the last seq_len points: drop the oldest once the window is full.
      const std::size_t drop = shape.seq_len - 4 + appended >= shape.seq_len ? 1 : 0;
      auto patched = fc::call(client, "PATCH", fc::series_path(ns, names[static_cast<std::size_t>(i)]),
                              fc::append_points_patch({feeds[static_cast<std::size_t>(i)].next()}, drop),
                              "application/json-patch+json");
      if (!patched) say("error: " + patched.error().message);
    }
    ++appended;
  }
  appended *= o.series;
  std::this_thread::sleep_for(500ms);  // the last forecasts' round trip
  (*stack)->stop();

  const auto& stats = (*stack)->stats();
  say("appended " + std::to_string(appended) + " points; windows built " + std::to_string(*stats.windows) +
      ", forecasts " + std::to_string(*stats.forecasts) + ", written into status " +
      std::to_string(*stats.written) + ", errors " + std::to_string(*stats.errors));

  // One chart per series, from the objects as the API server holds them now, with the values
  // that actually came over the forecast's horizon.
  ::mkdir(o.svg_dir.c_str(), 0755);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    auto got = fc::call(client, "GET", fc::series_path(ns, name), "");
    if (!got) continue;
    auto object = kinformer::Object::parse(got->body);
    if (!object) continue;
    auto series = fc::MetricSeries::decode(*object.value());
    if (!series) continue;
    const std::string path = o.svg_dir + "/" + name + ".svg";
    const auto actual = series->forecast ? feeds[i].after(series->forecast->based_on, series->forecast->points.size())
                                         : std::vector<fc::MetricPoint>{};
    if (auto written = fc::write_svg(path, series.value(), actual); !written)
      say("error: " + written.error().message);
    else
      say("wrote " + path + " (" + std::to_string(series->points.size()) + " points" +
          (series->forecast ? ", forecast from " + fc::format_time(series->forecast->based_on) +
                                  (series->forecast->last_score
                                       ? ", last score: MAE " + std::to_string(series->forecast->last_score->model_mae) +
                                             " vs naive " + std::to_string(series->forecast->last_score->naive_mae)
                                       : "")
                            : ", no forecast") +
          ")");
  }
  if (embedded) (void)embedded->stop();
  return *stats.written > 0 ? 0 : 1;
}
