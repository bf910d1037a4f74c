// apiserver/etcd_storage.hpp
//
// EtcdStorage: the Storage (apiserver/storage.hpp) kept in etcd 3.4, so that several
// API servers share one state, as kube-apiserver does (kube-api-protocol.md §A4).
//
// Usage
//   auto storage = EtcdStorage::open(registry, {{"http://127.0.0.1:2379"}, "/registry"});
//   Api api(registry, *storage.value());
//
// Contract
//   * Keys follow kube-apiserver: <prefix>/<resource>/<namespace>/<name>, or
//     <prefix>/<resource>/<name> for a cluster-scoped kind; <resource> is the plural
//     of a built-in kind and <group>/<plural> of a custom one. Values are the
//     object's JSON without its resourceVersion, which is etcd's mod_revision.
//   * create is a Txn on create_revision == 0 (and, in a namespace, on the
//     namespace's mod_revision, so no object lands in a namespace being deleted);
//     write and remove are Txns on the mod_revision they read, retried when another
//     writer won (a mutation naming a stale resourceVersion is 409 Conflict).
//   * list reads ranges at one revision: the first page's header revision is the
//     list's resourceVersion, and continue pages read at it (410 once compacted).
//     It reads keys and mod_revisions only and takes each object from the objects
//     the watch and earlier reads decoded, which are exact (etcd never changes a key
//     at a mod_revision); a range with any other object is read again with values.
//     Those decoded objects are the newest seen per key: as many as the prefix holds.
//   * One etcd watch on the whole prefix, with prev_kv and progress notifications,
//     feeds an in-memory window of events (the watch cache) that every watcher of
//     this server reads: no etcd watch per client. The window starts at the revision
//     this storage opened at and keeps the newest `watch_history` events;
//     compacted_through() is its start.
//   * When the watch breaks it is reopened from the next revision (on the next
//     endpoint); if etcd stays away longer than `watch_failure_grace`, the window is
//     dropped, so every watcher gets 410 Expired instead of silently stalling, and
//     relists (503 until etcd is back).
//   * compaction_interval > 0: every interval, etcd is compacted at the revision of
//     the interval before (kube-apiserver's compactor), so a revision lives one to
//     two intervals. compact() compacts at once at the current revision.
//   * open() makes sure the bootstrap namespaces (default, kube-system, kube-public)
//     exist; several servers may do so at once.
//   * Custom kinds follow the CRDs in etcd (follow_crd(), apiserver/crd.hpp): open()
//     serves every CRD etcd holds before the watch starts, and the watch serves or
//     retires the kind of each CRD event (another replica's writes) before it reads
//     the events after it. A replica thus serves a CRD another one created once its
//     watch has the event (discovery and the kind's URLs answer 404 until then), as
//     kube-apiserver's replicas do. Not yet: the watch skips the keys of a kind no
//     longer served, so the deletions that follow a CRD's are not streamed.
// Threading: every member is thread-safe; two background threads (the watch's
//   reconnects and the compactor) stop in the destructor.
// Errors: 503 ServiceUnavailable when no etcd endpoint answers, 504 Timeout when one
//   times out, 410 Expired for compacted revisions, and the usual API errors.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apiserver/etcd_client.hpp"
#include "apiserver/storage.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // http://host:port; empty = the memory store
  std::string prefix = "/registry";
  std::chrono::milliseconds compaction_interval{std::chrono::minutes(5)};  // 0 = never
  std::size_t watch_history = 10000;  // events kept in the watch cache
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds watch_failure_grace{3000};
};

class EtcdStorage final : public Storage {
 public:
  /// Connects (503-style Errc::connection_failed when no endpoint answers), creates
  /// the bootstrap namespaces, opens the watch and starts the compactor.
  [[nodiscard]] static Result<std::unique_ptr<EtcdStorage>> open(ResourceRegistry& registry,
                                                                 EtcdOptions options);
  ~EtcdStorage() override;
  EtcdStorage(const EtcdStorage&) = delete;
  EtcdStorage& operator=(const EtcdStorage&) = delete;

  std::uint64_t revision() const override;
  std::uint64_t revision_at_least(std::uint64_t wanted) const override;
  std::uint64_t compacted_through() const override;
  /// The newest revision the watch cache has caught up with (events and progress
  /// notifications): a bookmark at it is safe.
  std::uint64_t progress() const override;

  ApiResult<StoredPtr> get(const ResourceType& type, std::string_view ns, std::string_view name) const override;
  ApiResult<ListPage> list(const ResourceType& type, const ListQuery& query) const override;
  ApiResult<WriteResult> create(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                bool dry_run) override;
  ApiResult<WriteResult> write(const ResourceType& type, std::string_view ns, std::string_view name,
                               const Mutation& mutation, bool create_if_absent, bool dry_run) override;
  ApiResult<StoredPtr> remove(const ResourceType& type, std::string_view ns, std::string_view name,
                              const Preconditions& preconditions, bool dry_run) override;

  bool events_after(std::uint64_t after, std::size_t max, std::vector<EventPtr>& out) const override;
  std::uint64_t notify_after(std::uint64_t rv, std::function<void()> wake) override;
  void cancel_wait(std::uint64_t ticket) override;
  void compact() override;

  /// True while the etcd watch is open.
  bool watching() const;

 private:
  EtcdStorage(ResourceRegistry& registry, EtcdOptions options, std::unique_ptr<EtcdClient> client);

  // keys
  std::string resource_segment(const ResourceType& type) const;
  std::string type_prefix(const ResourceType& type) const;  // <prefix>/<resource>/
  std::string key_of(const ResourceType& type, std::string_view ns, std::string_view name) const;
  const ResourceType* type_of_key(const std::string& key) const;

  // etcd round trips
  ApiResult<nlohmann::json> call(std::string_view path, const nlohmann::json& body) const;
  ApiResult<StoredPtr> read(const ResourceType& type, const std::string& key) const;  // nullptr: absent
  StoredPtr stored_from(const ResourceType& type, const nlohmann::json& kv, std::int64_t revision) const;
  /// The decoded object of `key` at `mod_revision`, or nullptr.
  StoredPtr decoded(const std::string& key, std::uint64_t mod_revision) const;
  void remember(const std::string& key, const StoredPtr& object) const;  // nullptr: the key is gone
  ApiResult<WriteResult> create_once(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                     bool dry_run, bool& retry);
  ApiResult<StoredPtr> delete_one(const ResourceType& type, const StoredPtr& current);
  Result<void> ensure_bootstrap_namespaces();
  Result<void> serve_stored_crds();

  // the watch cache
  void watch_loop();
  void on_watch_message(const nlohmann::json& message);
  void compactor_loop();
  void drop_window_locked(std::uint64_t revision, std::vector<std::function<void()>>& wake);

  ResourceRegistry& registry_;
  const EtcdOptions options_;
  const std::unique_ptr<EtcdClient> client_;

  mutable std::mutex mu_;
  std::deque<EventPtr> window_;                             // guarded by mu_; ascending RVs
  std::uint64_t window_start_ = 0;                          // guarded by mu_; events after it are kept
  std::uint64_t watched_ = 0;                               // guarded by mu_; caught up through
  std::uint64_t last_event_ = 0;                            // guarded by mu_; RV of the newest event
  std::map<std::uint64_t, std::pair<std::uint64_t, std::function<void()>>> waiters_;  // ticket -> (rv, wake)
  std::uint64_t next_ticket_ = 1;                           // guarded by mu_
  bool stopping_ = false;                                   // guarded by mu_
  bool stream_open_ = false;                                // guarded by mu_
  bool stream_ended_ = false;                               // guarded by mu_
  bool resync_ = false;  // guarded by mu_; etcd compacted past the watch's resume point
  std::condition_variable changed_;                         // stopping_ or stream_ended_
  std::unique_ptr<EtcdClient::Watch> watch_;                // watch thread only
  mutable std::mutex decoded_mu_;
  mutable std::unordered_map<std::string, StoredPtr> decoded_;  // guarded by decoded_mu_; etcd key -> newest
  std::thread watch_thread_;
  std::thread compactor_thread_;
};

}  // namespace kinformer::apiserver
