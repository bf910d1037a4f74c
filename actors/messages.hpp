// actors/messages.hpp
//
// The message payloads that travel between kinformer's actors in one process.
// Objects travel as shared pointers to immutable data (never copied); such types
// are whitelisted for CAF and are local-only (caf-0.17.md §4): payloads meant to
// cross processes get inspect() overloads instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include "runtime/delta.hpp"
#include "runtime/delta_fifo.hpp"
#include "runtime/object.hpp"

namespace kinformer::actors {

/// A full list for DeltaFIFO::replace(): items and the list's resourceVersion.
struct ListSnapshot {
  std::vector<ObjectPtr> items;
  std::string resource_version;
};
using ListSnapshotPtr = std::shared_ptr<const ListSnapshot>;

/// Watch events in arrival order, as deltas (added / updated / deleted; never a tombstone).
using DeltasPtr = std::shared_ptr<const Deltas>;

/// What one pop returns: up to n popped keys, in queue order.
using PoppedBatch = std::vector<PoppedDeltas>;
using PoppedBatchPtr = std::shared_ptr<const PoppedBatch>;

}  // namespace kinformer::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::ObjectPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::ListSnapshotPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::DeltasPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::PoppedBatchPtr)
