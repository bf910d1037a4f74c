#include "actors/scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/job_queue.hpp"

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
  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    return d(self->parent()).queue.take();
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
caf::actor_system::module* make_scheduler(caf::actor_system& system) {
  const auto policy = caf::get_or(system.config(), "scheduler.policy", caf::atom("sharing"));
  if (policy == lazy_wake) return new caf::scheduler::coordinator<LazyWakePolicy>(system);
  if (policy == caf::atom("sharing")) return new caf::scheduler::coordinator<caf::policy::work_sharing>(system);
  if (policy == caf::atom("testing")) return new caf::scheduler::test_coordinator(system);
  return new caf::scheduler::coordinator<caf::policy::work_stealing>(system);
}

}  // namespace

// The default: CAF's "sharing" policy with 2 workers; idle workers sleep on its queue with
// no timeout (idle: 0 % of a core), and the idle worker wakes for every job enqueued.
//
// Opt-in, scheduler.policy 'lazy_wake': two workers over one JobQueue
// (actors/job_queue.hpp): a job from outside the workers (an I/O thread, the timer)
// wakes one; a job a running worker creates stays with that worker unless more than 4
// are queued or the oldest has waited over 200 µs.
// Why it is not the default: it breaks handler isolation. A job left behind the one a
// worker takes waits for that job to end, however long, unless a later push finds a
// backlog: an actor that sends one message to a handler that blocks and one to another
// handler (the Processor's fan-out) holds the second back until the first returns or an
// I/O event or timer arrives (tests/actors/job_queue_test.cpp shows it on the default
// profile's side). Waking a worker whenever a take leaves jobs behind restores isolation
// but also sharing's costs: 5.2-5.8 switches per event and client-go / ours CPU 1.41 and
// 1.60-1.63 at 100 and 1000 writes/s, against 2.6-3.0 and 1.67-1.68, 2.06-2.15 without
// it (2 alternating runs each, quiet machine). Bounding the wait needs a timed waker
// (Go's sysmon), which is the next step.
//
// What lazy_wake saves against sharing (issue 29): sharing wakes the idle worker on
// every enqueue, and an informer event crosses Reflector -> DeltaFIFO -> Controller ->
// Processor -> handler in about nine messages of a few µs each. perf record -g of
// bench_vs_client_go's informer at 100 writes/s under sharing: 5.9 context switches
// per event; 20 % of samples in finish_task_switch (this VM's pvm_irq_enable), 13 % in
// futex waits and wakes, 3.4 % waiting for the queue's mutex, the actors' own code a
// few % each; the I/O thread (epoll, recv, parse, the hand-off) took 46 % of samples.
// Same bench, one binary, lazy_wake and --scheduler.policy=sharing alternating, 4 runs
// each, medians (ranges), 2 cores at load 9-11 shared with builds and trainings:
//                 our CPU, % of a core          switches per event     our p50 / p99 µs
//   100/s         3.58 (2.44-3.82) vs 3.41      2.60 vs 5.87           1075 / 4946 vs 1022 / 3896
//   1000/s        11.0 (9.75-14.8) vs 17.0      2.50 vs 5.15            482 / 7382 vs  446 / 4328
//   10000/s       15.2 (9.65-16.9) vs 11.2      0.33 vs 0.49           2208 / 92910 vs 3302 / 186008
// (10000/s achieved 9996 against 8434 writes/s.) In 7 earlier runs at 100/s lazy_wake
// used 2.7-3.4 %, sharing 3.0-3.4 % in 5. The price is latency under CPU contention:
// a job waits for the worker that created it, also while that worker is preempted, where
// sharing's other worker would have taken it. An instrumented build (the I/O thread's
// hand-off time against the handler's entry, 2 runs each at load ~9) gave the in-process
// part at 100/s p50 254-269 µs, p99 3.5-4.1 ms with lazy_wake against 228-241 µs and
// 1.2-2.1 ms with sharing, where server-to-I/O-thread alone had p99 2.0-6.0 ms in both.
// Thresholds (2 runs each): (1 job, 20 µs) and (2 jobs, 50 µs) woke the other worker as
// often as sharing (5.2-5.9 switches per event at 100/s); (8 jobs, 1 ms) saved no more
// (3.2 and 2.8 per event at 100 and 1000/s).
// Floods (bench_pipeline, alternating): at 20k events most lines' medians were lower than
// sharing's within overlapping ranges, at 100k the informer lines fell within the runs'
// spread and the bare CAF 4-hop forward was lower (README "The scheduler profile").
// A user whose handlers never block may set scheduler.policy to 'lazy_wake'.
//
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
// while its peer runs a slow handler could wait that long); sharing has no timed
// wake-up at all (idle 0 %), which also keeps scheduler threads from
// preempting the inference actor's model threads (README "Batched inference").
// Two threads, not one: a second informer or a handler that computes still gets the
// second core. ThreadSanitizer sees the hand-overs: libcaf_core is not instrumented,
// but sharing (and JobQueue) hand jobs over under a mutex, which it sees
// (scripts/tsan.supp covers the rest).
void configure_scheduler(caf::actor_system_config& config) {
  config.set("scheduler.policy", caf::atom("sharing"));
  config.set("scheduler.max-threads", 2);
  config.module_factories.emplace_back(make_scheduler);
}

}  // namespace kinformer::actors
