#include "actors/scheduler.hpp"

#include <cstdlib>
#include <string_view>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/job_queue.hpp"
#include "runtime/home_cpu.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors {
namespace {

constexpr caf::atom_value lazy_wake = caf::atom("lazy_wake");

// A CAF scheduler policy (the interface of caf/policy/work_sharing.hpp) over one
// JobQueue: jobs a worker creates stay with it unless they pile up.
class LazyWakePolicy : public caf::policy::unprofiled {
 public:
  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    JobQueue queue;
  };
  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    d(self).queue.push(job);
  }
  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job);
  }
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job, /*from_worker=*/true);
  }
  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    d(self->parent()).queue.push(job, /*from_worker=*/true);
  }
  // Worker 0 is the home worker: it follows the I/O threads onto the home CPU
  // (runtime/home_cpu.hpp) and is the one their jobs wake. It follows after its wait,
  // so that the job that woke it (often the first from an I/O thread) runs there too.
  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    const bool home = self->id() == 0;
    caf::resumable* job = d(self->parent()).queue.take(home);
    if (home) home_cpu::follow();
    return job;
  }
  template <class Worker, class F>
  void foreach_resumable(Worker*, F) {}  // no per-worker queues
  template <class Coordinator, class F>
  void foreach_central_resumable(Coordinator* self, F f) {
    d(self).queue.drain(f);
  }
};

// scheduler.policy picks the coordinator when the system starts, so the command
// line and INI file can still choose one of CAF's own.
// Anything but 'lazy_wake' gets what CAF itself would start for that name.
caf::actor_system::module* make_scheduler(caf::actor_system& system, const SchedulerProfile& profile) {
  const auto policy = caf::get_or(system.config(), "scheduler.policy", lazy_wake);
  if (policy == lazy_wake) {
    if (profile.home_cpu) home_cpu::enable();
    return new caf::scheduler::coordinator<LazyWakePolicy>(system);
  }
  if (policy == caf::atom("sharing")) return new caf::scheduler::coordinator<caf::policy::work_sharing>(system);
  if (policy == caf::atom("testing")) return new caf::scheduler::test_coordinator(system);
  return new caf::scheduler::coordinator<caf::policy::work_stealing>(system);
}

}  // namespace

// The default, scheduler.policy 'lazy_wake': two workers over one JobQueue
// (actors/job_queue.hpp): a job from outside the workers (an I/O thread, the timer)
// wakes one; a job a running worker creates stays with that worker unless more than 4
// are queued or the oldest has waited over 50 µs; and an alarm (actors/wake_alarm.hpp,
// after Go's sysmon) wakes a sleeping worker for a job that has waited 1 ms beside it,
// unless the job that worker runs is brief (the informer's own actors, outside a
// handler's user code). The alternative, scheduler.policy 'sharing', is CAF's: idle
// workers sleep on its queue with no timeout, and the idle worker wakes for every job.
//
// The home CPU (issue 29, stop 41): the HTTP client's I/O threads and worker 0 pinned to one
// CPU, I/O-thread jobs waking worker 0 first (runtime/home_cpu.hpp). Before, nearly every
// event's one wake-up went to a worker on the other vCPU: the kernel puts a woken thread on
// an idle CPU, and in this VM that costs an interprocessor interrupt and a halted vCPU's
// exit and re-entry. With the whole informer under taskset -c 1 our CPU at 100 writes/s fell
// from 1.08-1.57 to 0.59-0.67 % of a core; pinning only the threads on an event's way keeps
// that and leaves the other worker, the alarm and everything a handler starts free.
// bench_vs_client_go, the same binary with KINFORMER_HOME_CPU=off and without, alternating:
//   rate phases only, 3 runs each: client-go / ours CPU at 100 writes/s 2.45, 2.39, 6.06
//   against 2.06, 1.84, 2.47; at 1000/s 4.53, 5.26, 3.73 against 2.34, 2.21, 2.46 (our CPU
//   3.8-4.2 against 7.6-9.2 % of a core); at 10000/s 5.74, 3.79, 4.66 against 4.78, 3.85,
//   4.01; our p50 at 1000/s 150-161 µs against 207-237 (client-go 227-298).
//   Full runs, 6 against 5: 1000/s median 3.36 (3.15-3.63) against 2.53 (2.33-2.61), 10000/s
//   4.62 against 3.74, lists and relist unchanged (150k: CPU 6.40 against 6.73, peak RSS
//   4.62 against 4.78, within the runs' spread).
// The cost, with a busy loop of another process (sh) on one CPU, rates 100 and 1000/s, 2
// runs each: on the home CPU our p99 at 1000/s was 2859 and 2707 µs (client-go 412 and 674),
// on the other CPU 435 and 500, and with the home CPU off 573 and 424: the pinned I/O
// thread cannot leave a CPU another process saturates. With one or two busy loops free to
// move, as the kernel places them, on and off did not differ beyond the runs' spread (p99
// 541-1411 against 559-600 µs at 1000/s with one loop, 4.8-5.0 ms against 5.5-5.6 ms with
// two, where client-go's was the same). A service that shares a CPU-bound process's CPU by
// pinning passes SchedulerProfile{false} or sets KINFORMER_HOME_CPU=off.
//
// Why lazy_wake became the default (issue 29, stop 39): counted with perf record -e
// raw_syscalls:sys_enter on bench_vs_client_go's informer at 1000 writes/s, an event cost
// 12-13 system calls under sharing: 7.3 futex calls (the two workers woke each other for
// every hop, 2.6 of them wakes of the queue's mutex, which a condition variable re-takes
// marked contended), 2 epoll_wait, 2 recvmsg and 1 timerfd_settime on the I/O thread. In
// this VM a system call's kernel side is dear: 62 % of the informer's samples were kernel,
// 31 % under futex and 12 % under epoll_wait. lazy_wake as it was saved the hops' wakes but
// armed and disarmed its alarm on almost every event (4 takes per event left jobs beside a
// sleeper: 2 timerfd_settime). Now:
//   * the informer's actors (Reflector, DeltaFIFO, Controller, Processor and the handler
//     actor built from functions) declare themselves brief, so what they leave queued
//     needs no alarm; the handler's user code runs in a MayBlock scope, which arms it;
//   * sleeping workers wait on a semaphore, posted after the queue's mutex is released;
//   * (runtime/http/client.cpp) a watch's deadline is one timer for the whole stream, and
//     a plain TCP watch is read without Beast's post.
// Per event at 1000 writes/s: 5 system calls (1 epoll_wait, 2 recvfrom, 1 futex wake on
// the I/O thread, 1 futex wait on a worker) and 2.3 context switches (client-go: 5.3).
// bench_vs_client_go, 3 full runs of this default (load 1.0-1.9), client-go / ours CPU:
// 100 writes/s 1.92-2.16, 1000 writes/s 2.49-2.57, 10000 writes/s 2.48-4.99; 2 full runs
// of sharing on a build with the same HTTP changes: 1.48-1.63 and 1.74-1.89 (README
// "Against client-go"). The backlog wait went from 200 to 50 µs: with brief jobs arming
// no alarm, floods ran on one worker (bench_pipeline's one-handler informer_pipeline 363k
// against sharing's 538k events/s; 545k with 50 µs), and the switches per event at 1000
// writes/s stayed at 2.3.
//
// Handler isolation and the brief contract: a job left behind a brief job waits until
// that job returns. The informer's actors return within microseconds unless user code
// they call without a MayBlock scope blocks: predicates (Processor), transforms
// (DeltaFIFO) and index functions (Controller) must not block, as in client-go, where they
// run on the informer's own goroutines. A handler that blocks is covered:
// tests/actors/shared_informer_test.cpp checks that a sibling handler gets its batch
// within 250 ms while the first blocks (2 s without the MayBlock scope). Any actor that
// does not declare itself brief, users' own included, gets the alarm as before. A
// worker preempted in a brief job also holds its queued jobs until it runs again, where
// sharing's other worker would take them: a cost in the tail when the machine is loaded.
//
// Handler isolation, and why the alarm: without it, a job left behind the one a worker
// takes waited for that job to end, however long, unless a later push found a backlog:
// an actor that sends one message to a handler that blocks and one to another handler
// (the Processor's fan-out) held the second back until the first returned (over 1 s,
// where sharing delivers it at once; tests/actors/job_queue_test.cpp checks both
// policies against a 250 ms bound). Waking a worker whenever a take leaves jobs behind
// restored isolation but also sharing's costs: 5.2-5.8 switches per event and
// client-go / ours CPU 1.41 and 1.60-1.63 at 100 and 1000 writes/s (2 alternating runs
// each). The alarm is a timerfd, armed with one timerfd_settime() when a push or take
// leaves a job beside a sleeping worker and disarmed when a worker finds the queue
// empty: about one arm and one disarm per busy period, and no thread woken. A monitor
// thread in a timed wait would have to be woken to learn each deadline: a switch per
// arming, what lazy_wake exists to save. Counted on bench_vs_client_go's informer
// (perf stat -e syscalls:sys_enter_timerfd_settime over a child's life, 4 runs each):
// 2974-3009 calls per 1000-event run at 100/s against 986-1001 under sharing (Asio's
// own timers), 26.3-29.4k against 9.2-9.7k per 10000-event run at 1000/s: 2 per event.
// An arm and a disarm cost 5.2-6.1 µs together on this VM (a loop of 200k); perf
// record at 1000/s put timerfd_settime at 5.7 % of samples against 1.9 % under
// sharing. The alarm thread switched 3-8 times over a child's whole life (sync and up
// to 10k events at 100 or 1000/s: it fired a handful of times), 77-116 times in 10 s
// at 10000/s, and 3 times in an idle child's, however long the idle phase: no periodic
// wake-up (idle 0.0 % of a core).
// The bound: 1 ms, about four times the p50 of a whole event's way from the I/O thread
// to the handler (0.23-0.27 ms, below) where a queued job usually waits a few µs, so
// the alarm fires only for jobs held back by a worker that blocks or is preempted, and
// caps what such a worker adds to their latency near 1 ms. Other bounds were not
// measured.
//
// Earlier (stop 37), when sharing stayed the default: lazy_wake, still arming its alarm
// for every job left behind, was cheaper at 1000 writes/s, no cheaper at 100/s, and its
// tail no shorter. bench_vs_client_go --phases idle,rate --caf
// --scheduler.policy=lazy_wake and =sharing, one binary, alternating, 12 runs each in
// three batches (load 0.7-3.2 for 9, 4.7-7.0 for 3, the machine shared with other
// builds and benches; in the first 4, perf stat counted every informer's
// timerfd_settime calls), medians (ranges):
//                 our CPU, % of a core   client-go / ours    switches/event   our p50 / p99 µs (client-go's)
//   idle          0.0 vs 0.0             -                   -                -
//   100/s         2.37 vs 2.21           1.50 (1.35-1.59)    2.96 vs 5.06      702 / 4840 (615 / 4213)
//                                        vs 1.45 (1.11-1.79)                  vs 627 / 4007 (572 / 3305)
//   1000/s        9.60 vs 10.6           1.92 (1.74-2.06)    2.89 vs 4.63      390 / 6125 (382 / 4683)
//                                        vs 1.68 (1.56-2.06)                  vs 391 / 3393 (329 / 3227)
// Run against run (each lazy_wake run beside the sharing run after it): at 1000/s
// lazy_wake's ratio was higher in 10 of 12 (all 9 at load up to 3.2), at 100/s in 7 of
// 12; its p99 was lower in 6 of 12 at either rate. At 10000/s (3 runs each at load
// 5.5-6.4; the writer reached 5.3-7.3k/s against 7.5-10k/s, so not like for like) our
// CPU was 3.9 against 6.5 %, p50 / p99 22.6 / 162 ms against 8.7 / 104 ms. The same
// build without the alarm (4 runs at load 1.5-3.1): ratio 1.65 and 1.95, p99 5605 and
// 7979 µs. Floods (bench_pipeline, 5 alternating invocations of 5 runs at 20k events, 2
// of 3 runs at 100k; README "The scheduler profile"): most lines within the runs'
// spread; at 100k the one-handler informer line was lower (265k against 344k events/s)
// and the chain lines higher (466k against 371k for one hop).
// Earlier, at load 9-11 without the alarm (4 runs each): 100/s 3.58 vs 3.41 %, 1000/s
// 11.0 vs 17.0 %, and the price of lazy_wake under CPU contention: a job waits for the
// worker that created it, also while that worker is preempted, where sharing's other
// worker would have taken it (the in-process part at 100/s: p99 3.5-4.1 ms against
// 1.2-2.1 ms); the alarm now bounds that wait near 1 ms, but not the wait for the
// alarm's own thread and the woken worker to be scheduled. Thresholds (2 runs each):
// (1 job, 20 µs) and (2 jobs, 50 µs) woke the other worker as often as sharing (5.2-5.9
// switches per event at 100/s); (8 jobs, 1 ms) saved no more (3.2 and 2.8 per event at
// 100 and 1000/s).
// Why not CAF's default (work stealing, 4 threads): after each job an idle worker
// polls 100 times, then 500 times with a 50 µs sleep between polls (~25 ms), then
// wakes every 10 ms to steal. perf record -g on pod_logger at 100 writes/s: 64 % of
// samples under clock_nanosleep(50 µs), 116 context switches per event and 21 % of a
// core; idle 0.75 % of a core. The earlier pass measured these candidates (3 runs each,
// medians, load 10-13):
//   profile                                   idle    100/s: CPU  p50/p99 us   switches   1000/s: CPU  p50/p99 us
//   stealing, CAF's polling (1 run)           1.17 %      18.1 %  1077/4740      123          20.1 %  526/13272
//   stealing, no moderate polling (1 run)     1.26 %       3.5 %  1009/5617      4.3          11.6 %  362/6093
//   stealing, + relaxed sleep 1 s             0.04 %       2.2 %  1059/12954     3.8           8.5 %  716/18916
//   stealing, 1 thread, relaxed sleep 1 s     0.04 %       2.1 %   914/12370     3.9           8.2 %  589/15021
//   sharing, 1 thread                         0 %          2.8 %  1047/13248     3.9           8.6 %  460/12586
//   sharing, 2 threads                        0 %          2.4 %  1049/16585     5.3           9.8 %  633/14761
// A stealing worker asleep looks for work only at its relaxed interval (a message sent
// while its peer runs a slow handler could wait that long); sharing and lazy_wake have
// no periodic wake-up at all (idle 0 %), which also keeps scheduler threads from
// preempting the inference actor's model threads (README "Batched inference").
// Two threads, not one: a second informer or a handler that computes still gets the
// second core. ThreadSanitizer sees the hand-overs: libcaf_core is not instrumented,
// but sharing (and JobQueue) hand jobs over under a mutex, which it sees
// (scripts/tsan.supp covers the rest); lazy_wake's alarm thread takes the same mutex.
SchedulerProfile profile_from_environment(SchedulerProfile profile) {
  const char* env = std::getenv("KINFORMER_HOME_CPU");
  if (!env) return profile;
  const std::string_view value(env);
  if (value == "off") {
    profile.home_cpu = false;
  } else if (value != "on") {
    // A "0" or "false" meant as off must not pin silently.
    log::warn("scheduler", "KINFORMER_HOME_CPU is neither on nor off; ignored", {{"value", value}});
  }
  return profile;
}

void configure_scheduler(caf::actor_system_config& config, SchedulerProfile profile) {
  config.set("scheduler.policy", lazy_wake);
  config.set("scheduler.max-threads", 2);
  profile = profile_from_environment(profile);
  config.module_factories.emplace_back(
      [profile](caf::actor_system& system) { return make_scheduler(system, profile); });
}

}  // namespace kinformer::actors
