// apiserver/store_list_watch.hpp
//
// StoreListWatch: a ListWatch (runtime/list_watch.hpp) served straight from an
// apiserver::Storage (the memory Store or EtcdStorage), in process and without HTTP, for services that embed both the
// API server's store and an informer, and for tests (tests/support/fake_source.hpp).
//
// Usage
//   auto store = std::make_shared<apiserver::Store>(registry);
//   auto pods = std::make_shared<apiserver::StoreListWatch>(store, *registry.find("", "v1", "pods"));
//   options.source = pods;  // a SharedInformer over the store's pods
//
// Contract
//   * Lists and watches follow the same resourceVersion rules as the HTTP API,
//     because both call apiserver/read_rules.hpp: exact versus not-older-than lists,
//     limit/continue pages read from one snapshot (the server's continue tokens),
//     too-large RVs, 410 for compacted history, label and field selectors
//     (kube-api-protocol.md §A4-§A5).
//   * Objects are the Store's own: every item and event carries StoredObject::object(),
//     the same ObjectPtr the store holds, so the informer's cache shares them. Only an
//     update that makes an object leave a watch's selection builds a new Object (its
//     previous content at the new RV, as the server sends it).
//   * watch: RV "" or "0", or send_initial_events → ADDED for the latest state in one
//     batch, then (send_initial_events with bookmarks) a bookmark with
//     initial_events_end in its own batch, then every change after that state. RV "N"
//     → the changes after N; N older than the store's history → on_closed(Errc::gone)
//     at once. A watch ahead of the store waits up to 3 s for that revision, then
//     closes with Errc::too_large_rv, as kube-apiserver (and the HTTP server) answer
//     504 "Too large resource version".
//   * A watch pulls from the Store's history, so a watch that falls behind the kept
//     history (paused too long, or after Store::compact() while behind) closes with
//     Errc::gone, as the server closes a slow watcher; the client relists.
//   * pause() stops pulling; the events stay in the Store's history and resume()
//     delivers them in order. timeout_seconds > 0 ends the watch cleanly after that
//     long (after a bookmark at its position when bookmarks are allowed).
//   * Callbacks run at once on the thread that caused them: the caller of list() or
//     watch(), the writer of the Store, the caller of resume() or bookmark(), or the
//     timeout thread. Callbacks of this source's watches never overlap (one delivery
//     lock), keep RV order, and may call back into the watch, this source or the
//     Store (re-entrant). After a Watch's stop() returns none of its callbacks runs.
// Threading: every member may be called from any thread.
// Errors: Errc::gone, Errc::too_large_rv, Errc::invalid_selector; any other request
//   the server would refuse (400, 422) is Errc::server_error with the server's
//   message. Never throws (beyond std::bad_alloc).
// Not here: fault injection (tests/support/fault_injecting_list_watch.hpp), HTTP.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "runtime/list_watch.hpp"

namespace kinformer::apiserver {

class StoreListWatch final : public ListWatch {
 public:
  /// Serves the objects of `type` in `namespace_name` ("" = every namespace) from
  /// `store`. `type` must belong to the store's registry and outlive this source.
  StoreListWatch(std::shared_ptr<Storage> store, const ResourceType& type, std::string namespace_name = "");
  ~StoreListWatch() override;
  StoreListWatch(const StoreListWatch&) = delete;
  StoreListWatch& operator=(const StoreListWatch&) = delete;

  void list(const ListOptions& options, ListCallback done) override;
  [[nodiscard]] std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) override;

  /// A BOOKMARK at its position to every open watch that allows bookmarks, as the
  /// server sends one periodically.
  void bookmark();

  const Storage& store() const { return *store_; }
  std::string resource() const override { return type_.plural; }

  struct Watcher;   // one open watch; defined in store_list_watch.cpp
  class Deadlines;  // the timeout thread; likewise

 private:
  std::vector<std::shared_ptr<Watcher>> open_watchers();  // forgets the finished ones

  const std::shared_ptr<Storage> store_;
  const ResourceType& type_;
  const std::string namespace_;
  // Held while any watch of this source delivers, so that callbacks never overlap and
  // a callback writing to the Store cannot deadlock against another watch's delivery.
  // Shared with the watchers, which may outlive this source.
  const std::shared_ptr<std::recursive_mutex> delivery_mu_;
  std::unique_ptr<Deadlines> deadlines_;  // started with the first watch that has a timeout
  std::mutex mu_;
  std::vector<std::weak_ptr<Watcher>> watchers_;  // guarded by mu_
};

}  // namespace kinformer::apiserver
