// actors/scheduler.hpp
//
// configure_scheduler(): the CAF scheduler profile of every kinformer process —
// the CLI, the examples, the benches, the test fixtures on the real scheduler —
// and the one call a user makes on their own actor_system_config (README,
// "Embedding an informer").
//
// Contract
//   * The profile: CAF's "sharing" policy (one job queue; idle workers sleep on
//     it without a timeout, so an idle process uses no CPU) with 2 threads.
//     Latency trade-off and the measurements behind it: actors/scheduler.cpp.
//   * Sets the values with set(), so CAF's command line and INI file (when the
//     program calls parse()) still override them (caf-0.17.md §9).
//   * Call before the actor_system is constructed.
// Threading: the config is not shared yet; call from the thread that owns it.
#pragma once

#include <caf/fwd.hpp>

namespace kinformer::actors {

/// Sets the profile on `config`.
void configure_scheduler(caf::actor_system_config& config);

}  // namespace kinformer::actors
