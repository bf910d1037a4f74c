// runtime/memory_source.hpp
//
// MemorySource: an in-memory ListWatch for tests and demos, after client-go's fake
// controller source (informer-semantics.md §12, note at the end): objects keyed
// "namespace/name", one global resourceVersion counter, list and watch with the
// API server's resourceVersion semantics (kube-api-protocol.md A4–A5), and faults
// a test can inject.
//
// Usage
//   MemorySource source;
//   source.add(testing::pod("foo", "0"));      // stored as RV 1, watchers get ADDED
//   source.fail_next_watch(Error{Errc::gone, "too old resource version"});
//   auto lists = source.list_requests();     // every ListOptions received, in order
//
// Contract
//   * Every change takes the next resourceVersion and stores the object with it
//     written into metadata.resourceVersion; DELETED carries the last state at the
//     deletion's RV. The *_drop_watch variants change the state and the RV without
//     telling anyone: only a later list sees them (a lost event).
//   * list: RV "" or "0" → the current state; RV "N" without a limit (or with
//     match NotOlderThan) → the current state if N ≤ now, else Errc::too_large_rv;
//     RV "N" with a limit on the first page, or match Exact → the state at exactly
//     N, Errc::gone if N is older than the history. A limit pages by key order:
//     every page comes from the first page's snapshot; a continue token whose
//     snapshot left the history fails with Errc::gone (410 Expired); RV together
//     with continue is rejected (Errc::server_error, HTTP 400).
//   * watch: RV "" or "0" → ADDED for every object, then changes; RV "N" → every
//     change after N; N older than the history → closes at once with Errc::gone; N
//     ahead of the counter → Errc::too_large_rv. Bookmarks only when asked for.
//   * watch with send_initial_events (match NotOlderThan): ADDED for every object
//     of the current state (RV "" or not newer than now), then, if bookmarks are
//     allowed, a bookmark with initial_events_end at the current RV, then changes.
//   * History keeps the last `history_limit` changes; reset_watch() closes every
//     watch cleanly and forgets all of it (the next watch at an old RV gets 410).
//   * Faults are scripted: each fail_next_* is used by the next matching request,
//     in the order they were added.
//   * Callbacks run through the executor (default: at once, on the thread that
//     caused them: the caller of list()/watch(), or of the change). Per watch,
//     callbacks never overlap and keep the order of the changes; after a Watch's
//     stop() returns none of its callbacks runs again.
// Threading: every member function may be called from any thread.
// Errors: the ListWatch ones above; never throws (beyond std::bad_alloc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/list_watch.hpp"
#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer {

/// Runs a task now or later, in the order tasks were given.
using Executor = std::function<void(std::function<void()>)>;

struct MemorySourceOptions {
  /// Changes kept for watches and exact lists at older RVs; older ones get 410.
  std::size_t history_limit = 1000;
  /// Where callbacks run; empty = at once on the calling thread.
  Executor executor;
  /// Serve watch-list (send_initial_events); false answers it like a server
  /// without the WatchList feature: Errc::server_error (HTTP 422).
  bool watch_list = true;
};

class MemorySource final : public ListWatch {
 public:
  explicit MemorySource(MemorySourceOptions options = {});
  ~MemorySource() override;
  MemorySource(const MemorySource&) = delete;
  MemorySource& operator=(const MemorySource&) = delete;

  // -- changes: each returns the object as stored (with its new RV) --

  /// Stores `object` under its key (replacing any) and sends ADDED.
  ObjectPtr add(const ObjectPtr& object);
  /// Stores `object` under its key and sends MODIFIED.
  ObjectPtr modify(const ObjectPtr& object);
  /// Removes `key` and sends DELETED with its last state; null if `key` is absent.
  ObjectPtr remove(std::string_view key);
  /// Parses `json` and adds it; decode errors as Object::parse reports them.
  [[nodiscard]] Result<ObjectPtr> add_json(std::string_view json);
  ObjectPtr add_drop_watch(const ObjectPtr& object);
  ObjectPtr modify_drop_watch(const ObjectPtr& object);
  ObjectPtr remove_drop_watch(std::string_view key);

  /// BOOKMARK at the current RV to every open watch that allows bookmarks.
  void bookmark();
  /// Closes every watch cleanly and forgets the history.
  void reset_watch();

  // -- faults --

  /// The next list request fails with `error`.
  void fail_next_list(Error error);
  /// The next list request carrying a continue token (page 2 onwards) fails.
  void fail_next_continue(Error error);
  /// The next watch closes at once with `error`, without events (e.g. Errc::gone,
  /// too_many_requests(3s), Errc::connection_failed).
  void fail_next_watch(Error error);
  /// Ends every open watch now: cleanly (the default) or with `reason`.
  void close_watches(Result<void> reason = {});
  /// Sends `events` verbatim to every open watch; the state does not change.
  void emit(std::vector<WatchEvent> events);
  /// Sends a malformed event (an error event with Errc::decode_failed) to every open watch.
  void emit_malformed();

  // -- what happened --

  std::vector<ListOptions> list_requests() const;
  std::vector<WatchOptions> watch_requests() const;
  std::size_t open_watch_count() const;
  /// The newest RV handed out ("0" before any change).
  std::string resource_version() const;
  /// Every stored object in key order.
  std::vector<ObjectPtr> objects() const;
  ObjectPtr get(std::string_view key) const;

  // -- ListWatch --

  void list(const ListOptions& options, ListCallback done) override;
  [[nodiscard]] std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) override;

  struct Watcher;  // one open watch; defined in memory_source.cpp

 private:
  struct Change {
    WatchEventType type;
    ObjectPtr object;    // as stored (deleted: last state at the deletion's RV)
    ObjectPtr previous;  // the state before, null for added
    std::uint64_t rv;
    bool visible;        // false for the *_drop_watch variants
  };
  enum class FaultTarget : std::uint8_t { any_list, continue_page };
  struct ListFault {
    FaultTarget target;
    Error error;
  };
  using State = std::map<std::string, ObjectPtr, std::less<>>;

  ObjectPtr change(WatchEventType type, const ObjectPtr& object, std::string_view key, bool visible);
  ObjectPtr change_locked(WatchEventType type, const ObjectPtr& object, std::string_view key, bool visible);
  std::vector<std::shared_ptr<Watcher>> open_watchers_locked();  // drops the stopped and closed
  Result<State> state_at_locked(std::uint64_t rv) const;
  std::optional<Error> start_watch_list_locked(const WatchOptions& options, std::vector<WatchEvent>& initial,
                                               std::vector<WatchEvent>& end_of_initial);
  Result<ObjectList> answer_list_locked(const ListOptions& options);
  void deliver(const std::vector<std::shared_ptr<Watcher>>& to, const std::vector<WatchEvent>& events);
  void close(const std::vector<std::shared_ptr<Watcher>>& to, const Result<void>& reason);
  void run(std::function<void()> task) const;

  MemorySourceOptions options_;
  // Held (before mu_) across a change and its delivery, so that concurrent changes
  // reach every watch in RV order. Recursive: a callback may change the source.
  // Shared with the watches, which outlive the source.
  std::shared_ptr<std::recursive_mutex> dispatch_mu_;
  mutable std::mutex mu_;
  State objects_;                                    // guarded by mu_
  std::uint64_t rv_ = 0;                             // guarded by mu_
  std::deque<Change> history_;                       // guarded by mu_; RVs rising, all > history_floor_
  std::uint64_t history_floor_ = 0;                  // guarded by mu_; oldest RV still served
  std::vector<std::shared_ptr<Watcher>> watchers_;   // guarded by mu_; the open ones
  std::deque<ListFault> list_faults_;                // guarded by mu_
  std::deque<Error> watch_faults_;                   // guarded by mu_
  std::vector<ListOptions> list_requests_;           // guarded by mu_
  std::vector<WatchOptions> watch_requests_;         // guarded by mu_
};

}  // namespace kinformer
