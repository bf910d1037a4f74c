// apiserver/watch_window.hpp
//
// WatchWindow: the recent changes of one resource type that every watcher of the
// type on this server reads (kube-apiserver's watch cache of one resource). The etcd
// storage (apiserver/storage/etcd/etcd_storage.hpp) fills one per type from that type's etcd watch.
//
// Usage
//   WatchWindow window(opened_at, 10000);
//   window.append(events, 0);                  // the etcd watch's thread
//   window.events_after(position, 100, out);  // any watcher's thread
//
// Contract
//   * Events after start() are kept, oldest first, each RV once: events_after(after)
//     answers every kept event with RV > after, or false when after < start() (the
//     caller answers 410). It keeps the newest `capacity` events; an evicted event's
//     RV becomes start().
//   * append() takes events in RV order and ignores those at or before the newest
//     one it has (a reconnected etcd watch replays them). progress() is the newest
//     revision the window is complete through: its newest event, or a later revision
//     etcd's progress notification vouches for (no event of the type up to there).
//   * notify_after(rv) wakes once when an event with RV > rv is kept: at once (and
//     returns 0) when one is, or when rv < start() or the window is closed (so the
//     caller reads, and answers 410); else later from append() (a ticket for
//     cancel_wait()). Progress alone wakes nobody: a watcher bookmarks at progress()
//     on its own timer.
//   * restart_at(R) forgets every event: nothing at or before R is readable any more
//     and the window is complete through R (etcd compacted, or the watch resumes at
//     R). expire_through(R) forgets every event and makes R the start without
//     claiming progress (etcd away too long: the watch must still deliver what follows
//     progress()). close() forgets every event and answers false to every read until
//     reopen(R), which starts afresh at exactly R (a retired kind served again). All
//     of them only move start() forward, except reopen().
//   * Every waiter is woken by restart_at(), expire_through() and close(): its next
//     read answers false.
// Threading: every member is thread-safe (one mutex). The members that wake waiters
//   return them (Wakes) rather than run them, so that a caller may change a window
//   under its own lock and wake afterwards: a wake may read the window (and the
//   caller's storage) at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {

class WatchWindow {
 public:
  /// Open at `start`: complete through it, with no event yet.
  WatchWindow(std::uint64_t start, std::size_t capacity);
  WatchWindow(const WatchWindow&) = delete;
  WatchWindow& operator=(const WatchWindow&) = delete;

  /// The waiters a change woke: the caller runs them once it holds no lock.
  using Wakes = std::vector<std::function<void()>>;

  /// `events` with RV > the newest kept; progress becomes at least `progress`.
  [[nodiscard]] Wakes append(std::vector<EventPtr> events, std::uint64_t progress);

  bool events_after(std::uint64_t after, std::size_t max, std::vector<EventPtr>& out) const;
  /// Runs `wake` itself when it answers 0: call it holding no lock `wake` may take.
  std::uint64_t notify_after(std::uint64_t rv, std::function<void()> wake);
  void cancel_wait(std::uint64_t ticket);

  std::uint64_t start() const;
  std::uint64_t progress() const;

  [[nodiscard]] Wakes restart_at(std::uint64_t revision);
  [[nodiscard]] Wakes expire_through(std::uint64_t revision);
  [[nodiscard]] Wakes close();
  /// Only on a closed window (which has no waiters).
  void reopen(std::uint64_t start);

 private:
  /// Forgets the events and hands every waiter to the caller.
  Wakes forget_locked();

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<EventPtr> events_;  // guarded by mu_; ascending RVs (those <= start_ unread)
  std::uint64_t start_;          // guarded by mu_
  std::uint64_t progress_;       // guarded by mu_; >= newest_
  std::uint64_t newest_;         // guarded by mu_; RV of the newest event appended (or the start)
  bool closed_ = false;          // guarded by mu_
  // guarded by mu_; ticket -> (rv, wake)
  std::map<std::uint64_t, std::pair<std::uint64_t, std::function<void()>>> waiters_;
  std::uint64_t next_ticket_ = 1;  // guarded by mu_
};

}  // namespace kinformer::apiserver
