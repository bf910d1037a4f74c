// apiserver/storage/storage.hpp
//
// Storage: what the API handlers (api.cpp, server.cpp), the read rules and the
// in-process StoreListWatch need from the place objects live. Two implementations:
// Store (apiserver/storage/store.hpp: memory, with the write-ahead log of apiserver/storage/)
// and EtcdStorage (apiserver/storage/etcd/etcd_storage.hpp: etcd 3.4, shared by several servers).
//
// Contract (both implementations; tests/apiserver/storage_conformance_test.cpp checks it)
//   * One global resourceVersion counter: every write takes a strictly greater RV
//     than any write before it, returned in metadata.resourceVersion. The RVs of
//     successive writes need not be contiguous (etcd's revisions count every key).
//   * create: 409 AlreadyExists for a taken name, 404 for a missing namespace.
//   * write: a metadata.resourceVersion in the mutation's result that is not the
//     stored one is 409 Conflict; a write that changes nothing takes no RV.
//   * remove: returns the last state carrying the deletion's RV; deleting a namespace
//     deletes its objects first (one DELETED event each).
//   * list: at_revision 0 reads the latest state; else exactly that state, 410
//     Expired when compacted. Pages (limit / after_key) read one snapshot.
//   * The watch members name the resource type, because etcd keeps one event window
//     per type (kube-apiserver's watch cache per resource): events_after(type, after)
//     answers the changes of `type` with RV > after, oldest first, each RV once, or
//     false when some of them are no longer kept (the caller answers 410). The memory
//     store keeps one history for every type and answers the other types' changes
//     too; watchers filter by type anyway (watch_filter.hpp). notify_after(type, rv)
//     wakes once when events_after(type, rv) has something to read.
//   * progress(type) and compacted_through(type) are per type as well: an idle type's
//     watchers still bookmark as the global revision moves (etcd's progress
//     notifications), and one busy type does not push another's events out.
//   * Unavailable backends (etcd unreachable) answer 503 ServiceUnavailable or 504
//     Timeout Status errors instead of blocking.
// Threading: every member is thread-safe. Waiter callbacks must only post work.
// Errors: ApiError values with kube-apiserver's code/reason/message; never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {

class Storage {
 public:
  /// Computes an object's new content from its current one (nullptr when absent).
  using Mutation = std::function<ApiResult<nlohmann::json>(const nlohmann::json* current)>;

  struct WriteResult {
    StoredPtr object;
    bool created = false;
  };

  struct ListQuery {
    std::string namespace_name;       // "" = every namespace
    std::uint64_t at_revision = 0;    // 0 = latest; else that snapshot (410 when compacted)
    std::string after_key;            // continue after this key
    std::size_t limit = 0;            // 0 = no limit
    std::function<bool(const StoredObject&)> filter;  // nullptr = everything
    /// Without a filter, in a snapshot (at_revision): the items after after_key, as the
    /// previous page counted them. The page then stops at its end instead of counting
    /// the rest again (a page costs O(page), not O(bucket)).
    std::optional<std::size_t> remaining_hint;
  };

  struct ListPage {
    std::vector<StoredPtr> items;  // in key order
    std::uint64_t revision = 0;    // the snapshot the page was read from
    std::string last_key;          // set when more matching items remain
    std::size_t remaining = 0;     // matching items after this page (with a filter: 1 when some remain)
  };

  struct Preconditions {
    std::string uid;
    std::string resource_version;
  };

  virtual ~Storage() = default;

  /// The newest revision this storage knows of.
  virtual std::uint64_t revision() const = 0;
  /// revision(), brought up to date with the backend when it is below `wanted` (etcd:
  /// another server may have written it), so that an RV another replica handed out is
  /// not "too large" here.
  virtual std::uint64_t revision_at_least(std::uint64_t wanted) const {
    (void)wanted;
    return revision();
  }
  /// Every change of `type` up to this revision is readable through events_after(): a
  /// watcher that has nothing after its position may bookmark at it (etcd: the type's
  /// progress notifications; memory: what is durable).
  virtual std::uint64_t progress(const ResourceType& type) const = 0;
  /// The newest revision whose events of `type` are no longer kept: a watch must start
  /// at or after it, and a snapshot (continue) before it is 410.
  virtual std::uint64_t compacted_through(const ResourceType& type) const = 0;

  virtual ApiResult<StoredPtr> get(const ResourceType& type, std::string_view ns, std::string_view name) const = 0;
  virtual ApiResult<ListPage> list(const ResourceType& type, const ListQuery& query) const = 0;
  virtual ApiResult<WriteResult> create(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                        bool dry_run) = 0;
  /// Replaces the object by mutation(current). Absent object: 404, or a create when
  /// create_if_absent (server-side apply).
  virtual ApiResult<WriteResult> write(const ResourceType& type, std::string_view ns, std::string_view name,
                                       const Mutation& mutation, bool create_if_absent, bool dry_run) = 0;
  virtual ApiResult<StoredPtr> remove(const ResourceType& type, std::string_view ns, std::string_view name,
                                      const Preconditions& preconditions, bool dry_run) = 0;

  virtual bool events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                            std::vector<EventPtr>& out) const = 0;
  /// Calls `wake` once as soon as there is something of `type` after `rv` to read:
  /// immediately (returning 0), else later from another thread (returning a ticket for
  /// cancel_wait() with the same type).
  virtual std::uint64_t notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake) = 0;
  virtual void cancel_wait(const ResourceType& type, std::uint64_t ticket) = 0;

  /// Forgets the history up to now: older watch starts and snapshots get 410.
  virtual void compact() = 0;
};

}  // namespace kinformer::apiserver
