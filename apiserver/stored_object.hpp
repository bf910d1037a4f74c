// apiserver/stored_object.hpp
//
// StoredObject and StoreEvent: one stored version of an object and one change, as
// every Storage (apiserver/storage/storage.hpp) hands them out: the serialized JSON (apiVersion
// and kind first, so a built-in list item is a suffix of it), the labels and the
// selectable fields, parsed once.
//
// Contract
//   * make_stored() builds a StoredObject from a complete object (metadata.name set) at
//     the revision the storage gives it, which it writes as metadata.resourceVersion: a
//     stored object's resourceVersion is never read back from its text.
//   * make_event() renders the event's line with the one watch encoder (watch_encoder.hpp).
//   * object_key() is the key lists are ordered by: "namespace/name", or "name".
// Threading: both are immutable once built; object() may be called from any thread.
// Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/resources.hpp"
#include "runtime/object.hpp"

namespace kinformer::apiserver {

/// One stored version of an object. Immutable; shared by the store, the history and
/// every watcher that is sending it.
struct StoredObject {
  const ResourceType* type = nullptr;
  std::string key;        // "namespace/name", or "name" for a cluster-scoped kind
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::uint64_t resource_version = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> fields;  // every selectable field path -> value ("" when unset)
  std::string json;                           // the whole object, serialized, apiVersion and kind first
  std::size_t untyped_from = 0;  // json[untyped_from] starts what follows apiVersion/kind (0: neither is set)

  /// The object without apiVersion and kind (a built-in list item) as two pieces to
  /// concatenate, both pointing into `json` or static text.
  std::pair<std::string_view, std::string_view> untyped_pieces() const {
    if (untyped_from == 0) return {json, {}};
    if (json[untyped_from] == '}') return {"{}", {}};
    return {"{", std::string_view(json).substr(untyped_from + 1)};
  }

  /// The same content as an immutable runtime Object, parsed on first use and then
  /// the same ObjectPtr for every caller, so an informer embedded beside the store
  /// caches the store's objects instead of copies. Any thread may call it.
  ObjectPtr object() const;

  StoredObject() = default;
  StoredObject(const StoredObject&) = delete;
  StoredObject& operator=(const StoredObject&) = delete;
  ~StoredObject();

 private:
  // The parsed Object's reference, released into the pointer: set once, by the first reader.
  mutable std::atomic<const Object*> parsed_{nullptr};
};
using StoredPtr = std::shared_ptr<const StoredObject>;

enum class EventType { added, modified, deleted };

struct StoreEvent {
  std::uint64_t resource_version = 0;
  EventType type = EventType::added;
  StoredPtr object;    // the new state; for deleted, the last state carrying the deletion's RV
  StoredPtr previous;  // the state before the event (nullptr for added)
  std::string line;    // {"type":"...","object":{...}}\n, rendered once for every watcher
};
using EventPtr = std::shared_ptr<const StoreEvent>;

/// Builds a StoredObject from a complete object (selectable fields, labels, key) at
/// `revision`, which it sets as the object's metadata.resourceVersion.
StoredPtr make_stored(const ResourceType& type, nlohmann::json object, std::uint64_t revision);

/// The event with its watch line ({"type":"ADDED","object":{...}}\n) rendered once.
EventPtr make_event(EventType type, StoredPtr object, StoredPtr previous);

/// "namespace/name", or "name" for an empty namespace.
std::string object_key(std::string_view ns, std::string_view name);

}  // namespace kinformer::apiserver
