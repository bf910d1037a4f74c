// bench/bench_pipeline.cpp
//
// The informer pipeline end to end — fake source → Reflector → DeltaFIFO →
// Controller → Indexer → broadcaster → 1, 4 and 16 no-op handler actors — next
// to a bare 4-hop CAF forwarding pipeline measured in the same run.
//
// Each run floods `events` ADDED watch events into the source from one thread and
// ends when every handler has seen every event. The events are built before the
// clock starts and injected with the fault decorator's emit() (tests/support/
// fake_source.hpp), so the figures measure the actors, not a source's writes (the
// in-memory source this bench used before re-parsed every object while timed).
// Reported per configuration, over `runs` runs: events/s (median, min, max) and the
// latency from the source's emit to a handler, p50 and p99 over every (event,
// handler) of the median run. Under a flood the latency is mostly queueing: it
// shows how deep the pipeline buffers.
//
// Output: one JSON object per line on stdout (style.md "Bench output");
// progress on stderr.  Usage: bench_pipeline [events] [runs]
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/atoms.hpp"
#include "actors/errors.hpp"
#include "actors/shared_informer.hpp"
#include "tests/support/fake_source.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using kinformer::actors::notify_atom;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct RunResult {
  double events_per_s = 0;
  std::vector<std::int64_t> latencies_ns;  // every (event, receiver)
};

struct Summary {
  double median_events_per_s = 0, min_events_per_s = 0, max_events_per_s = 0;
  double p50_us = 0, p99_us = 0;
};

Summary summarize(std::vector<RunResult> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const RunResult& a, const RunResult& b) { return a.events_per_s < b.events_per_s; });
  Summary s;
  s.min_events_per_s = runs.front().events_per_s;
  s.max_events_per_s = runs.back().events_per_s;
  auto& median = runs[runs.size() / 2];
  s.median_events_per_s = median.events_per_s;
  auto& lat = median.latencies_ns;
  std::sort(lat.begin(), lat.end());
  if (!lat.empty()) {
    s.p50_us = static_cast<double>(lat[lat.size() / 2]) / 1000.0;
    s.p99_us = static_cast<double>(lat[std::min(lat.size() - 1, lat.size() * 99 / 100)]) / 1000.0;
  }
  return s;
}

void wait_until(const std::atomic<std::size_t>& counter, std::size_t target) {
  while (counter.load() < target) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

// -- the bare CAF pipeline: source (this thread) → 4 forwarding stages → sink ----

RunResult run_caf_forwarding(caf::actor_system& system, std::size_t events) {
  std::vector<std::int64_t> arrival(events, 0);
  std::atomic<std::size_t> received{0};
  auto sink = system.spawn([&](caf::event_based_actor*) -> caf::behavior {
    return {[&](notify_atom, std::int64_t index, std::int64_t) {
      arrival[static_cast<std::size_t>(index)] = now_ns();
      ++received;
    }};
  });
  caf::actor next = sink;
  std::vector<caf::actor> stages{sink};
  for (int hop = 0; hop < 4; ++hop) {
    next = system.spawn([next](caf::event_based_actor* self) -> caf::behavior {
      return {[=](notify_atom, std::int64_t index, std::int64_t emitted) {
        self->send(next, notify_atom::value, index, emitted);
      }};
    });
    stages.push_back(next);
  }
  std::vector<std::int64_t> emitted(events);
  auto start = Clock::now();
  for (std::size_t i = 0; i < events; ++i) {
    emitted[i] = now_ns();
    caf::anon_send(next, notify_atom::value, static_cast<std::int64_t>(i), emitted[i]);
  }
  wait_until(received, events);
  auto seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& stage : stages) caf::anon_send_exit(stage, caf::exit_reason::user_shutdown);
  RunResult result;
  result.events_per_s = static_cast<double>(events) / seconds;
  for (std::size_t i = 0; i < events; ++i) result.latencies_ns.push_back(arrival[i] - emitted[i]);
  return result;
}

// -- the informer pipeline ---------------------------------------------------------

std::vector<kinformer::ObjectPtr> make_objects(std::size_t events) {
  std::vector<kinformer::ObjectPtr> objects;
  objects.reserve(events);
  for (std::size_t i = 0; i < events; ++i) {
    auto json = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b)" + std::to_string(i) +
                R"(","namespace":"bench","resourceVersion":"0","labels":{"app":"bench"}},"spec":{"nodeName":"n1"}})";
    objects.push_back(kinformer::Object::parse(json).value());
  }
  return objects;
}

std::size_t index_of(const kinformer::Object& object) {
  auto name = object.name().substr(1);
  std::size_t index = 0;
  std::from_chars(name.data(), name.data() + name.size(), index);
  return index;
}

RunResult run_informer(caf::actor_system& system, const std::vector<kinformer::ObjectPtr>& objects,
                       std::size_t handlers) {
  const auto events = objects.size();
  auto source = std::make_shared<kinformer::testing::FakeSource>();
  kinformer::SharedInformerOptions options;
  options.source = source;
  kinformer::SharedInformer informer(system, options);
  std::vector<std::vector<std::int64_t>> arrival(handlers, std::vector<std::int64_t>(events, 0));
  std::atomic<std::size_t> received{0};
  for (std::size_t h = 0; h < handlers; ++h) {
    kinformer::HandlerFuncs funcs;
    funcs.on_add = [&arrival, &received, h](const kinformer::ObjectPtr& object, bool) {
      arrival[h][index_of(*object)] = now_ns();
      ++received;
    };
    if (!informer.add_handler(funcs)) std::abort();
  }
  informer.run();
  if (!informer.wait_for_sync(std::chrono::seconds(30))) std::abort();
  std::vector<kinformer::WatchEvent> added(events);
  for (std::size_t i = 0; i < events; ++i)
    added[i] = kinformer::WatchEvent{kinformer::WatchEventType::added, objects[i], std::to_string(i + 1),
                                     std::nullopt};
  std::vector<std::int64_t> emitted(events);
  auto start = Clock::now();
  for (std::size_t i = 0; i < events; ++i) {
    emitted[i] = now_ns();
    source->emit({std::move(added[i])});
  }
  wait_until(received, events * handlers);
  auto seconds = std::chrono::duration<double>(Clock::now() - start).count();
  informer.stop();
  RunResult result;
  result.events_per_s = static_cast<double>(events) / seconds;
  for (std::size_t h = 0; h < handlers; ++h)
    for (std::size_t i = 0; i < events; ++i) result.latencies_ns.push_back(arrival[h][i] - emitted[i]);
  return result;
}

void print(const std::string& head, const Summary& s, const std::string& tail = "") {
  std::printf("{%s,\"events_per_s\":%.0f,\"min_events_per_s\":%.0f,\"max_events_per_s\":%.0f,"
              "\"p50_us\":%.1f,\"p99_us\":%.1f%s}\n",
              head.c_str(), s.median_events_per_s, s.min_events_per_s, s.max_events_per_s, s.p50_us, s.p99_us,
              tail.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t events = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  std::size_t runs = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 5;
  if (events == 0 || runs == 0) {
    std::cerr << "usage: bench_pipeline [events > 0] [runs > 0]\n";
    return 2;
  }
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};
#ifdef NDEBUG
  const char* build = "Release";
#else
  const char* build = "Debug";
#endif
  std::printf("{\"bench\":\"setup\",\"build\":\"%s\",\"caf\":\"0.17.6\",\"threads\":2,\"events\":%zu,\"runs\":%zu}\n",
              build, events, runs);

  std::vector<RunResult> baseline_runs;
  for (std::size_t r = 0; r < runs; ++r) {
    std::cerr << "caf_forward_4hop run " << r + 1 << "/" << runs << "\n";
    baseline_runs.push_back(run_caf_forwarding(system, events));
  }
  auto baseline = summarize(std::move(baseline_runs));
  auto common = "\"events\":" + std::to_string(events) + ",\"runs\":" + std::to_string(runs);
  print("\"bench\":\"caf_forward_4hop\"," + common, baseline);

  auto objects = make_objects(events);
  for (std::size_t handlers : {1, 4, 16}) {
    std::vector<RunResult> informer_runs;
    for (std::size_t r = 0; r < runs; ++r) {
      std::cerr << "informer_pipeline handlers=" << handlers << " run " << r + 1 << "/" << runs << "\n";
      informer_runs.push_back(run_informer(system, objects, handlers));
    }
    auto s = summarize(std::move(informer_runs));
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, ",\"baseline\":\"caf_forward_4hop\",\"ratio\":%.3f",
                  s.median_events_per_s / baseline.median_events_per_s);
    print("\"bench\":\"informer_pipeline\",\"handlers\":" + std::to_string(handlers) + "," + common, s, ratio);
  }
  return 0;
}
