// apiserver/storage/store.hpp
//
// Store: the API server's in-memory MVCC object store with one global revision and
// a bounded history of change events (kube-api-protocol.md §A3, §A4.1, §A5).
//
// Contract
//   * Every successful write (create, changing update/patch, delete) takes the next
//     global revision R = revision()+1, stores it as metadata.resourceVersion and
//     appends exactly one event with that R to the history, so the history holds the
//     contiguous revisions oldest_retained()..revision(). A write that changes nothing
//     takes no revision and makes no event.
//   * The history keeps the newest `watch_history` events and at most
//     `watch_history_bytes` of them (event lines and objects; the newest event is
//     always kept). A watch may start after any R >= compacted_through(); older starts
//     are 410 Expired for the caller.
//   * list() can serve the state at an older revision R >= compacted_through() by
//     undoing the history (continue tokens and exact-RV lists read one snapshot); a
//     page costs the history since R plus the page, never a copy of the bucket.
//   * Label keys and values are validated (Kubernetes' rules, runtime/selector.hpp).
//   * Server-owned metadata (uid, creationTimestamp, resourceVersion, generation,
//     name/namespace) is set here; callers cannot overwrite it through updates.
//   * Namespaced objects can only be created in an existing namespace ("default",
//     "kube-system", "kube-public" exist from the start); deleting a namespace
//     deletes its objects first (one event each).
//   * The bootstrap namespaces cannot be deleted (403 Forbidden, as kube-apiserver).
//   * Persistence (apiserver/storage/): with a StoreLog attached, every write hands its
//     events to the log under the mutex (so in revision order) before it returns, and
//     watchers (events_after, notify_after) see an event only once mark_durable() covered
//     it, so no watcher ever sees a write a crash could lose. contents(), restore() and
//     replay() read and rebuild the state for snapshots and recovery.
//   * compact() forgets the whole history at once (etcd's compaction), as if every
//     kept event had aged out: older watch starts and snapshots are then 410.
//   * A StoredObject's object() is the runtime Object of the same bytes, parsed once
//     and then shared by every in-process reader (apiserver/store_list_watch.hpp).
// Threading: every member is thread-safe (one mutex). Waiter callbacks run on the
//   writing thread after the mutex is released; they must only post work elsewhere.
// Errors: ApiError values with the kube-apiserver code/reason/message; never throws
//   (beyond std::bad_alloc).
// Not here: selectors, watch filtering and rendering (watch_filter.hpp), HTTP.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/storage.hpp"
#include "apiserver/stored_object.hpp"
#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

/// The persistence hook (apiserver/storage/wal.hpp implements it).
class StoreLog {
 public:
  virtual ~StoreLog() = default;
  /// One write's events (a namespace deletion's cascade included), in revision order.
  /// Called with the store's mutex held, so calls arrive in revision order; must not
  /// block on I/O nor call back into the Store.
  virtual void append(std::vector<EventPtr> events) = 0;
};

struct StoreOptions {
  std::size_t watch_history = 10000;  // events kept for watch resumption and old snapshots
  /// true (kube-apiserver): the namespaces default, kube-system and kube-public exist
  /// from the start (revisions 1-3) and a namespaced object needs an existing
  /// namespace. false: the store starts empty at revision 0 and takes any namespace,
  /// for an in-process source of one resource (tests/support/fake_source.hpp).
  bool bootstrap_namespaces = true;
  /// The history also keeps at most this many bytes of events (lines and objects; the
  /// newest event always stays).
  std::size_t watch_history_bytes = 256 * 1024 * 1024;
};

class Store final : public Storage {
 public:
  Store(const ResourceRegistry& registry, StoreOptions options = {});
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::uint64_t revision() const override;
  /// The newest revision whose events are no longer kept: a watch must start at or
  /// after it. One history for every type: `type` does not change the answer.
  std::uint64_t compacted_through(const ResourceType& type) const override;
  std::uint64_t progress(const ResourceType& type) const override;

  ApiResult<StoredPtr> get(const ResourceType& type, std::string_view ns, std::string_view name) const override;
  ApiResult<ListPage> list(const ResourceType& type, const ListQuery& query) const override;

  /// Creates `object` (metadata.name or generateName required). 409 AlreadyExists,
  /// 404 for a missing namespace, 422 for an invalid name. dry_run computes without storing.
  ApiResult<WriteResult> create(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                bool dry_run) override;

  /// Replaces the object by mutation(current). A metadata.resourceVersion in the
  /// result that differs from the stored one is 409 Conflict. Absent object: 404,
  /// or a create when create_if_absent (server-side apply).
  ApiResult<WriteResult> write(const ResourceType& type, std::string_view ns, std::string_view name,
                               const Mutation& mutation, bool create_if_absent, bool dry_run) override;

  /// Deletes the object and returns its last state (with the deletion's RV).
  ApiResult<StoredPtr> remove(const ResourceType& type, std::string_view ns, std::string_view name,
                              const Preconditions& preconditions, bool dry_run) override;

  /// Appends up to `max` events with RV > after to `out`, of every type (one history).
  /// Returns false when some of those events were compacted away (the caller answers
  /// 410 Expired).
  bool events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                    std::vector<EventPtr>& out) const override;

  /// Calls `wake` once as soon as revision() > rv, whatever the type: immediately
  /// (returning 0) if it already is, else from the next writer (returning a ticket for
  /// cancel_wait()).
  std::uint64_t notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake) override;
  void cancel_wait(const ResourceType& type, std::uint64_t ticket) override;

  /// Drops every kept event: compacted_through() becomes revision(). Watches behind
  /// it and snapshots before it get 410 Expired from then on.
  void compact() override;

  // ---- persistence hooks (apiserver/storage/) ----

  /// Hands every later write to `log` (nullptr: none; the log must outlive the Store or
  /// be detached). While one is attached, watchers see events only up to mark_durable().
  void attach_log(StoreLog* log);
  /// Every event up to `revision` is durable: wakes the watchers waiting for it.
  void mark_durable(std::uint64_t revision);

  /// The objects (registry order, then key order) and the revision they are at.
  struct Contents {
    std::uint64_t revision = 0;
    std::vector<StoredPtr> objects;
  };
  Contents contents() const;
  /// Replaces the whole content (already validated); the history restarts empty at `revision`.
  void restore(std::uint64_t revision, std::vector<StoredPtr> objects);
  /// Re-applies one logged event on top of the current content and history (recovery).
  /// Fails, changing nothing, when it does not follow: a revision other than
  /// revision()+1, an ADDED for a present key, a MODIFIED or DELETED for an absent one,
  /// an object in a missing namespace.
  Result<void> replay(EventType type, StoredPtr object);

 private:
  using Bucket = std::map<std::string, StoredPtr>;  // key -> current object, key order

  ApiResult<WriteResult> commit_create_locked(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                              bool dry_run, std::vector<std::function<void()>>& wake);
  StoredPtr remove_locked(const ResourceType& type, const StoredPtr& current, std::vector<std::function<void()>>& wake);
  void append_event_locked(EventType type, StoredPtr object, StoredPtr previous,
                           std::vector<std::function<void()>>& wake);
  void hand_to_log_locked();
  struct LogHandOff;  // calls hand_to_log_locked() at the end of a write's locked section

  const ResourceRegistry& registry_;
  StoreOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<const ResourceType*, Bucket> objects_;  // guarded by mu_
  std::uint64_t revision_ = 0;                               // guarded by mu_
  std::uint64_t compacted_through_ = 0;                      // guarded by mu_; history_ = (it, revision_]
  std::deque<EventPtr> history_;                             // guarded by mu_
  std::size_t history_bytes_ = 0;  // guarded by mu_; event_bytes() summed over history_
  std::map<std::uint64_t, std::function<void()>> waiters_;   // guarded by mu_; ticket -> wake
  std::uint64_t next_ticket_ = 1;                            // guarded by mu_
  StoreLog* log_ = nullptr;                                  // guarded by mu_
  std::vector<EventPtr> unlogged_;                           // guarded by mu_; this write's events
  std::uint64_t durable_revision_ = 0;                       // guarded by mu_; what watchers may see
};


}  // namespace kinformer::apiserver
