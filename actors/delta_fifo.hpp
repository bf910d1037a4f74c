// actors/delta_fifo.hpp
//
// DeltaFIFOActor: the runtime DeltaFIFO (runtime/delta_fifo.hpp) owned by one
// actor between the Reflector (producer) and the Controller (consumer)
// (architecture.md §4).
//
// Contract
//   * Producers send whole batches and get the queue depth back, which the
//     Reflector compares with its high-water mark to pause reading the watch.
//     depth(mark) is answered once the depth is at or below `mark` (at once if it
//     is, else after the pops that bring it there, or at shutdown): a paused
//     producer resumes the moment the queue has drained that far.
//   * The Controller pulls: pop(n) answers at once with up to n keys, or, on an
//     empty queue, later through a response promise when something arrives (at most
//     one pending pop is expected; more are answered in arrival order). A parked
//     pop is also answered, with an empty batch, when the FIFO becomes synced
//     with nothing to hand out (an empty first list), so the consumer learns it.
//   * shutdown closes the FIFO: queued keys still drain; pending and later pops on
//     an empty closed FIFO fail with Errc::fifo_closed; then the actor quits.
//   * A transformer error rejects the whole batch (replace) or drops and reports
//     the event (deltas), as client-go does (informer-semantics.md §7.10).
//   * Memory: while a replace of more than 16384 keys is popped, the actor calls
//     malloc_trim(0) every 16384 pops, so that the popped part of the queue goes
//     back to the OS as the cache fills (glibc would keep it resident).
// Errors: Errc values converted to caf::error.
#pragma once

#include <cstddef>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/informer_metrics.hpp"
#include "actors/messages.hpp"

namespace kinformer::actors {

using DeltaFIFOActor = caf::typed_actor<
    caf::replies_to<replace_atom, ListSnapshotPtr>::with<std::size_t>,  // -> queue depth
    caf::replies_to<deltas_atom, DeltasPtr>::with<std::size_t>,    // -> queue depth
    caf::replies_to<resync_atom>::with<std::size_t>,                    // -> queue depth
    caf::replies_to<pop_atom, std::size_t>::with<PoppedBatchPtr>,
    caf::replies_to<synced_atom>::with<bool>,
    caf::replies_to<depth_atom>::with<std::size_t>,
    caf::replies_to<depth_atom, std::size_t>::with<std::size_t>,  // -> the depth, once <= the mark
    caf::reacts_to<shutdown_atom>>;

/// Spawns the actor around a DeltaFIFO built with `options`; `metrics` (optional)
/// gets its depth, adds and pops (actors/informer_metrics.hpp).
DeltaFIFOActor spawn_delta_fifo(caf::actor_system& system, DeltaFIFOOptions options,
                                InformerMetricsPtr metrics = nullptr);

}  // namespace kinformer::actors
