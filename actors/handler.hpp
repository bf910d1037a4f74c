// actors/handler.hpp
//
// Handler actors built from functions or from a class (architecture.md §4
// "Handler"). Any other typed actor implementing HandlerActor
// (actors/notification.hpp) works as well, including one that answers later
// through a response promise.
//
// Contract
//   * Each handler is its own actor: it calls its functions one notification at a
//     time, in order, then answers (handled, registration, HopReport).
//   * Forms: HandlerFuncs (void functions: every notification goes on, `next`),
//     ChainFuncs (functions returning Verdict::next or Verdict::stop), a subclass
//     of Handler (virtual on_add / on_update / on_delete returning Verdict), or
//     any HopFunc.
//   * A function that throws does not end the actor: the exception is caught,
//     counted in HandlerStats, and reported as the batch's failed_at with its
//     what(); the rest of the batch is left unhandled, and the registration's
//     failure policy decides what comes next (actors/processor.hpp).
//   * Missing functions are skipped (client-go's ResourceEventHandlerFuncs) and
//     answer `next`.
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
  std::string_view key() const noexcept {
    return tombstone ? std::string_view(tombstone->key) : object->key();
  }
  /// The final object, or the tombstone's last known state (may be null).
  const ObjectPtr& last_known() const noexcept { return tombstone ? tombstone->last_known : object; }
};

struct HandlerFuncs {
  std::function<void(const ObjectPtr& object, bool is_in_initial_list)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  std::function<void(const DeletedObject& deleted)> on_delete;
};

/// The chain form: each function says whether the notification goes on.
struct ChainFuncs {
  std::function<Verdict(const ObjectPtr& object, bool is_in_initial_list)> on_add;
  std::function<Verdict(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  std::function<Verdict(const DeletedObject& deleted)> on_delete;
};

/// The class form: override what you need; the defaults answer `next`.
class Handler {
 public:
  virtual ~Handler() = default;
  virtual Verdict on_add(const ObjectPtr& object, bool is_in_initial_list);
  virtual Verdict on_update(const ObjectPtr& old_object, const ObjectPtr& new_object);
  virtual Verdict on_delete(const DeletedObject& deleted);
};

/// Counters of one handler actor; any thread may read them.
struct HandlerStats {
  std::atomic<std::uint64_t> notifications{0};  // handled, failed ones included
  std::atomic<std::uint64_t> failures{0};       // a function threw
};

/// Called once per notification (void: always `next`).
using NotificationFunc = std::function<void(const Notification&)>;
/// Called once per notification; its verdict routes the notification on.
using HopFunc = std::function<Verdict(const Notification&)>;

/// Dispatches a notification to the matching function of `funcs`.
NotificationFunc dispatch_to(HandlerFuncs funcs);
HopFunc dispatch_to(ChainFuncs funcs);
HopFunc dispatch_to(std::shared_ptr<Handler> handler);
/// A NotificationFunc as a HopFunc answering `next`.
HopFunc always_next(NotificationFunc func);

/// Spawns a handler actor around `func`; `stats` (optional) receives its counters.
HandlerActor spawn_handler(caf::actor_system& system, HopFunc func,
                           std::shared_ptr<HandlerStats> stats = nullptr);
HandlerActor spawn_handler(caf::actor_system& system, NotificationFunc func,
                           std::shared_ptr<HandlerStats> stats = nullptr);

}  // namespace kinformer::actors
