// apiserver/storage/etcd/etcd_watches.hpp
//
// EtcdWatches: the etcd storage's watches (apiserver/storage/etcd/etcd_storage.hpp), one per
// resource type, each feeding the type's WatchWindow (apiserver/watch_window.hpp)
// that every watcher of the type on the server reads, as kube-apiserver's watch
// cache does per resource; and the thread that opens, reconnects and expires them.
//
// Usage
//   EtcdWatches watches(client, registry, {range_of, decode, lost}, {10000, 3s});
//   watches.start(opened_at);
//   watches.events_after(pods, position, 100, out);
//
// Contract
//   * One etcd watch per type (range: keys.range(type), with prev_kv and progress
//     notifications): no etcd watch per client, and one busy type does not push
//     another type's events out of its window. Every served type has its watch from
//     start() on, as kube-apiserver starts a cacher per resource: so the decoded
//     objects the storage's lists use are kept current for every type, and every
//     window starts at the revision the storage opened at (a watch opened on first
//     use could only start where its first watcher stands, and an older watcher of
//     the type would get 410).
//   * Custom kinds: the events of the CRD type's watch serve or retire their kind
//     (follow_crd(), apiserver/crd.hpp), and then its watch opens, from the CRD
//     event's revision, or closes (the window closes: its watchers get 410). A kind
//     a watcher asks for before that (the CRD was applied through this server) gets
//     its watch from that watcher's position.
//   * A window keeps the newest `history` events of its type; compacted_through(type)
//     is its start. progress(type) moves with the type's events and with etcd's
//     progress notifications, which carry the global revision: an idle type's
//     watchers still bookmark as other types change. notify_after(type, rv) wakes on
//     the type's events only.
//   * When a type's watch breaks it is reopened from the revision after its window's
//     progress (EtcdClient moves to the next endpoint); when etcd has compacted that
//     revision, the window restarts at etcd's current one. If the watch stays down
//     longer than `failure_grace`, the window is expired past every revision a client
//     was handed, so the type's watchers get 410 instead of silently stalling.
//   * restart_at(R) (the storage compacted etcd at R) restarts every window at R.
//     compacted_through(type) of a type without a watch is the newest R of
//     restart_at() and note_compacted(), and a watcher behind it gets 410 rather
//     than a watch that etcd would refuse.
//   * keys.lost(type) runs whenever a window loses events (restart, expiry, close):
//     what was decoded for the type may miss deletions.
// Threading: every member is thread-safe. The supervisor thread stops, and every
//   etcd watch is cancelled, in the destructor. Messages arrive on the etcd client's
//   I/O thread; keys.decode runs there.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/storage/etcd/etcd_client.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/stored_object.hpp"
#include "apiserver/watch_window.hpp"

namespace kinformer::apiserver {

class EtcdWatches {
 public:
  /// The storage's key layout and decoding: the watches know neither.
  struct Keys {
    std::function<std::string(const ResourceType&)> range;  // the prefix of the type's keys
    /// The events of `type` among a watch message's events, decoded (and remembered).
    std::function<std::vector<EventPtr>(const ResourceType&, const nlohmann::json& events)> decode;
    /// The type's window lost events: forget the objects decoded for it.
    std::function<void(const ResourceType&)> lost;
  };

  struct Options {
    std::size_t history = 10000;  // events kept per type
    std::chrono::milliseconds failure_grace{3000};
  };

  EtcdWatches(EtcdClient& client, ResourceRegistry& registry, Keys keys, Options options);
  ~EtcdWatches();
  EtcdWatches(const EtcdWatches&) = delete;
  EtcdWatches& operator=(const EtcdWatches&) = delete;

  /// Every served type's watch from `at`, and the supervisor thread.
  void start(std::uint64_t at);

  bool events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                    std::vector<EventPtr>& out) const;
  std::uint64_t notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake);
  void cancel_wait(const ResourceType& type, std::uint64_t ticket);
  std::uint64_t progress(const ResourceType& type) const;
  std::uint64_t compacted_through(const ResourceType& type) const;
  /// The newest revision any type's watch has reached.
  std::uint64_t reached() const { return reached_.load(); }

  /// etcd was compacted at `revision`: every window restarts there.
  void restart_at(std::uint64_t revision);
  /// etcd was compacted at `revision` (the windows may still hold later events).
  void note_compacted(std::uint64_t revision);

 private:
  /// The etcd watch of one resource type and the window it fills.
  struct TypeWatch {
    TypeWatch(const ResourceType& t, std::uint64_t start, std::size_t capacity) : type(t), window(start, capacity) {}
    const ResourceType& type;
    WatchWindow window;
    // guarded by mu_:
    bool served = true;   // the supervisor keeps the etcd watch open; else the window is closed
    bool open = false;    // a message came since the stream started
    bool ended = false;   // the stream ended (etcd cancelled it, or the connection went)
    bool resync = false;  // etcd compacted past the revision the stream would resume at
    bool down = false;    // no open stream since down_since
    bool failed = false;  // down longer than the grace: the window was expired
    std::chrono::steady_clock::time_point down_since{};
    std::unique_ptr<EtcdClient::Watch> stream;             // the supervisor thread only
    std::chrono::steady_clock::time_point stream_since{};  // when `stream` was opened
  };

  /// Every served type gets a watch from `at` (or keeps its own); retired kinds' close.
  void follow_served_kinds(std::uint64_t at);
  /// The type's window, opened at `position` when the type has none yet; nullptr: not
  /// served, or `position` is older than etcd's known compaction.
  WatchWindow* window_for(const ResourceType& type, std::uint64_t position) const;
  /// The type's window when it is open, else nullptr.
  const WatchWindow* open_window(const ResourceType& type) const;
  void supervise();
  void tend(TypeWatch& watch, std::unique_lock<std::mutex>& lock);
  void on_message(TypeWatch& watch, const nlohmann::json& message);

  EtcdClient& client_;
  ResourceRegistry& registry_;
  const Keys keys_;
  const Options options_;

  mutable std::mutex mu_;
  // guarded by mu_; one per type ever served, never erased (watchers hold the windows)
  mutable std::map<const ResourceType*, std::unique_ptr<TypeWatch>> watches_;
  std::uint64_t compacted_ = 0;              // guarded by mu_; the newest revision etcd was compacted at
  bool stopping_ = false;                    // guarded by mu_
  mutable bool poked_ = false;               // guarded by mu_; a watch to open: the supervisor looks at once
  mutable std::condition_variable changed_;  // stopping_ or poked_
  std::atomic<std::uint64_t> reached_{0};
  std::thread supervisor_;
};

}  // namespace kinformer::apiserver
