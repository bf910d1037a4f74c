// bench_inference: the inference actor (actors/inference.hpp) at saturation and
// under light load, with the trained ETTh1 model of models/weights/ (d_model 64,
// seq 96 / label 48 / pred 24, 1 channel) on the preferred backend.
//
//   {"bench":"inference_saturation",...,"requesters":R,"samples_per_s":..,"offline_samples_per_s":..,"ratio":..}
//     R requesters keep the actor saturated for --seconds: together they keep
//     2 x max_batch windows in flight (each ceil(2 x max_batch / R), sending the
//     next window on each answer). The baseline is direct backend calls at
//     max_batch in the same run. Ten rounds each run a direct slice and an actor
//     slice, in alternating order (drift on a shared machine hits both); ratio is
//     the median of the rounds' actor / direct ratios (ratio_min, ratio_max: the
//     spread), so that one slice disturbed by another process does not decide it.
//   {"bench":"inference_latency",...,"rate":..,"max_delay_ms":..,"batch_ms":..,"p50_ms":..,"p99_ms":..}
//     one request every 1/rate s, each from its own requester actor; latency from
//     the requester's send to its receipt of the answer (the requester's spawn is
//     the bench's, not the actor's: spawn_p99_ms shows it); batch_ms is the mean
//     model time per batch of that run, overhead_* and close_margin_ms the
//     actor's own overhead around a batch (InferenceMetrics).
//   Every line carries load1, the machine's 1-minute load average at its end.
//
// Options: `bench_inference --help` (the usage text below).
// --scheduler caf-default leaves CAF's scheduler as it is (2 threads), for comparison
// with actors::configure_scheduler (the default). --serial-max-batch:
// InferenceOptions::serial_max_batch (0: every batch on all OpenMP threads).
// Re-executes itself with OMP_WAIT_POLICY=PASSIVE unless the environment sets it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/errors.hpp"
#include "actors/inference.hpp"
#include "actors/scheduler.hpp"
#include "models/informer_weights.hpp"
#include "models/openmp_env.hpp"
#include "tests/support/forecast_windows.hpp"
#include "runtime/help_option.hpp"

namespace actors = kinformer::actors;
namespace models = kinformer::models;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

using Windows = std::shared_ptr<const std::vector<actors::ForecastRequest>>;

struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> completed{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<int> active{0};
  std::mutex mu;
  std::vector<double> latencies_ms;  // guarded by mu
  std::vector<double> spawn_ms;      // guarded by mu: from spawn to the requester's send
};

// A requester with `in_flight` windows outstanding: each answer sends the next window.
void requester(caf::event_based_actor* self, actors::InferenceActor inference, Windows windows,
               std::size_t first, int in_flight, std::shared_ptr<Shared> shared) {
  auto next = std::make_shared<std::size_t>(first);
  auto send_one = std::make_shared<std::function<void()>>();
  auto chains = std::make_shared<int>(in_flight);
  *send_one = [=] {
    if (shared->stop) {
      --shared->active;
      if (--*chains == 0) self->quit();
      return;
    }
    auto w = (*windows)[(*next)++ % windows->size()];
    w.mark_sent();
    self->request(inference, caf::infinite, actors::forecast_atom::value, std::move(w))
        .then(
            [=](const actors::ForecastReply&) {
              ++shared->completed;
              (*send_one)();
            },
            [=](caf::error&) {
              ++shared->errors;
              (*send_one)();
            });
  };
  for (int i = 0; i < in_flight; ++i) {
    ++shared->active;
    (*send_one)();
  }
}

double load1() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

actors::InferenceMetrics metrics_of(caf::actor_system& sys, const actors::InferenceActor& a) {
  caf::scoped_actor self{sys};
  actors::InferenceMetrics m;
  self->request(a, 30s, actors::metrics_atom::value)
      .receive([&](const actors::InferenceMetrics& x) { m = x; }, [&](const caf::error&) {});
  return m;
}

double offline_samples_per_s(models::Backend& backend, const std::vector<actors::ForecastRequest>& windows,
                             const models::InformerConfig& c, std::size_t batch, double seconds) {
  std::vector<actors::ForecastRequest> chosen(windows.begin(), windows.begin() + static_cast<long>(batch));
  auto s = kinformer::testing::stack(chosen, c);
  models::Tensor out;
  backend.forecast({s.x_enc, s.x_mark_enc, s.x_dec, s.x_mark_dec}, out);  // warm-up: the plan
  uint64_t samples = 0;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    backend.forecast({s.x_enc, s.x_mark_enc, s.x_dec, s.x_mark_dec}, out);
    samples += batch;
  }
  return static_cast<double>(samples) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

constexpr const char* usage =
    "usage: bench_inference [--seconds 10] [--rate 50] [--max-delay-ms 5] [--precision fp32|bf16]\n"
    "                       [--only saturation|latency] [--scheduler kinformer|caf-default]\n"
    "                       [--serial-max-batch N]\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  models::reexec_with_passive_wait_policy(argv);
  double seconds = 10, rate = 50;
  const int rounds = 10;
  int max_delay_ms = 5;
  std::string precision = "fp32";
  std::string only;  // "saturation" or "latency": one part alone (profiling)
  std::string scheduler = "kinformer";
  int64_t serial_max_batch = actors::InferenceOptions{}.serial_max_batch;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--seconds")
      seconds = std::atof(v.c_str());
    else if (k == "--rate")
      rate = std::atof(v.c_str());
    else if (k == "--max-delay-ms")
      max_delay_ms = std::atoi(v.c_str());
    else if (k == "--precision" && (v == "fp32" || v == "bf16"))
      precision = v;
    else if (k == "--only" && (v == "saturation" || v == "latency"))
      only = v;
    else if (k == "--scheduler" && (v == "kinformer" || v == "caf-default"))
      scheduler = v;
    else if (k == "--serial-max-batch")
      serial_max_batch = std::atoll(v.c_str());
    else {
      std::fprintf(stderr, "bench_inference: unknown option %s\n%s", k.c_str(), usage);
      return 2;
    }
  }
  const std::string dir = std::string(KINFORMER_SOURCE_DIR) + "/models/weights/";
  auto config = models::load_config(dir + "etth1_s_24.json");
  auto weights = models::load_weights(dir + "etth1_s_24.safetensors", config);
  const auto prec = models::parse_precision(precision);
  const std::string backend_name = models::preferred_backend();
  auto windows_vec = std::make_shared<std::vector<actors::ForecastRequest>>();
  for (uint32_t i = 0; i < 256; ++i) windows_vec->push_back(kinformer::testing::window("h24", config, i + 1));
  Windows windows = windows_vec;

  caf::actor_system_config cfg;
  if (scheduler == "kinformer")
    actors::configure_scheduler(cfg);
  else
    cfg.set("scheduler.max-threads", 2);
  actors::register_errors(cfg);
  caf::actor_system sys{cfg};
  std::printf(
      "{\"bench\":\"setup\",\"model\":\"etth1_s_24\",\"d_model\":%d,\"seq_len\":%d,\"pred_len\":%d,"
      "\"backend\":\"%s\",\"precision\":\"%s\",\"omp_wait_policy_passive\":%s,\"caf_threads\":2,"
      "\"scheduler\":\"%s\",\"serial_max_batch\":%lld,\"load1\":%.2f}\n",
      config.d_model, config.seq_len, config.pred_len, backend_name.c_str(), precision.c_str(),
      models::passive_wait_policy() ? "true" : "false", scheduler.c_str(),
      static_cast<long long>(serial_max_batch), load1());
  std::fflush(stdout);
  auto offline_backend = models::make_backend(backend_name, config, weights, {prec});
  const std::size_t max_batch = 32;

  for (int requesters : {1, 8, 64}) {
    if (only == "latency") break;
    actors::InferenceOptions o;
    o.backend = backend_name;
    o.batching.max_batch = max_batch;
    o.batching.max_delay = std::chrono::milliseconds(max_delay_ms);
    o.batching.max_queue = 4096;
    o.serial_max_batch = serial_max_batch;
    o.quiet = true;
    auto inference = actors::spawn_inference(sys, {{"h24", config, weights, prec}}, o);
    if (!inference) {
      std::fprintf(stderr, "bench_inference: %s\n", inference.error().to_string().c_str());
      return 1;
    }
    // Rounds, each a direct-call slice and an actor slice in alternating order,
    // so that both see the same (shared, noisy) machine.
    const int in_flight = static_cast<int>((2 * max_batch + static_cast<std::size_t>(requesters) - 1) /
                                           static_cast<std::size_t>(requesters));
    double actor_samples = 0, actor_seconds = 0, offline_total = 0;
    std::vector<double> ratios;
    uint64_t errors = 0;
    for (int round = 0; round < rounds; ++round) {
      std::fprintf(stderr, "bench_inference: %d requesters, round %d ...\n", requesters, round + 1);
      const auto direct = [&] {
        return offline_samples_per_s(*offline_backend, *windows, config, max_batch, seconds / rounds / 2);
      };
      const double offline_before = round % 2 == 0 ? direct() : 0;
      auto shared = std::make_shared<Shared>();
      for (int r = 0; r < requesters; ++r)
        sys.spawn(requester, *inference, windows, static_cast<std::size_t>(r) * 3, in_flight, shared);
      std::this_thread::sleep_for(100ms);  // the pipeline fills (and, in round 1, plans are built)
      const uint64_t before = shared->completed;
      const auto start = Clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds / rounds / 2));
      const double done = static_cast<double>(shared->completed - before);
      const double took = std::chrono::duration<double>(Clock::now() - start).count();
      actor_samples += done;
      actor_seconds += took;
      shared->stop = true;
      while (shared->active > 0) std::this_thread::sleep_for(1ms);
      errors += shared->errors;
      const double offline = round % 2 == 0 ? offline_before : direct();
      offline_total += offline;
      ratios.push_back(done / took / offline);
    }
    auto m = metrics_of(sys, *inference);
    caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
    uint64_t batches = 0, windows_run = 0;
    for (std::size_t n = 1; n < m.batch_sizes.size(); ++n) {
      batches += m.batch_sizes[n];
      windows_run += n * m.batch_sizes[n];
    }
    const double actor_rate = actor_samples / actor_seconds;
    const double offline = offline_total / rounds;
    std::printf(
        "{\"bench\":\"inference_saturation\",\"backend\":\"%s\",\"precision\":\"%s\",\"requesters\":%d,"
        "\"samples_per_s\":%.1f,\"offline_samples_per_s\":%.1f,\"ratio\":%.3f,\"ratio_min\":%.3f,"
        "\"ratio_max\":%.3f,\"rounds\":%d,\"in_flight_per_requester\":%d,"
        "\"offline_batch\":%zu,\"mean_batch\":%.2f,\"max_delay_ms\":%d,\"errors\":%llu,\"load1\":%.2f}\n",
        backend_name.c_str(), precision.c_str(), requesters, actor_rate, offline, median(ratios),
        *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
        rounds, in_flight, max_batch,
        batches ? static_cast<double>(windows_run) / static_cast<double>(batches) : 0.0, max_delay_ms,
        static_cast<unsigned long long>(errors), load1());
    std::fflush(stdout);
  }

  if (only == "saturation") return 0;
  // Light load: open loop, one request every 1/rate s.
  actors::InferenceOptions o;
  o.backend = backend_name;
  o.batching.max_batch = max_batch;
  o.batching.max_delay = std::chrono::milliseconds(max_delay_ms);
  o.serial_max_batch = serial_max_batch;
  o.quiet = true;
  auto inference = actors::spawn_inference(sys, {{"h24", config, weights, prec}}, o);
  if (!inference) return 1;
  std::fprintf(stderr, "bench_inference: latency at %.0f requests/s ...\n", rate);
  auto shared = std::make_shared<Shared>();
  const int total = std::max(20, static_cast<int>(rate * seconds));
  {
    caf::scoped_actor self{sys};
    for (int i = 0; i < 5; ++i)  // warm-up (plan for batch 1), not counted
      self->request(*inference, 30s, actors::forecast_atom::value, (*windows)[static_cast<std::size_t>(i)])
          .receive([](const actors::ForecastReply&) {}, [](const caf::error&) {});
  }
  const auto m0 = metrics_of(sys, *inference);
  const auto period = std::chrono::duration<double>(1.0 / rate);
  auto next = Clock::now();
  for (int i = 0; i < total; ++i) {
    next += std::chrono::duration_cast<Clock::duration>(period);
    std::this_thread::sleep_until(next);
    const auto spawned = Clock::now();
    sys.spawn([=](caf::event_based_actor* self) {
      const auto sent = Clock::now();
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->spawn_ms.push_back(std::chrono::duration<double, std::milli>(sent - spawned).count());
      }
      auto window = (*windows)[static_cast<std::size_t>(i) % 256];
      window.mark_sent();
      self->request(*inference, caf::infinite, actors::forecast_atom::value, std::move(window))
          .then(
              [=](const actors::ForecastReply&) {
                std::lock_guard<std::mutex> lock(shared->mu);
                shared->latencies_ms.push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
              },
              [=](caf::error&) { ++shared->errors; });
    });
  }
  for (int i = 0; i < 5000; ++i) {
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      if (static_cast<int>(shared->latencies_ms.size()) + static_cast<int>(shared->errors) >= total) break;
    }
    std::this_thread::sleep_for(1ms);
  }
  const auto m1 = metrics_of(sys, *inference);
  caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
  std::vector<double> lat, spawn;
  {
    std::lock_guard<std::mutex> lock(shared->mu);
    lat = shared->latencies_ms;
    spawn = shared->spawn_ms;
  }
  if (lat.empty()) return 1;
  std::sort(lat.begin(), lat.end());
  std::sort(spawn.begin(), spawn.end());
  auto pct = [](const std::vector<double>& v, double q) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  const double batches = static_cast<double>(m1.model_time.count - m0.model_time.count);
  const double batch_ms = batches > 0 ? (m1.model_time.sum_ms - m0.model_time.sum_ms) / batches : 0;
  const double overheads = static_cast<double>(m1.overhead.count - m0.overhead.count);
  const double overhead_mean =
      overheads > 0 ? (m1.overhead.sum_ms - m0.overhead.sum_ms) / overheads : 0;
  std::printf(
      "{\"bench\":\"inference_latency\",\"backend\":\"%s\",\"precision\":\"%s\",\"rate\":%.0f,\"max_delay_"
      "ms\":%d,"
      "\"batch_ms\":%.3f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"requests\":%zu,\"goal_p99_ms\":%."
      "3f,\"overhead_mean_ms\":%.3f,\"overhead_max_ms\":%.3f,\"close_margin_ms\":%.3f,\"spawn_p99_ms\":%.3f,"
      "\"load1\":%.2f}\n",
      backend_name.c_str(), precision.c_str(), rate, max_delay_ms, batch_ms, pct(lat, 0.5), pct(lat, 0.99),
      lat.back(), lat.size(), max_delay_ms + batch_ms, overhead_mean, m1.overhead.max_ms, m1.close_margin_ms,
      spawn.empty() ? 0.0 : pct(spawn, 0.99), load1());
  return 0;
}
