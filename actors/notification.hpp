// actors/notification.hpp
//
// What the Controller hands on after applying popped deltas to the Indexer, and
// the interface every handler actor implements (architecture.md §4 "Controller",
// "Handler"; informer-semantics.md §6, §7.2–7.3, §7.9).
//
// Contract
//   * A Notification is added(object, is_in_initial_list), updated(old, object) or
//     deleted(object or tombstone). A resync, or a relist that found an object
//     unchanged, is an update with old and new at the same resourceVersion:
//     is_sync() is true and such notifications only go to handlers that asked for
//     resyncs (HandlerOptions::resync_period > 0).
//   * A NotificationBatch holds the notifications of consecutive pops in pop order;
//     it is immutable and shared by every handler (NotificationBatchPtr).
//   * A handler actor answers every (notify, registration, batch) with
//     (handled, registration) once it has processed the batch: that answer is its
//     credit back to the broadcaster (never a request: nothing waits on it with a
//     timeout). Handlers must not block for long; what they do asynchronously
//     afterwards is up to them.
// Threading: immutable values shared between actors.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "runtime/delta.hpp"
#include "runtime/object.hpp"

namespace kinformer::actors {

enum class NotificationType : std::uint8_t { added, updated, deleted };

struct Notification {
  NotificationType type = NotificationType::added;
  ObjectPtr object;        // the new state; for deleted the final state (null for a tombstone)
  ObjectPtr old_object;    // updated only: the state the cache held before
  TombstonePtr tombstone;  // deleted only, when the final state is unknown
  bool is_in_initial_list = false;  // added only (informer-semantics.md §7.9)
  /// Typed layer (Informer<T>): the decoded object / old object, or null.
  std::shared_ptr<const void> typed_object;
  std::shared_ptr<const void> typed_old_object;

  /// updated with old and new at the same resourceVersion (a resync).
  bool is_sync() const noexcept {
    return type == NotificationType::updated && old_object && object &&
           old_object->resource_version() == object->resource_version();
  }
  /// The key of the object or of the tombstone.
  std::string_view key() const noexcept { return tombstone ? std::string_view(tombstone->key) : object->key(); }
};

struct NotificationBatch {
  std::vector<Notification> items;
};
using NotificationBatchPtr = std::shared_ptr<const NotificationBatch>;

/// Identifies one registration of a handler in one informer.
using RegistrationId = std::uint64_t;

/// The interface of every handler actor.
using HandlerActor = caf::typed_actor<
    caf::replies_to<notify_atom, RegistrationId, NotificationBatchPtr>::with<handled_atom, RegistrationId>>;

struct HandlerOptions {
  /// 0: no resync notifications (updates with old == new) for this handler;
  /// otherwise it gets every resync the informer makes (per-handler periods come
  /// with the processor).
  std::chrono::milliseconds resync_period{0};
};

}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::NotificationBatchPtr)
