// actors/scheduler.hpp
//
// configure_scheduler(): the CAF scheduler profile of every kinformer process —
// the CLI, the examples, the benches, the test fixtures on the real scheduler —
// and the one call a user makes on their own actor_system_config (README,
// "Embedding an informer").
//
// Contract
//   * The profile: kinformer's own policy, 'lazy_wake' (actors/job_queue.hpp), with 2
//     worker threads. A job from outside the workers (an I/O thread, the timer) wakes a
//     sleeping worker; a job a running worker creates stays with that worker unless a
//     backlog builds, so an event's hops do not wake the other one. The informer's own
//     actors are declared brief (every_actor.hpp's declare_brief()): what they leave
//     queued needs no alarm. Any other actor, and a handler's user code (a MayBlock
//     scope), arms an alarm when it leaves a job beside a sleeping worker, so a job
//     queued behind one that blocks waits about 1 ms, not until it returns. Idle, every
//     thread sleeps without a timeout: no CPU. Predicates, transforms and index
//     functions run inside the brief actors and must not block. The trade-offs and the
//     measurements behind them: actors/scheduler.cpp.
//   * The home CPU (runtime/home_cpu.hpp), unless the profile's home_cpu is false or
//     the environment has KINFORMER_HOME_CPU=off (profile_from_environment()): the HTTP client's I/O threads and
//     worker 0 are pinned to one CPU, the one the first I/O thread started on, and an
//     I/O thread's job wakes that worker, so an event's wake-up crosses no CPU. The
//     other worker, the alarm and every other thread run anywhere. Threads started from
//     a pinned thread inherit its pin (a detached actor spawned by a handler): a
//     long-lived one that computes calls home_cpu::leave() first, as the inference
//     actor's model worker does. The cost: while another process keeps the home CPU
//     busy, the pinned I/O thread waits for it (actors/scheduler.cpp has the figures).
//   * scheduler.policy 'sharing' (CAF's: the idle worker wakes for every job) is the
//     alternative; any other name gets what CAF starts for it.
//   * Sets the values with set(), so CAF's command line and INI file (when the
//     program calls parse()) still override them (caf-0.17.md §9).
//   * Call once, before the actor_system is constructed.
// Threading: the config is not shared yet; call from the thread that owns it.
#pragma once

#include <caf/fwd.hpp>

namespace kinformer::actors {

struct SchedulerProfile {
  /// Pin the I/O threads and worker 0 to one CPU (above).
  bool home_cpu = true;
};

/// `profile` with the environment applied: KINFORMER_HOME_CPU=off turns the home CPU off,
/// =on leaves `profile` as it is, and any other value is logged as a warning and ignored.
[[nodiscard]] SchedulerProfile profile_from_environment(SchedulerProfile profile);

/// Sets `profile_from_environment(profile)` on `config`.
void configure_scheduler(caf::actor_system_config& config, SchedulerProfile profile = {});

}  // namespace kinformer::actors
