#include "actors/scheduler.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

namespace kinformer::actors {

// Two workers sharing one queue (CAF's "sharing" policy): an idle worker sleeps on
// the queue's condition variable until a job is enqueued, with no timeout.
//
// Why not CAF's default (work stealing, 4 threads): after each job an idle worker
// polls 100 times, then 500 times with a 50 µs sleep between polls (~25 ms), then
// wakes every 10 ms to steal. perf record -g on pod_logger at 100 writes/s (issue 29):
// 64 % of samples under clock_nanosleep(50 µs), 94 % in the CAF workers, 116 context
// switches and 21 % of a core per event stream; idle 0.75 % of a core (195 wake-ups/s).
//
// Measured with bench/bench_vs_client_go (our informer's process only; 3 runs each,
// medians; 2 cores at load 10-13 shared with builds and a training job;
// the peer's figures beside ours in the same runs were 3.6-4.4 % at 100/s):
//   profile                                   idle    100/s: CPU  p50/p99 us   switches   1000/s: CPU  p50/p99 us
//   stealing, CAF's polling (1 run)           1.17 %      18.1 %  1077/4740      123          20.1 %  526/13272
//   stealing, no moderate polling (1 run)     1.26 %       3.5 %  1009/5617      4.3          11.6 %  362/6093
//   stealing, + relaxed sleep 1 s             0.04 %       2.2 %  1059/12954     3.8           8.5 %  716/18916
//   stealing, 1 thread, relaxed sleep 1 s     0.04 %       2.1 %   914/12370     3.9           8.2 %  589/15021
//   sharing, 1 thread                         0 %          2.8 %  1047/13248     3.9           8.6 %  460/12586
//   sharing, 2 threads (this profile)         0 %          2.4 %  1049/16585     5.3           9.8 %  633/14761
// Beyond 10 ms of relaxed sleep, the stealing profiles are within this machine's
// noise of each other and of sharing. Sharing is chosen because it has no timed
// wake-up at all (idle is 0, not 0.04 %), and because with work stealing a sleeping
// worker only looks for work at its relaxed interval: at 1 s, a message an actor
// sends while its worker runs a slow handler could wait up to 1 s behind it, where
// under sharing the other worker takes it at once. Its price is about 1.5 more
// context switches per event than stealing (a worker that enqueues wakes the idle
// one). bench_pipeline gave the same or more events/s than CAF's default (e.g. one
// handler 221-231k/s against 95-136k/s, 16 handlers 161-236k/s against 141-171k/s).
// Two threads, not one: a second informer or a handler that computes still gets the
// second core, and one thread measured no cheaper (sharing, 4 alternating runs each at
// 100 and 1000 writes/s: 2.3-3.5 % and 6.5-12.2 % of a core with 1 thread, 2.6-3.3 % and
// 7.4-14.8 % with 2, though 2.2-3.7 against 3.9-6.0 switches per event). No timed polling also keeps scheduler threads from preempting the
// inference actor's model threads (README "Batched inference"). And ThreadSanitizer
// sees its hand-overs: libcaf_core is not instrumented, so TSan cannot see the
// atomics of the work-stealing queues, but sharing hands jobs over under a mutex,
// which it does see (scripts/tsan.supp covers the rest).
void configure_scheduler(caf::actor_system_config& config) {
  config.set("scheduler.policy", caf::atom("sharing"));
  config.set("scheduler.max-threads", 2);
}

}  // namespace kinformer::actors
