// actors/scheduler.hpp
//
// configure_scheduler(): the CAF scheduler profile of every kinformer process —
// the CLI, the examples, the benches, the test fixtures on the real scheduler —
// and the one call a user makes on their own actor_system_config (README,
// "Embedding an informer").
//
// Contract
//   * The profile: 2 worker threads over one JobQueue (actors/job_queue.hpp;
//     scheduler.policy 'lazy_wake'). Idle workers sleep on it without a timeout, so
//     an idle process uses no CPU; a job a running worker creates stays with that
//     worker unless a backlog builds, so an event's hops do not wake the other one.
//     Latency trade-off and the measurements behind it: actors/scheduler.cpp.
//   * Sets the values with set(), so CAF's command line and INI file (when the
//     program calls parse()) still override them (caf-0.17.md §9); a
//     scheduler.policy of 'sharing', 'stealing' or 'testing' gets CAF's own.
//   * Call once, before the actor_system is constructed.
// Threading: the config is not shared yet; call from the thread that owns it.
#pragma once

#include <caf/fwd.hpp>

namespace kinformer::actors {

/// Sets the profile on `config`.
void configure_scheduler(caf::actor_system_config& config);

}  // namespace kinformer::actors
