// actors/handler.hpp
//
// Handler actors built from functions: the lambda form of a handler
// (on_add / on_update / on_delete; architecture.md §4 "Handler"). Any other
// typed actor implementing HandlerActor (actors/notification.hpp) works as well.
//
// Contract
//   * Each handler is its own actor: it calls its functions one notification at a
//     time, in order, then answers (handled, registration).
//   * A function that throws does not end the actor or touch other handlers: the
//     exception is caught, counted in HandlerStats and logged (first few), and the
//     next notification is handled.
//   * Missing functions are skipped (client-go's ResourceEventHandlerFuncs).
//   * on_delete gets a DeletedObject: the final object, or a tombstone whose key()
//     is the tombstone's key (client-go's DeletionHandlingMetaNamespaceKeyFunc).
// Threading: the functions run on the actor's scheduler thread, one at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include <caf/fwd.hpp>

#include "actors/notification.hpp"

namespace kinformer::actors {

/// What on_delete receives: the final object, or the tombstone of an object whose
/// final state is unknown (then last_known() may be null).
struct DeletedObject {
  ObjectPtr object;
  TombstonePtr tombstone;

  bool is_tombstone() const noexcept { return tombstone != nullptr; }
  /// The object's key, or the tombstone's key.
  std::string_view key() const noexcept { return tombstone ? std::string_view(tombstone->key) : object->key(); }
  /// The final object, or the tombstone's last known state (may be null).
  const ObjectPtr& last_known() const noexcept { return tombstone ? tombstone->last_known : object; }
};

struct HandlerFuncs {
  std::function<void(const ObjectPtr& object, bool is_in_initial_list)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  std::function<void(const DeletedObject& deleted)> on_delete;
};

/// Counters of one handler actor; any thread may read them.
struct HandlerStats {
  std::atomic<std::uint64_t> notifications{0};  // handled, failed ones included
  std::atomic<std::uint64_t> failures{0};       // a function threw
};

/// Called once per notification; what every function-based handler runs.
using NotificationFunc = std::function<void(const Notification&)>;

/// Dispatches a notification to the matching function of `funcs`.
NotificationFunc dispatch_to(HandlerFuncs funcs);

/// Spawns a handler actor around `func`; `stats` (optional) receives its counters.
HandlerActor spawn_handler(caf::actor_system& system, NotificationFunc func,
                           std::shared_ptr<HandlerStats> stats = nullptr);

}  // namespace kinformer::actors
