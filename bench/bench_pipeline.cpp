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
// The Processor's lines (issue 9):
//   chain — one group of H hops (1, 4, 16), each with a predicate (namespace),
//     the last hop counting arrivals; baseline: the one-handler pipeline above.
//   slow_handler — 4 fast groups and one slow group whose handler answers each
//     notification after 100× the mean event interval of the baseline run (it
//     answers later, through a delayed message, as a handler waiting on the
//     inference actor would: it holds no scheduler thread). Events are updates
//     over 1k keys; the fast groups are done once each saw every key's final
//     state. events_per_s is the fast groups' rate with the slow group present,
//     baseline_events_per_s the same run without it; slow_backlog_max is the
//     largest coalesced backlog (notifications), groups_cut_loose how often a
//     group let go of the credit (actors/processor.hpp), rss_growth_bytes the RSS
//     growth across the run with the slow group and baseline_rss_growth_bytes
//     across the run without it (the objects and watch events are built before
//     the first reading; both include what the flood queues in the Reflector and
//     the DeltaFIFO, which glibc keeps as RSS after it is freed, so the slow
//     group's share is their difference).
//   broadcast — the informer_pipeline runs with 100 events per watch message, as
//     a watch stream's read hands them on, so the Processor's fan-out shows
//     rather than the Reflector's cost per message.
//
// Output: one JSON object per line on stdout (style.md "Bench output");
// progress on stderr.  Usage: bench_pipeline [events] [runs] [slow]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/atoms.hpp"
#include "actors/errors.hpp"
#include "actors/predicates.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "tests/support/fake_source.hpp"
#include "runtime/help_option.hpp"

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
  auto deadline = Clock::now() + std::chrono::minutes(5);
  while (counter.load() < target) {
    if (Clock::now() > deadline) {
      std::cerr << "bench_pipeline: gave up after 5 min at " << counter.load() << " of " << target
                << " (a lost event?)\n";
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

/// emit() reaches open watches only: wait until the informer's watch is open.
void wait_for_watch(const kinformer::testing::FakeSource& source) {
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (source.open_watch_count() == 0) {
    if (Clock::now() > deadline) {
      std::cerr << "bench_pipeline: the informer never opened its watch\n";
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
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
    auto json =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b)" + std::to_string(i) +
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
                       std::size_t handlers, std::size_t per_message = 1) {
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
  wait_for_watch(*source);
  std::vector<kinformer::WatchEvent> added(events);
  for (std::size_t i = 0; i < events; ++i)
    added[i] = kinformer::WatchEvent{kinformer::WatchEventType::added, objects[i], std::to_string(i + 1),
                                     std::nullopt};
  std::vector<std::int64_t> emitted(events);
  auto start = Clock::now();
  for (std::size_t i = 0; i < events; i += per_message) {
    const auto end = std::min(events, i + per_message);
    std::vector<kinformer::WatchEvent> message(std::make_move_iterator(added.begin() + static_cast<std::ptrdiff_t>(i)),
                                               std::make_move_iterator(added.begin() + static_cast<std::ptrdiff_t>(end)));
    const auto at = now_ns();
    std::fill(emitted.begin() + static_cast<std::ptrdiff_t>(i), emitted.begin() + static_cast<std::ptrdiff_t>(end), at);
    source->emit(std::move(message));
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

// -- the Processor: chains and a slow group -------------------------------------------

RunResult run_chain(caf::actor_system& system, const std::vector<kinformer::ObjectPtr>& objects,
                    std::size_t hops) {
  const auto events = objects.size();
  auto source = std::make_shared<kinformer::testing::FakeSource>();
  kinformer::SharedInformerOptions options;
  options.source = source;
  kinformer::SharedInformer informer(system, options);
  std::vector<std::int64_t> arrival(events, 0);
  std::atomic<std::size_t> received{0};
  for (std::size_t h = 0; h < hops; ++h) {
    kinformer::HandlerOptions hop;
    hop.group = "chain";
    hop.priority = static_cast<int>(h);
    hop.predicate = kinformer::actors::in_namespace("bench");
    kinformer::HandlerFuncs funcs;
    if (h + 1 == hops) {
      funcs.on_add = [&arrival, &received](const kinformer::ObjectPtr& object, bool) {
        arrival[index_of(*object)] = now_ns();
        ++received;
      };
    }
    if (!informer.add_handler(funcs, hop)) std::abort();
  }
  informer.run();
  if (!informer.wait_for_sync(std::chrono::seconds(30))) std::abort();
  wait_for_watch(*source);
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
  wait_until(received, events);
  auto seconds = std::chrono::duration<double>(Clock::now() - start).count();
  informer.stop();
  RunResult result;
  result.events_per_s = static_cast<double>(events) / seconds;
  for (std::size_t i = 0; i < events; ++i) result.latencies_ns.push_back(arrival[i] - emitted[i]);
  return result;
}

std::size_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

/// Updates over `keys` keys: key i % keys at version i / keys; the last version of a key carries final=yes.
std::vector<kinformer::ObjectPtr> make_updates(std::size_t events, std::size_t keys) {
  std::vector<kinformer::ObjectPtr> objects;
  objects.reserve(events);
  for (std::size_t i = 0; i < events; ++i) {
    bool last = i + keys >= events;
    auto json = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"k)" + std::to_string(i % keys) +
                R"(","namespace":"bench","resourceVersion":")" +
                std::to_string(i + 1) +  // distinct: not a resync
                R"(","labels":{"app":"bench","v":")" + std::to_string(i / keys) + R"(","final":")" +
                (last ? "yes" : "no") + R"("}},"spec":{"nodeName":"n1"}})";
    objects.push_back(kinformer::Object::parse(json).value());
  }
  return objects;
}

using SlowReply =
    caf::typed_response_promise<kinformer::actors::handled_atom, kinformer::actors::RegistrationId,
                                kinformer::actors::HopReport>;
using SlowImpl =
    kinformer::actors::HandlerActor::extend<caf::reacts_to<kinformer::actors::drain_atom, std::size_t>>;
struct SlowState {
  std::unordered_map<std::size_t, SlowReply> parked;  // answered ones leave: it grows with batches in flight
  std::size_t next = 0;
};

/// Answers each batch after batch size × `per_item`, through a delayed message to itself.
SlowImpl::behavior_type slow_handler(SlowImpl::stateful_pointer<SlowState> self,
                                     std::chrono::nanoseconds per_item) {
  return {
      [=](kinformer::actors::notify_atom, kinformer::actors::RegistrationId id,
          const kinformer::actors::NotificationBatchPtr& batch) {
        auto reply =
            self->make_response_promise<kinformer::actors::handled_atom, kinformer::actors::RegistrationId,
                                        kinformer::actors::HopReport>();
        auto slot = self->state.next++;
        self->state.parked.emplace(slot, reply);
        self->delayed_send(self, per_item * batch->items.size(), kinformer::actors::drain_atom::value, slot);
        (void)id;
        return reply;
      },
      [=](kinformer::actors::drain_atom, std::size_t slot) {
        auto found = self->state.parked.find(slot);
        found->second.deliver(kinformer::actors::handled_atom::value, kinformer::actors::RegistrationId{0},
                              kinformer::actors::HopReport{});
        self->state.parked.erase(found);
      },
  };
}

struct SlowRun {
  double events_per_s = 0;
  std::uint64_t backlog_max = 0;
  std::uint64_t cut_loose = 0;
  std::size_t rss_growth = 0;
};

SlowRun run_slow(caf::actor_system& system, const std::vector<kinformer::ObjectPtr>& objects,
                 std::size_t keys, std::size_t fast_groups, std::chrono::nanoseconds slow_per_item) {
  // The events are built before the first reading: the growth is the informer's.
  std::vector<kinformer::WatchEvent> changes(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i)
    changes[i] = kinformer::WatchEvent{
        i < keys ? kinformer::WatchEventType::added : kinformer::WatchEventType::modified, objects[i],
        std::to_string(i + 1), std::nullopt};
  auto rss_before = rss_bytes();
  auto source = std::make_shared<kinformer::testing::FakeSource>();
  kinformer::SharedInformerOptions options;
  options.source = source;
  options.stop_timeout = std::chrono::milliseconds(1000);  // the slow group does not drain: it is killed
  kinformer::SharedInformer informer(system, options);
  std::vector<std::atomic<std::size_t>> finals(fast_groups);
  for (auto& f : finals) f = 0;
  for (std::size_t g = 0; g < fast_groups; ++g) {
    kinformer::HandlerFuncs funcs;
    auto* done = &finals[g];
    auto seen = [done](const kinformer::ObjectPtr& object) {
      if (object->label("final") == std::optional<std::string_view>("yes")) ++*done;
    };
    funcs.on_add = [seen](const kinformer::ObjectPtr& object, bool) { seen(object); };
    funcs.on_update = [seen](const kinformer::ObjectPtr&, const kinformer::ObjectPtr& object) {
      seen(object);
    };
    if (!informer.add_handler(funcs)) std::abort();
  }
  caf::actor slow;
  if (slow_per_item.count() > 0) {
    auto actor = system.spawn(slow_handler, slow_per_item);
    slow = caf::actor_cast<caf::actor>(actor);
    if (!informer.add_handler(kinformer::actors::HandlerActor{actor})) std::abort();
  }
  informer.run();
  if (!informer.wait_for_sync(std::chrono::seconds(30))) std::abort();
  wait_for_watch(*source);
  auto start = Clock::now();
  for (auto& change : changes) source->emit({std::move(change)});
  for (auto& f : finals) wait_until(f, keys);
  auto seconds = std::chrono::duration<double>(Clock::now() - start).count();
  SlowRun run;
  run.events_per_s = static_cast<double>(objects.size()) / seconds;
  run.backlog_max = informer.backlog_max();
  run.cut_loose = informer.groups_cut_loose();
  auto rss_after = rss_bytes();
  run.rss_growth = rss_after > rss_before ? rss_after - rss_before : 0;
  informer.stop();
  if (slow) caf::anon_send_exit(slow, caf::exit_reason::kill);
  return run;
}

void print(const std::string& head, const Summary& s, const std::string& tail = "") {
  std::printf(
      "{%s,\"events_per_s\":%.0f,\"min_events_per_s\":%.0f,\"max_events_per_s\":%.0f,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f%s}\n",
      head.c_str(), s.median_events_per_s, s.min_events_per_s, s.max_events_per_s, s.p50_us, s.p99_us,
      tail.c_str());
  std::fflush(stdout);
}

}  // namespace

constexpr const char* usage = "usage: bench_pipeline [events > 0 (20000)] [runs > 0 (5)] [slow]\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  std::size_t events = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  std::size_t runs = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 5;
  // "slow": only the slow_handler lines (they take the longest to set up).
  const bool only_slow = argc > 3 && std::string(argv[3]) == "slow";
  if (events == 0 || runs == 0) {
    std::cerr << usage;
    return 2;
  }
  caf::actor_system_config cfg;
  kinformer::actors::configure_scheduler(cfg);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};
#ifdef NDEBUG
  const char* build = "Release";
#else
  const char* build = "Debug";
#endif
  std::printf(
      "{\"bench\":\"setup\",\"build\":\"%s\",\"caf\":\"0.17.6\",\"threads\":2,\"events\":%zu,\"runs\":%zu}\n",
      build, events, runs);

  if (!only_slow) {
    std::vector<RunResult> baseline_runs;
    for (std::size_t r = 0; r < runs; ++r) {
      std::cerr << "caf_forward_4hop run " << r + 1 << "/" << runs << "\n";
      baseline_runs.push_back(run_caf_forwarding(system, events));
    }
    auto baseline = summarize(std::move(baseline_runs));
    auto common = "\"events\":" + std::to_string(events) + ",\"runs\":" + std::to_string(runs);
    print("\"bench\":\"caf_forward_4hop\"," + common, baseline);

    auto objects = make_objects(events);
    double one_handler = 0;  // the chains' baseline: one handler, same run
    for (std::size_t handlers : {1, 4, 16}) {
      std::vector<RunResult> informer_runs;
      for (std::size_t r = 0; r < runs; ++r) {
        std::cerr << "informer_pipeline handlers=" << handlers << " run " << r + 1 << "/" << runs << "\n";
        informer_runs.push_back(run_informer(system, objects, handlers));
      }
      auto s = summarize(std::move(informer_runs));
      if (handlers == 1) one_handler = s.median_events_per_s;
      char ratio[64];
      std::snprintf(ratio, sizeof ratio, ",\"baseline\":\"caf_forward_4hop\",\"ratio\":%.3f",
                    s.median_events_per_s / baseline.median_events_per_s);
      print("\"bench\":\"informer_pipeline\",\"handlers\":" + std::to_string(handlers) + "," + common, s,
            ratio);
    }
    // The same with 100 events per watch message, as a watch stream's read hands them
    // on: the Reflector's per-message cost shrinks and the Processor's fan-out shows.
    constexpr std::size_t per_message = 100;
    for (std::size_t handlers : {1, 4, 16}) {
      std::vector<RunResult> broadcast_runs;
      for (std::size_t r = 0; r < runs; ++r) {
        std::cerr << "broadcast handlers=" << handlers << " run " << r + 1 << "/" << runs << "\n";
        broadcast_runs.push_back(run_informer(system, objects, handlers, per_message));
      }
      print("\"bench\":\"broadcast\",\"handlers\":" + std::to_string(handlers) +
                ",\"events_per_message\":" + std::to_string(per_message) + "," + common,
            summarize(std::move(broadcast_runs)));
    }
    for (std::size_t hops : {1, 4, 16}) {
      std::vector<RunResult> chain_runs;
      for (std::size_t r = 0; r < runs; ++r) {
        std::cerr << "chain hops=" << hops << " run " << r + 1 << "/" << runs << "\n";
        chain_runs.push_back(run_chain(system, objects, hops));
      }
      auto s = summarize(std::move(chain_runs));
      char ratio[96];
      std::snprintf(ratio, sizeof ratio,
                    ",\"baseline\":\"informer_pipeline_1\",\"baseline_events_per_s\":%.0f,\"ratio\":%.3f",
                    one_handler, s.median_events_per_s / one_handler);
      print("\"bench\":\"chain\",\"groups\":1,\"hops\":" + std::to_string(hops) +
                ",\"predicates\":" + std::to_string(hops) + "," + common,
            s, ratio);
    }
  }
  constexpr std::size_t keys = 1000;
  constexpr std::size_t fast_groups = 4;
  constexpr int slow_factor = 100;
  for (std::size_t slow_events : {std::size_t{10000}, std::size_t{100000}}) {
    auto updates = make_updates(slow_events, keys);
    std::vector<double> with, without;
    std::uint64_t backlog_max = 0, cut_loose = 0;
    std::size_t rss_growth = 0, baseline_rss_growth = 0;
    for (std::size_t r = 0; r < runs; ++r) {
      std::cerr << "slow_handler events=" << slow_events << " run " << r + 1 << "/" << runs << "\n";
      auto base = run_slow(system, updates, keys, fast_groups, std::chrono::nanoseconds(0));
      without.push_back(base.events_per_s);
      auto per_item =
          std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / base.events_per_s * slow_factor));
      auto slow = run_slow(system, updates, keys, fast_groups, per_item);
      with.push_back(slow.events_per_s);
      backlog_max = std::max(backlog_max, slow.backlog_max);
      cut_loose = std::max(cut_loose, slow.cut_loose);
      rss_growth = std::max(rss_growth, slow.rss_growth);
      baseline_rss_growth = std::max(baseline_rss_growth, base.rss_growth);
    }
    std::sort(with.begin(), with.end());
    std::sort(without.begin(), without.end());
    auto median_with = with[with.size() / 2];
    auto median_without = without[without.size() / 2];
    std::printf(
        "{\"bench\":\"slow_handler\",\"fast_groups\":%zu,\"slow_factor\":%d,\"events\":%zu,\"keys\":%zu,"
        "\"runs\":%zu,\"events_per_s\":%.0f,\"baseline_events_per_s\":%.0f,\"ratio\":%.3f,"
        "\"slow_backlog_max\":%llu,\"groups_cut_loose\":%llu,\"rss_growth_bytes\":%zu,"
        "\"baseline_rss_growth_bytes\":%zu}\n",
        fast_groups, slow_factor, slow_events, keys, runs, median_with, median_without,
        median_with / median_without, static_cast<unsigned long long>(backlog_max),
        static_cast<unsigned long long>(cut_loose), rss_growth, baseline_rss_growth);
    std::fflush(stdout);
  }
  return 0;
}
