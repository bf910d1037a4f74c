// apiserver/storage/etcd/etcd_storage.hpp
//
// EtcdStorage: the Storage (apiserver/storage/storage.hpp) kept in etcd 3.4, so that several
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
//     its type's watch and earlier reads decoded, which are exact (etcd never changes
//     a key at a mod_revision); a range with any other object is read again with
//     values. Those decoded objects are the newest seen per key: as many as the
//     prefix holds.
//   * Watches: one etcd watch per resource type, from open() on, feeds the type's
//     window of events that every watcher of the type on this server reads (no etcd
//     watch per client): EtcdWatches, apiserver/storage/etcd/etcd_watches.hpp, has the rules of
//     the windows, bookmarks, custom kinds' watches, reconnects and the failure grace
//     (etcd away longer than `watch_failure_grace`: the watchers get 410 and relist,
//     503 until etcd is back). A window keeps the newest `watch_history` events of
//     its type. notify_after(type, rv) wakes on the type's events only, so a watch at
//     a future resourceVersion that only another type reaches waits for the HTTP
//     layer's timer (then revision(), which every type's watch moves, decides).
//   * compaction_interval > 0: every interval, etcd is compacted at the revision of
//     the interval before (kube-apiserver's compactor), so a revision lives one to
//     two intervals. compact() compacts at once at the current revision.
//   * open() makes sure the bootstrap namespaces (default, kube-system, kube-public)
//     exist; several servers may do so at once.
//   * Custom kinds follow the CRDs in etcd (follow_crd(), apiserver/crd.hpp): open()
//     serves every CRD etcd holds before the watches start, and the CRD watch serves
//     or retires the kind of each CRD event (another replica's writes), and opens or
//     closes the kind's watch (EtcdWatches). A replica thus serves a CRD another one created once
//     its CRD watch has the event (discovery and the kind's URLs answer 404 until
//     then), as kube-apiserver's replicas do. Not yet: a retired kind's watch is
//     closed, so the deletions that follow a CRD's may reach its watchers only in
//     part before their 410.
// Threading: every member is thread-safe; two background threads (the watches'
//   supervisor and the compactor) stop in the destructor.
// Errors: 503 ServiceUnavailable when no etcd endpoint answers, 504 Timeout when one
//   times out, 410 Expired for compacted revisions, and the usual API errors.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apiserver/storage/etcd/etcd_client.hpp"
#include "apiserver/storage/etcd/txn_retry.hpp"
#include "apiserver/storage/storage.hpp"
#include "apiserver/storage/etcd/etcd_watches.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // http://host:port; empty = the memory store
  std::string prefix = "/registry";
  std::chrono::milliseconds compaction_interval{std::chrono::minutes(5)};  // 0 = never
  std::size_t watch_history = 10000;  // events kept per type in the watch cache
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
  std::uint64_t compacted_through(const ResourceType& type) const override;
  /// The newest revision the type's window has caught up with (events and progress
  /// notifications): a bookmark at it is safe.
  std::uint64_t progress(const ResourceType& type) const override;

  ApiResult<StoredPtr> get(const ResourceType& type, std::string_view ns, std::string_view name) const override;
  ApiResult<ListPage> list(const ResourceType& type, const ListQuery& query) const override;
  ApiResult<WriteResult> create(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                bool dry_run) override;
  ApiResult<WriteResult> write(const ResourceType& type, std::string_view ns, std::string_view name,
                               const Mutation& mutation, bool create_if_absent, bool dry_run) override;
  ApiResult<StoredPtr> remove(const ResourceType& type, std::string_view ns, std::string_view name,
                              const Preconditions& preconditions, bool dry_run) override;

  bool events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                    std::vector<EventPtr>& out) const override;
  std::uint64_t notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake) override;
  void cancel_wait(const ResourceType& type, std::uint64_t ticket) override;
  void compact() override;

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
  StoredPtr decoded(const ResourceType& type, const std::string& key, std::uint64_t mod_revision) const;
  void remember(const ResourceType& type, const std::string& key,
                const StoredPtr& object) const;  // nullptr: the key is gone
  /// After a window lost events: deletions it missed would keep their objects for good.
  void forget_decoded(const ResourceType& type) const;
  /// The events of `type` among a watch message's events (EtcdWatches::Keys::decode).
  std::vector<EventPtr> decode_events(const ResourceType& type, const nlohmann::json& events) const;
  /// One create Txn; Lost::name_taken or Lost::namespace_changed when its compare failed.
  Attempt<WriteResult> create_once(const ResourceType& type, std::string_view ns, nlohmann::json object,
                                   bool dry_run);
  /// One delete Txn at current's mod_revision; Lost::modified when the object changed.
  Attempt<StoredPtr> delete_one(const ResourceType& type, const StoredPtr& current);
  /// Deletes every object in the namespace (a deleted namespace's cascade).
  std::optional<ApiError> empty_namespace(const StoredObject& ns);
  Result<void> ensure_bootstrap_namespaces();
  Result<void> serve_stored_crds();

  void compactor_loop();

  ResourceRegistry& registry_;
  const EtcdOptions options_;
  const std::unique_ptr<EtcdClient> client_;

  std::mutex mu_;
  bool stopping_ = false;             // guarded by mu_
  std::condition_variable changed_;  // stopping_
  mutable std::mutex decoded_mu_;
  // guarded by decoded_mu_; per type, etcd key -> newest decoded object
  mutable std::unordered_map<const ResourceType*, std::unordered_map<std::string, StoredPtr>> decoded_;
  // After what its callbacks use (the client, the decoded objects): it goes first.
  const std::unique_ptr<EtcdWatches> watches_;
  std::thread compactor_thread_;
};

}  // namespace kinformer::apiserver
