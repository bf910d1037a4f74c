// runtime/delta.hpp
//
// Delta, Deltas and Tombstone: what the DeltaFIFO queues per key and what the
// Controller pops (informer-semantics.md §3.1, §3.10).
//
// Contract
//   * A Delta holds an object, or a Tombstone when the object is known to be gone
//     but its final state is not (client-go's DeletedFinalStateUnknown); then
//     type is always DeltaType::deleted and tombstone->last_known may be null.
//   * Deltas are oldest first and never empty while queued.
// Threading: immutable values sharing immutable objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/object.hpp"

namespace kinformer {

enum class DeltaType : std::uint8_t { added, updated, deleted, replaced, sync };

/// "added", "updated", "deleted", "replaced", "sync".
std::string_view to_string(DeltaType type) noexcept;

/// "We know it is gone; we do not know its final state."
struct Tombstone {
  std::string key;
  ObjectPtr last_known;  // the newest state the client had, or null
};
using TombstonePtr = std::shared_ptr<const Tombstone>;

struct Delta {
  DeltaType type = DeltaType::added;
  ObjectPtr object;        // null iff this is a tombstone
  TombstonePtr tombstone = nullptr;  // set only for replace()'s deletions

  bool is_tombstone() const noexcept { return tombstone != nullptr; }
  /// The object's key, or the tombstone's.
  std::string_view key() const noexcept { return tombstone ? std::string_view(tombstone->key) : object->key(); }
  /// The object, or the tombstone's last known object (may be null).
  const ObjectPtr& newest_object() const noexcept { return tombstone ? tombstone->last_known : object; }
};

using Deltas = std::vector<Delta>;

}  // namespace kinformer
