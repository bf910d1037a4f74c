// actors/broadcaster.hpp
//
// BroadcasterActor: hands every notification batch from the Controller to every
// registered handler actor — the simple distribution that stands in for the
// Processor until it lands (architecture.md §4 "Processor").
//
// Contract
//   * Registration and removal are messages processed by this actor, between
//     batches, so a handler attached late gets its replay (the cache as `added`
//     with the initial-list flag, built by the Controller at the same point of the
//     stream) and then exactly the changes after it (informer-semantics.md §7.5).
//   * Per handler, batches arrive in order; at most `handler_window` batches are
//     in a handler's mailbox; the rest wait here, shared, not copied.
//   * Credit: the Controller may hand on at most `max_buffered_keys` popped keys
//     that some handler has not yet handled. A slow handler therefore slows the
//     informer down instead of growing memory without bound (the Processor will
//     add per-handler buffers and coalescing).
//   * Resync notifications (is_sync()) go only to handlers with a resync period.
//   * Removal drops what that handler still had queued here; a handler call in
//     progress finishes. Handlers the informer spawned (owned) are ended.
//   * A handler actor that dies is removed (counted in InformerStatus); the others
//     go on.
//   * drain: once every queue here is empty, owned handlers are ended and the
//     actor quits.
// Errors: none; unknown registrations are ignored (removal is idempotent).
#pragma once

#include <cstddef>
#include <memory>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/notification.hpp"
#include "actors/registration.hpp"

namespace kinformer::actors {

/// What the broadcaster sends credit to (the Controller).
using CreditSinkActor = caf::typed_actor<caf::reacts_to<credit_atom, std::size_t>>;

using BroadcasterActor = caf::typed_actor<
    caf::reacts_to<upstream_atom, CreditSinkActor>,                 // start granting credit
    caf::reacts_to<notify_atom, NotificationBatchPtr, std::size_t>,  // batch, credit it used
    caf::reacts_to<synced_atom>,                                    // upstream synced here
    caf::reacts_to<attach_atom, RegistrationPtr, NotificationBatchPtr>,  // with its replay
    caf::reacts_to<detach_atom, RegistrationId>,
    caf::reacts_to<handled_atom, RegistrationId>,
    caf::reacts_to<drain_atom>>;

struct BroadcasterOptions {
  /// Popped keys the Controller may have handed on and not all handlers handled.
  std::size_t max_buffered_keys = 1024;
  /// Batches in one handler's mailbox at most.
  std::size_t handler_window = 2;
  std::shared_ptr<InformerStatus> status = std::make_shared<InformerStatus>();
};

BroadcasterActor spawn_broadcaster(caf::actor_system& system, BroadcasterOptions options);

}  // namespace kinformer::actors
