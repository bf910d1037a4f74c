// actors/registration.hpp
//
// A handler's registration with one informer, and the status flags the actors
// publish for readers on other threads (the SharedInformer facade, handles).
//
// Contract
//   * A Registration is immutable once sent; its RegistrationStatus is written
//     only by the broadcaster (attached, pending_initial, handled_batches,
//     removed) and read from any thread.
//   * Registration handle HasSynced (informer-semantics.md §7.6) =
//     InformerStatus::distributed_synced && status.attached && pending_initial == 0:
//     the initial list (or the replay of a late joiner) has been handled.
//   * InformerStatus::indexer_synced: the first list has been applied to the
//     Indexer (the informer's has_synced(), §7.1). distributed_synced: it has also
//     reached every handler's queue.
// Threading: atomics; any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/notification.hpp"

namespace kinformer::actors {

struct RegistrationStatus {
  std::atomic<bool> attached{false};           // the broadcaster took it (replay queued)
  std::atomic<std::int64_t> pending_initial{0};  // initial-list adds queued, not yet handled
  std::atomic<std::uint64_t> handled_batches{0};
  std::atomic<bool> removed{false};            // detached, or its actor went down
};

struct Registration {
  RegistrationId id = 0;
  HandlerActor handler;
  HandlerOptions options;
  /// The informer spawned the handler actor (lambda form): it ends it on removal.
  bool owned = false;
  std::shared_ptr<RegistrationStatus> status = std::make_shared<RegistrationStatus>();
};
using RegistrationPtr = std::shared_ptr<const Registration>;

struct InformerStatus {
  std::atomic<bool> indexer_synced{false};
  std::atomic<bool> distributed_synced{false};
  std::atomic<std::uint64_t> notifications{0};  // handed to the broadcaster
  std::atomic<std::uint64_t> handler_failures{0};  // handler actors that went down
};

}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::RegistrationPtr)
