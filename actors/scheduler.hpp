// actors/scheduler.hpp
//
// configure_scheduler(): the CAF scheduler profile of every kinformer process —
// the CLI, the examples, the benches, the test fixtures on the real scheduler —
// and the one call a user makes on their own actor_system_config (README,
// "Embedding an informer").
//
// Contract
//   * The profile: CAF's "sharing" policy with 2 worker threads. Idle workers sleep on
//     its queue without a timeout, so an idle process uses no CPU.
//   * Opt-in, scheduler.policy 'lazy_wake' (actors/job_queue.hpp): a job a running
//     worker creates stays with that worker unless a backlog builds, so an event's hops
//     do not wake the other one (about half the switches, less CPU at 1000 writes/s); a
//     job that has waited 1 ms beside a sleeping worker (its own worker blocks in a
//     handler, or is preempted) wakes that one through an alarm, so a handler that
//     blocks holds its siblings back by about 1 ms, not until it returns. Idle, it
//     uses no CPU either. The trade-offs and the measurements behind them:
//     actors/scheduler.cpp.
//   * Sets the values with set(), so CAF's command line and INI file (when the
//     program calls parse()) still override them (caf-0.17.md §9); a
//     scheduler.policy of 'lazy_wake' gets ours, any other what CAF starts for it.
//   * Call once, before the actor_system is constructed.
// Threading: the config is not shared yet; call from the thread that owns it.
#pragma once

#include <caf/fwd.hpp>

namespace kinformer::actors {

/// Sets the profile on `config`.
void configure_scheduler(caf::actor_system_config& config);

}  // namespace kinformer::actors
