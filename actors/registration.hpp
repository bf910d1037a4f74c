// actors/registration.hpp
//
// A handler's registration with one informer — {id, group, priority, predicate,
// resync period, failure policy, handler actor} — and the status flags the actors
// publish for readers on other threads (the SharedInformer facade, handles).
//
// Contract
//   * A Registration is immutable once sent; its RegistrationStatus is written
//     only by the Processor and read from any thread.
//   * Registration handle HasSynced (informer-semantics.md §7.6) =
//     InformerStatus::distributed_synced && status.attached && pending_initial == 0:
//     the initial list (or the replay of a late joiner) has left the handler's
//     group (handled, or ended by a `stop` or a predicate before it).
//   * InformerStatus::indexer_synced: the first list has been applied to the
//     Indexer (the informer's has_synced(), §7.1). distributed_synced: it has also
//     reached the Processor.
//   * failed: the registration was removed by its supervision (restart intensity
//     exceeded, or a dead actor that cannot be restarted); failure() says why.
// Threading: atomics (and failure() under a mutex); any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include "actors/notification.hpp"
#include "actors/predicates.hpp"

namespace kinformer::actors {

/// What the Processor does when a handler fails on a notification (an exception
/// it reports, the death of its actor, or no answer within hop_timeout).
enum class FailurePolicy : std::uint8_t {
  restart,  // dead-letter what failed, end the actor, start a new one after a back-off
  retry,    // send what failed again after a back-off, `retries` times, then dead-letter it
  skip,     // dead-letter what failed and go on at once
};

struct SupervisionOptions {
  FailurePolicy policy = FailurePolicy::restart;
  /// Back-off before a restart or a retry: initial, doubling up to cap (the
  /// design's retry policy: 1 s … 16 s).
  std::chrono::milliseconds backoff_initial{1000};
  std::chrono::milliseconds backoff_cap{16000};
  /// retry: attempts after the first before the notification is dead-lettered.
  std::size_t retries = 3;
  /// Restart intensity (Erlang/OTP): more than max_restarts restarts within
  /// restart_window mark the registration failed and remove it.
  std::size_t max_restarts = 5;
  std::chrono::milliseconds restart_window{60000};
  /// A batch not answered within this is a failure of the whole batch; 0 = no limit.
  std::chrono::milliseconds hop_timeout{0};
};

struct HandlerOptions {
  /// 0: no resync notifications (updates with old == new) for this handler; else
  /// its own period (at least 1 s), checked every min-over-handlers period.
  std::chrono::milliseconds resync_period{0};
  /// Handlers of one group form one chain; "" = a group of its own (broadcast).
  std::string group;
  /// Order within the group: lower first; ties by registration order.
  int priority = 0;
  /// Which notifications reach this handler (default: all).
  Predicate predicate;
  SupervisionOptions supervision;
  /// Names the handler in metrics and log lines; "" = "handler-<registration id>".
  std::string name;
};

/// Makes a fresh handler actor for a restart; empty = the actor cannot be restarted.
using HandlerFactory = std::function<HandlerActor(caf::actor_system&)>;

struct RegistrationStatus {
  std::atomic<bool> attached{false};             // the Processor took it (replay queued)
  std::atomic<std::int64_t> pending_initial{0};  // initial-list adds still in its group
  std::atomic<std::uint64_t> handled_batches{0};
  std::atomic<std::uint64_t> restarts{0};
  std::atomic<std::uint64_t> dead_letters{0};  // notifications given up on
  std::atomic<bool> removed{false};            // detached, failed, or its informer drained
  std::atomic<bool> failed{false};             // removed by supervision (see failure())

  void fail(std::string why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = std::move(why);
    }
    failed = true;
    removed = true;
  }
  std::string failure() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failure_;
  }

 private:
  mutable std::mutex mu_;
  std::string failure_;  // guarded by mu_
};

struct Registration {
  RegistrationId id = 0;
  HandlerActor handler;
  HandlerFactory factory;
  HandlerOptions options;
  /// The informer spawned the handler actor (lambda form): it ends it on removal.
  bool owned = false;
  std::shared_ptr<RegistrationStatus> status = std::make_shared<RegistrationStatus>();
};
using RegistrationPtr = std::shared_ptr<const Registration>;

/// The handler's name in metrics and log lines (HandlerOptions::name).
inline std::string handler_name(const Registration& registration) {
  return registration.options.name.empty() ? "handler-" + std::to_string(registration.id)
                                           : registration.options.name;
}
/// Its group's name there: the group, or the handler's name for a group of its own.
inline std::string group_name(const Registration& registration) {
  return registration.options.group.empty() ? handler_name(registration) : registration.options.group;
}

struct InformerStatus {
  std::atomic<bool> indexer_synced{false};
  std::atomic<bool> distributed_synced{false};
  std::atomic<std::uint64_t> notifications{0};     // handed to the Processor
  std::atomic<std::uint64_t> handler_failures{0};  // handler failures of any kind
  std::atomic<std::uint64_t> dead_letters{0};      // over every registration
  std::atomic<std::uint64_t> backlog_max{0};       // the largest coalesced group backlog seen
  std::atomic<std::uint64_t> groups_cut_loose{0};  // times a lagging group let go of the credit it held
};

}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::RegistrationPtr)
