// actors/coalescing_backlog.hpp
//
// CoalescingBacklog: the notifications a Processor group has not yet taken in,
// merged per key so that a slow group's memory grows with the number of keys,
// never with the number of events (actors/processor.hpp "Slow handlers").
//
// Contract
//   * Keys pop in order of first arrival; per key, at most two notifications
//     wait: a delete of a state the group had taken in, then a newer add or update.
//   * Merging (`pending` + `incoming` → what waits):
//       add + update(→x)          → add(x), the initial-list flag kept
//       update(o→a) + update(→x)  → update(o→x): the old state the group last saw
//       add + delete              → nothing (the group never heard of the object)
//       update(o→a) + delete(x)   → delete(x) (the group had seen o)
//       delete(d) + add(x)        → delete(d), then add(x)
//       anything + resync         → the pending change (it already has the newest state)
//   * push() says how the count of initial-list adds waiting changed (-1, 0, +1).
// Threading: not thread-safe; one owner (the Processor actor). Errors: none.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "actors/notification.hpp"

namespace kinformer::actors {

class CoalescingBacklog {
 public:
  /// Queues `n`, merged with what waits for its key; returns the change in
  /// waiting initial-list adds.
  int push(const Notification& n);
  /// The oldest key's next notification; nullopt when empty.
  std::optional<Notification> pop();

  bool empty() const noexcept { return size_ == 0; }
  /// Notifications waiting (at most two per key).
  std::size_t size() const noexcept { return size_; }
  /// Keys with an entry (some may be waiting with nothing after a collapse).
  std::size_t keys() const noexcept { return pending_.size(); }
  void clear();

 private:
  struct Pending {
    std::optional<Notification> deleted;  // a delete of a state the group had taken in
    std::optional<Notification> current;  // a newer add or update
  };

  // key → what waits; a key is in order_ iff it is in pending_ (an entry whose
  // notifications collapsed keeps its place until popped, so churn on one key
  // never grows order_). pending_'s keys view the strings in order_, which a
  // deque never moves on push_back / pop_front: a lookup allocates nothing.
  std::unordered_map<std::string_view, Pending> pending_;
  std::deque<std::string> order_;
  std::size_t size_ = 0;  // notifications in pending_
};

}  // namespace kinformer::actors
