// actors/controller.hpp
//
// ControllerActor: pulls popped deltas from the DeltaFIFO actor, applies them to
// the Indexer in pop order and hands the resulting notifications on to the
// Processor in batches, within the credit the Processor grants
// (architecture.md §4 "Controller"; informer-semantics.md §6, §7.2).
//
// Contract
//   * One pop in flight at a time, asking for min(credit, max_batch) keys; no pop
//     while the credit is used up, so neither the FIFO nor the Processor floods
//     this actor's mailbox or the Processor's. The Processor gives a batch's
//     credit back once its handler groups handled it (actors/processor.hpp,
//     "Credit"): under a flood the events wait in the FIFO.
//   * Per delta (DeltaApplier): Added/Updated/Replaced/Sync on a cached key →
//     Indexer update, updated(old, new); on an absent key → Indexer add,
//     added(new, is_in_initial_list); Deleted → Indexer delete, deleted(final
//     object or tombstone). Notifications are sent only after the Indexer has the
//     change, so a handler always finds the cache at least as new as its event.
//   * After each batch, until synced, it asks the FIFO whether it has synced; the
//     first yes sets InformerStatus::indexer_synced and sends `synced` to the
//     Processor behind the last initial batch.
//   * attach: the Controller snapshots the cache (its own writes only, so the
//     snapshot matches the stream) and forwards the registration with that replay;
//     detach and swap are forwarded in order too.
//   * resync (from the Processor, whose per-handler timers decide it): asks the
//     FIFO to resync.
//   * When the FIFO reports it is closed and drained (or is gone), the Controller
//     sends `drain` to the Processor and quits.
// Threading: the Indexer's only writer.
// Logs (runtime/log.hpp, component "controller"): a pop that failed other than by shutdown.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/delta_fifo.hpp"
#include "actors/informer_metrics.hpp"
#include "actors/notification.hpp"
#include "actors/processor.hpp"
#include "actors/registration.hpp"
#include "runtime/indexer.hpp"

namespace kinformer::actors {

using ControllerActor =
    caf::typed_actor<caf::reacts_to<credit_atom, std::size_t>, caf::reacts_to<resync_atom>,
                     caf::reacts_to<attach_atom, RegistrationPtr>,
                     caf::reacts_to<detach_atom, RegistrationId>, caf::reacts_to<swap_atom, RegistrationPtr>>;

/// Turns an object into its typed form once, at ingest (Informer<T>); null = not
/// decodable (typed handlers skip it and count it).
using Decoder = std::function<std::shared_ptr<const void>(const Object&)>;

/// The Controller's work without the actor: applies popped deltas to the Indexer
/// and produces the notifications (informer-semantics.md §6 table).
class DeltaApplier {
 public:
  DeltaApplier(std::shared_ptr<Indexer> indexer, Decoder decoder = {});

  /// Applies `popped` to the Indexer and appends its notifications to `out`.
  void apply(const PoppedDeltas& popped, std::vector<Notification>& out);
  /// The cache as `added` notifications with the initial-list flag (a late joiner's replay).
  std::vector<Notification> snapshot() const;

 private:
  std::shared_ptr<const void> decode(const ObjectPtr& object);

  std::shared_ptr<Indexer> indexer_;
  Decoder decoder_;
  // key -> decoded object, for the old side of updates and for replays; only with a decoder
  std::unordered_map<std::string, std::shared_ptr<const void>> typed_;
};

struct ControllerOptions {
  DeltaFIFOActor fifo;
  ProcessorActor downstream;
  std::shared_ptr<Indexer> indexer;
  Decoder decoder;
  std::size_t max_batch = 256;  // keys per pop
  std::shared_ptr<InformerStatus> status = std::make_shared<InformerStatus>();
  /// Batches, apply latency, notifications (actors/informer_metrics.hpp); null = none.
  InformerMetricsPtr metrics;
};

/// Spawns the Controller; it introduces itself to the downstream Processor and
/// starts pulling once it has credit.
ControllerActor spawn_controller(caf::actor_system& system, ControllerOptions options);

}  // namespace kinformer::actors
