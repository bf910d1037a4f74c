// examples/ett_replay.cpp
//
// ETTh1 replayed through the whole system. The test split's windows (the official
// borders and drop_last of `kinformer eval-ett`, informer-model.md §6) are cut into
// --series MetricSeries objects on an embedded API server; each starts with its
// first window's points and then gets one point per update (a JSON Patch that
// appends the next row and drops the oldest). An informer over HTTP runs the
// forecast chain on every update (examples/forecasting/forecast_chain.hpp: window
// builder → forecaster → batched inference actor → status writer), and the next
// point of a series goes out once its forecast is in status — so every window is
// forecast exactly once and the series run side by side, which is what lets the
// inference actor batch them.
//
// The last line is `mse=X mae=Y`, the scaled test MSE/MAE over the same windows,
// summed in the same order as eval-ett; with the same model and backend the two
// print the same digits (the pipeline must not change the numbers: each forward
// pass reseeds the ProbSparse sampler, so a window's forecast does not depend on
// its batch). Before it: the windows/s achieved and the inference actor's mean
// batch size. A progress bar goes to stderr.
//
//   build/bin/ett_replay --data ../shared/data/ett/ETTh1.csv --config models/weights/etth1_s_24.json
//       --weights models/weights/etth1_s_24.safetensors --scaler models/weights/etth1_s_24.scaler.json
//
// Exit code 0 when every window was forecast, 1 on any failure, 2 on bad options.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "examples/forecasting/forecast_plot.hpp"
#include "examples/forecasting/forecast_stack.hpp"
#include "examples/forecasting/metric_series.hpp"
#include "examples/forecasting/series_api.hpp"
#include "models/ett_dataset.hpp"
#include "models/informer_config.hpp"
#include "models/openmp_env.hpp"
#include "runtime/help_option.hpp"

namespace {

namespace fc = kinformer::forecasting;
namespace models = kinformer::models;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* usage =
    "usage: ett_replay --data ETTh1.csv --config C.json --weights W.safetensors --scaler S.json\n"
    "                  [--series N] [--backend onednn|reference|cuda|auto] [--batch 32] [--svg FILE]\n"
    "  replays the test split through MetricSeries on an embedded API server and the forecast chain;\n"
    "  the last line is `mse=X mae=Y` (scaled, drop_last batches of --batch, as `kinformer eval-ett`).\n"
    "  --series: how many series replay side by side (1..256, default 32); --backend as eval-ett (onednn).\n"
    "  --svg: a chart of the first series as the replay left it (its last window, forecast, the naive\n"
    "         forecast and the values that actually came).\n";

constexpr std::size_t batch_default = 32;
constexpr auto stall_limit = 120s;  // no forecast for this long: something is stuck, give up

struct Options {
  std::string data, config, weights, scaler, backend = "onednn", svg;
  long series = 32;
  long batch = static_cast<long>(batch_default);
};

bool parse(int argc, char** argv, Options& o) {
  std::map<std::string, std::string> flags;
  if (!fc::parse_flags(argc, argv,
                       {"data", "config", "weights", "scaler", "backend", "series", "batch", "svg"}, flags))
    return false;
  o.data = flags["data"];
  o.config = flags["config"];
  o.weights = flags["weights"];
  o.scaler = flags["scaler"];
  if (flags.count("backend")) o.backend = flags["backend"];
  if (flags.count("svg")) o.svg = flags["svg"];
  for (auto [name, into] : {std::pair{"series", &o.series}, std::pair{"batch", &o.batch}}) {
    if (!flags.count(name)) continue;
    char* end = nullptr;
    *into = std::strtol(flags[name].c_str(), &end, 10);
    if (*end != '\0') return false;
  }
  return !o.data.empty() && !o.config.empty() && !o.weights.empty() && !o.scaler.empty() && o.series >= 1 &&
         o.series <= 256 && o.batch >= 1 && o.batch <= 4096;
}

// One series' share of the windows: [first, end), `next` the one in flight.
struct Lane {
  std::string name;
  long first = 0, end = 0;
  long next = 0;  // guarded by Progress::mu (the writer's callback reads it)
};

// What the writer's callback and the main thread share.
struct Progress {
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::size_t> ready;                             // lanes whose forecast is in; guarded by mu
  std::vector<std::optional<std::vector<float>>> forecasts;  // by window; guarded by mu
  long done = 0;                                             // guarded by mu
  std::string failure;                                       // first failure; guarded by mu

  void fail(std::string why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = std::move(why);
    changed.notify_all();
  }
};

void progress_bar(long done, long total, double seconds) {
  const int width = 40;
  const int filled =
      total ? static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * width) : 0;
  std::fprintf(stderr, "\rett_replay [%.*s%*s] %ld/%ld windows %.0f/s", filled,
               "########################################", width - filled, "", done, total,
               seconds > 0 ? static_cast<double>(done) / seconds : 0.0);
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  models::reexec_with_passive_wait_policy(argv);
  Options o;
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "ett_replay: bad or missing options\n%s", usage);
    return 2;
  }

  // The data and the model, as eval-ett reads them.
  models::InformerConfig config;
  models::EttTable table;
  fc::WindowShape shape;
  std::int64_t split_first = 0, split_end = 0;
  int target = -1;
  try {
    config = models::load_config(o.config);
    auto scaler = models::read_ett_scaler(o.scaler);
    if (scaler.features != "S")
      throw std::runtime_error("the scaler says features " + scaler.features +
                               "; ett_replay replays one metric (features S)");
    std::string model = o.config.substr(o.config.find_last_of('/') + 1);  // etth1_s_24.json -> etth1_s_24
    model = model.substr(0, model.rfind(".json"));
    auto made = fc::window_shape(model, config, scaler);
    if (!made) throw std::runtime_error(made.error().message);
    shape = made.value();
    table = models::read_ett_csv(o.data);
    for (std::size_t i = 0; i < table.columns.size(); ++i)
      if (table.columns[i] == scaler.target) target = static_cast<int>(i);
    if (target < 0) throw std::runtime_error("target column '" + scaler.target + "' is not in " + o.data);
    std::tie(split_first, split_end) = models::split_rows(table, models::EttSplit::test, shape.seq_len);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ett_replay: %s\n", e.what());
    return 1;
  }
  const long count = static_cast<long>(split_end - split_first) - shape.seq_len - shape.pred_len + 1;
  const long used = count / o.batch * o.batch;  // drop_last
  if (used < 1) {
    std::fprintf(stderr, "ett_replay: the test split has %ld windows, fewer than one batch of %ld\n", count,
                 o.batch);
    return 1;
  }
  const std::size_t width = table.columns.size();
  auto row_point = [&](std::int64_t row) -> kinformer::Result<fc::MetricPoint> {
    auto time = fc::parse_time(table.timestamps[static_cast<std::size_t>(row)]);
    if (!time) return time.error();
    return fc::MetricPoint{
        time.value(), table.values[static_cast<std::size_t>(row) * width + static_cast<std::size_t>(target)]};
  };
  // Window w's encoder rows are split_first + w ... + seq_len − 1; its truth the pred_len rows after.
  auto window_row = [&](long w) { return split_first + w; };

  auto server = fc::start_embedded_server();
  if (!server) {
    std::fprintf(stderr, "ett_replay: %s\n", server.error().message.c_str());
    return 1;
  }
  const std::string ns = "ett";

  // Lanes: contiguous shares of the windows, one MetricSeries each.
  const long lanes_n = std::min(o.series, used);
  std::vector<Lane> lanes;
  std::map<std::string, std::size_t> lane_of;  // series key -> lane
  for (long j = 0; j < lanes_n; ++j) {
    Lane lane;
    lane.first = used * j / lanes_n;
    lane.end = used * (j + 1) / lanes_n;
    lane.next = lane.first;
    char name[32];
    std::snprintf(name, sizeof name, "etth1-ot-%03ld", j);
    lane.name = name;
    lane_of[ns + "/" + lane.name] = lanes.size();
    lanes.push_back(lane);
  }

  Progress progress;
  progress.forecasts.resize(static_cast<std::size_t>(used));
  fc::StackOptions stack_options;
  stack_options.server = (*server)->url();
  stack_options.namespace_ = ns;
  stack_options.model = shape.model;
  stack_options.config_path = o.config;
  stack_options.weights_path = o.weights;
  stack_options.scaler_path = o.scaler;
  stack_options.backend = o.backend;
  stack_options.max_batch = static_cast<std::size_t>(o.batch);
  stack_options.on_error = [&progress](const std::string& why) { progress.fail(why); };
  // On the writer's thread: the forecast of the lane's window in flight is in status.
  stack_options.on_written = [&](const fc::WrittenForecast& w) {
    auto lane_at = lane_of.find(w.series->key);
    if (lane_at == lane_of.end()) return progress.fail("a forecast for an unknown series " + w.series->key);
    std::lock_guard<std::mutex> lock(progress.mu);
    const long window = lanes[lane_at->second].next;
    auto expected = row_point(window_row(window) + shape.seq_len - 1);
    auto& slot = progress.forecasts[static_cast<std::size_t>(window)];
    if (!expected || expected->time != w.forecast.based_on) {
      if (progress.failure.empty())
        progress.failure = w.series->key + ": a forecast from " + fc::format_time(w.forecast.based_on) +
                           ", expected one for window " + std::to_string(window);
    } else if (slot) {
      if (progress.failure.empty()) progress.failure = "window " + std::to_string(window) + " forecast twice";
    } else {
      slot = w.scaled.values;
      ++progress.done;
      progress.ready.push_back(lane_at->second);
    }
    progress.changed.notify_all();
  };
  auto stack = fc::ForecastStack::start(stack_options);
  if (!stack) {
    std::fprintf(stderr, "ett_replay: %s\n", stack.error().message.c_str());
    return 1;
  }
  auto& client = (*stack)->client();

  std::printf(
      "ett_replay: %s test split, %s, %d/%d/%d: %ld windows (of %ld, drop_last %ld) as %ld MetricSeries\n",
      o.data.c_str(), table.columns[static_cast<std::size_t>(target)].c_str(), shape.seq_len, shape.label_len,
      shape.pred_len, used, count, o.batch, lanes_n);
  std::fflush(stdout);
  const auto begin = Clock::now();
  for (auto& lane : lanes) {
    std::vector<fc::MetricPoint> points;
    for (std::int64_t r = window_row(lane.first); r < window_row(lane.first) + shape.seq_len; ++r) {
      auto point = row_point(r);
      if (!point) {
        std::fprintf(stderr, "ett_replay: row %lld: %s\n", static_cast<long long>(r),
                     point.error().message.c_str());
        return 1;
      }
      points.push_back(point.value());
    }
    auto created =
        fc::call(client, "POST", fc::series_collection_path(ns),
                 fc::new_series_body(ns, lane.name, "ETTh1 oil temperature, OT", "°C", 3600, points));
    if (!created) {
      std::fprintf(stderr, "ett_replay: %s\n", created.error().message.c_str());
      return 1;
    }
  }

  // Advance each lane as its forecast comes in: its next window is one more point.
  auto last_change = Clock::now();
  auto last_bar = Clock::time_point{};
  long done = 0;
  std::string failure;
  for (;;) {
    std::deque<std::size_t> ready;
    {
      std::unique_lock<std::mutex> lock(progress.mu);
      progress.changed.wait_for(lock, 200ms,
                                [&] { return !progress.ready.empty() || !progress.failure.empty(); });
      ready.swap(progress.ready);
      failure = progress.failure;
      if (progress.done != done) last_change = Clock::now();
      done = progress.done;
    }
    const auto now = Clock::now();
    if (now - last_bar > 250ms || done == used) {
      progress_bar(done, used, std::chrono::duration<double>(now - begin).count());
      last_bar = now;
    }
    if (!failure.empty() || done == used) break;
    if (now - last_change > stall_limit) {
      failure = "no forecast for " + std::to_string(stall_limit.count()) + " s: the pipeline is stuck";
      break;
    }
    for (std::size_t j : ready) {
      Lane& lane = lanes[j];
      long window = 0;
      {
        std::lock_guard<std::mutex> lock(progress.mu);
        window = ++lane.next;
      }
      if (window >= lane.end) continue;
      auto point = row_point(window_row(window) + shape.seq_len - 1);
      if (!point) {
        failure = point.error().message;
        break;
      }
      kinformer::http::Request request{"PATCH", fc::series_path(ns, lane.name),
                                       fc::append_points_patch({point.value()}, 1),
                                       "application/json-patch+json"};
      client.request(std::move(request),
                     [&progress, name = lane.name](kinformer::Result<kinformer::http::Response> r) {
                       if (!r)
                         progress.fail(name + ": appending a point failed: " + r.error().to_string());
                       else if (r->status / 100 != 2)
                         progress.fail(name + ": appending a point failed: HTTP " +
                                       std::to_string(r->status) + " " + r->body.substr(0, 300));
                     });
    }
    if (!failure.empty()) break;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  std::fputc('\n', stderr);

  // The inference actor's batches, then an orderly stop.
  double mean_batch = 0;
  std::uint64_t batches = 0;
  if (auto metrics = (*stack)->inference_metrics(); metrics) {
    std::uint64_t windows = 0;
    for (std::size_t n = 1; n < metrics->batch_sizes.size(); ++n) {
      batches += metrics->batch_sizes[n];
      windows += n * metrics->batch_sizes[n];
    }
    mean_batch = batches ? static_cast<double>(windows) / static_cast<double>(batches) : 0;
  } else {
    std::fprintf(stderr, "ett_replay: no inference metrics: %s\n", metrics.error().message.c_str());
  }
  (*stack)->stop();
  if (!o.svg.empty() && failure.empty()) {  // the first series as the API server holds it now
    auto got = fc::call(client, "GET", fc::series_path(ns, lanes.front().name));
    auto object =
        got ? kinformer::Object::parse(got->body) : kinformer::Result<kinformer::ObjectPtr>(got.error());
    auto series = object ? fc::MetricSeries::decode(*object.value())
                         : kinformer::Result<fc::MetricSeries>(object.error());
    // The future is known here: the chart also draws the values that came after the forecast's basis.
    std::vector<fc::MetricPoint> actual;
    if (series && series->forecast)
      for (std::size_t r = 0; r < table.rows() && actual.size() < series->forecast->points.size(); ++r)
        if (auto t = fc::parse_time(table.timestamps[r]); t && t.value() > series->forecast->based_on)
          actual.push_back({t.value(), table.values[r * width + static_cast<std::size_t>(target)]});
    auto written = series ? fc::write_svg(o.svg, series.value(), actual) : kinformer::Result<void>(series.error());
    if (!written) failure = "the chart: " + written.error().message;
  }
  (void)(*server)->stop();
  if (!failure.empty()) {
    std::fprintf(stderr, "ett_replay: %s (%ld of %ld windows forecast)\n", failure.c_str(), done, used);
    return 1;
  }

  // The metrics exactly as eval-ett sums them: window by window, step by step, in double.
  double squared = 0, absolute = 0;
  long n = 0;
  for (long w = 0; w < used; ++w) {
    const auto& forecast = *progress.forecasts[static_cast<std::size_t>(w)];
    for (int step = 0; step < shape.pred_len; ++step) {
      const std::size_t row = static_cast<std::size_t>(window_row(w) + shape.seq_len + step);
      const float truth = shape.scale(table.values[row * width + static_cast<std::size_t>(target)]);
      const double e = static_cast<double>(forecast[static_cast<std::size_t>(step)]) - truth;
      squared += e * e;
      absolute += std::fabs(e);
      ++n;
    }
  }
  std::printf(
      "ett_replay: %ld windows in %.1f s through API server, informer, chain and inference actor: "
      "windows_per_s=%.1f mean_batch=%.2f (%llu batches, backend %s)\n",
      used, seconds, static_cast<double>(used) / seconds, mean_batch,
      static_cast<unsigned long long>(batches), o.backend.c_str());
  std::printf("mse=%.6f mae=%.6f\n", squared / static_cast<double>(n), absolute / static_cast<double>(n));
  return 0;
}
