// examples/forecast_pipeline.cpp
//
// MetricSeries forecasts through a handler chain. The program keeps a few
// synthetic hourly temperature series as MetricSeries objects on an API server
// (its own embedded one, or --server URL started with `kinformer apiserver
// --resource metrics.kinformer.io/v1/MetricSeries/metricseries`), appends a point
// to each every --period-ms, and an informer over HTTP runs the forecasting chain
// on every change (examples/forecasting/forecast_chain.hpp): window builder →
// forecaster (asks the batched inference actor, answers through a response
// promise; only series with a full window) → status writer (PATCHes the forecast
// into .status over HTTP). It prints each forecast as it is written and, at the
// end, writes one SVG chart per series (history + forecast) into --svg-dir.
//
//   build/bin/forecast_pipeline --duration 8
//   build/bin/forecast_pipeline --server http://127.0.0.1:8080 --svg-dir /tmp/plots
//
// Exit code 0 when forecasts were written into status, 1 otherwise, 2 on bad options.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
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
#include "models/openmp_env.hpp"

namespace {

namespace fc = kinformer::forecasting;
using namespace std::chrono_literals;

constexpr const char* usage =
    "usage: forecast_pipeline [--server URL] [--duration SECONDS] [--period-ms MS] [--series N]\n"
    "                         [--svg-dir DIR] [--model PREFIX] [--backend auto|onednn|reference|cuda]\n"
    "  --server: an API server serving metrics.kinformer.io/v1/MetricSeries/metricseries\n"
    "            (default: an embedded one on a free loopback port)\n"
    "  --duration: seconds of feeding points (default 6); --period-ms: between points (default 150)\n"
    "  --series: how many series (1..26, default 3); --svg-dir: where the charts go (default "
    "forecast_plots)\n"
    "  --model: PREFIX.json, PREFIX.safetensors and PREFIX.scaler.json (default the trained etth1_s_24)\n";

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
  std::string server, svg_dir = "forecast_plots", model = KINFORMER_DEFAULT_MODEL, backend = "auto";
  double duration_s = 6;
  long period_ms = 150;
  long series = 3;
};

bool parse(int argc, char** argv, Options& o) {
  std::map<std::string, std::string> flags;
  if (!fc::parse_flags(argc, argv,
                       {"server", "svg-dir", "model", "backend", "duration", "period-ms", "series"}, flags))
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
  return number("duration", o.duration_s) && number("period-ms", o.period_ms) && number("series", o.series) &&
         o.duration_s > 0 && o.duration_s <= 3600 && o.period_ms >= 1 && o.period_ms <= 60000 &&
         o.series >= 1 && o.series <= 26;
}

// A synthetic hourly temperature: a daily cycle, a slow drift and noise; seeded, so
// every run feeds the same points.
class SyntheticSeries {
 public:
  SyntheticSeries(int index, std::int64_t start)
      : rng_(static_cast<std::uint32_t>(1000 + index)),
        time_(start),
        base_(12.0 + 4.0 * index),
        amplitude_(3.0 + 1.5 * (index % 3)),
        phase_(index * 2.1),
        drift_(index % 2 ? 0.02 : -0.015) {}
  fc::MetricPoint next() {
    const double hour = static_cast<double>(step_++);
    const double value =
        base_ + drift_ * hour + amplitude_ * std::sin(2 * M_PI * hour / 24.0 + phase_) + noise_(rng_);
    fc::MetricPoint point{time_, std::round(value * 1000) / 1000};
    time_ += 3600;
    return point;
  }

 private:
  std::mt19937 rng_;
  std::normal_distribution<double> noise_{0.0, 0.35};
  std::int64_t time_;
  double base_, amplitude_, phase_, drift_;
  long step_ = 0;
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
  if (argc == 2 && std::string_view(argv[1]) == "--help") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "forecast_pipeline: bad options\n%s", usage);
    return 2;
  }
  sigset_t stop_signals;  // blocked before any thread starts: only the feeding loop takes them
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

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

  // Each series starts 4 points short of a window: no forecast until its window is full.
  const std::int64_t start = 1793491200;  // 2026-11-01T00:00:00Z
  std::vector<SyntheticSeries> feeds;
  std::vector<std::string> names;
  for (int i = 0; i < o.series; ++i) {
    feeds.emplace_back(i, start);
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
    const timespec period{o.period_ms / 1000, (o.period_ms % 1000) * 1000000};
    if (sigtimedwait(&stop_signals, nullptr, &period) > 0) interrupted = true;
    for (int i = 0; i < o.series && !interrupted; ++i) {
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

  // One chart per series, from the objects as the API server holds them now.
  ::mkdir(o.svg_dir.c_str(), 0755);
  for (const auto& name : names) {
    auto got = fc::call(client, "GET", fc::series_path(ns, name), "");
    if (!got) continue;
    auto object = kinformer::Object::parse(got->body);
    if (!object) continue;
    auto series = fc::MetricSeries::decode(*object.value());
    if (!series) continue;
    const std::string path = o.svg_dir + "/" + name + ".svg";
    if (auto written = fc::write_svg(path, series.value()); !written)
      say("error: " + written.error().message);
    else
      say("wrote " + path + " (" + std::to_string(series->points.size()) + " points" +
          (series->forecast ? ", forecast from " + fc::format_time(series->forecast->based_on)
                            : ", no forecast") +
          ")");
  }
  if (embedded) (void)embedded->stop();
  return *stats.written > 0 ? 0 : 1;
}
