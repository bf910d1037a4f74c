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
//     is_sync() is true and such notifications only go to handlers whose resync
//     period is due (actors/processor.hpp).
//   * A NotificationBatch holds notifications in order; it is immutable and may be
//     shared by every handler (NotificationBatchPtr).
//   * A handler actor answers every (notify, registration, batch) with
//     (handled, registration, HopReport): for each position of the batch, `next`
//     (the notification goes on along its chain) unless the report lists it as
//     stopped; a handler that failed on one notification says where (failed_at)
//     and why, and has not handled the positions after it. The Processor sends a
//     handler one batch at a time and may answer it later through a response
//     promise (actors/processor.hpp says what a timeout does).
// Threading: immutable values shared between actors.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "runtime/delta.hpp"
#include "runtime/object.hpp"

namespace kinformer::actors {

enum class NotificationType : std::uint8_t { added, updated, deleted };

struct Notification {
  NotificationType type = NotificationType::added;
  ObjectPtr object;                 // the new state; for deleted the final state (null for a tombstone)
  ObjectPtr old_object;             // updated only: the state the cache held before
  TombstonePtr tombstone;           // deleted only, when the final state is unknown
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
  std::string_view key() const noexcept {
    return tombstone ? std::string_view(tombstone->key) : object->key();
  }
};

struct NotificationBatch {
  std::vector<Notification> items;
};
using NotificationBatchPtr = std::shared_ptr<const NotificationBatch>;

/// Identifies one registration of a handler in one informer.
using RegistrationId = std::uint64_t;

/// What a hop decides for one notification.
enum class Verdict : std::uint8_t {
  next,  // hand it on to the next matching handler of the group
  stop,  // its route in this group ends here
};

/// A handler's answer to one batch.
struct HopReport {
  static constexpr std::uint32_t no_failure = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> stopped;    // positions answered `stop`, ascending
  std::uint32_t failed_at = no_failure;  // first position that failed; later ones were not handled
  std::string failure;                   // why, for the log

  bool failed() const noexcept { return failed_at != no_failure; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HopReport& x) {
  return f(caf::meta::type_name("HopReport"), x.stopped, x.failed_at, x.failure);
}

/// The interface of every handler actor.
using HandlerActor =
    caf::typed_actor<caf::replies_to<notify_atom, RegistrationId,
                                     NotificationBatchPtr>::with<handled_atom, RegistrationId, HopReport>>;

}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::NotificationBatchPtr)
