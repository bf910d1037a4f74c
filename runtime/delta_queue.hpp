// runtime/delta_queue.hpp
//
// DeltaQueue: the DeltaFIFO's queued keys, stored flat: each key's deltas in
// arrival order, the keys in order of first arrival, found by key without a
// second copy of it.
//
// Why: after a list every key has one delta. A node per key (an Item with its
// key string and a one-element vector, a hash-map node and a deque slot) cost
// ~175 B per key, 26 MB at the peak of a 150k-pod initial list (heaptrack), in
// five allocations per key. Here an entry keeps its oldest delta inline and lives
// in a std::deque in queue order (40 B, no allocation of its own); the key index is
// a flat table of 8-B slots, each the key's 32-bit hash and the entry's 32-bit
// ticket (its position counted from the first entry ever queued, modulo 2^32),
// so the key text is read from the entry's newest delta (an Object or a
// Tombstone keeps it) and a rehash or a pop never compares key text.
//
// Contract
//   * At most one entry per key; entries are pushed at the back and popped at the
//     front only (a DeltaFIFO never removes a key from the middle).
//   * An entry is never empty; its key is its newest delta's key (client-go's
//     KeyOf: re-queued deltas may start with another key), and every delta
//     pushed onto it must have that key.
//   * find() is exact (key text compared on a hash match). A reference to an entry
//     stays valid until that entry is popped (std::deque keeps elements in place
//     when pushing at the back or popping at the front).
//   * When the queue empties, the key table and the deque's blocks are released,
//     so a drained 150k-key list leaves nothing behind.
// Threading: not thread-safe; one owner (runtime/delta_fifo.hpp).
// Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>

#include "runtime/delta.hpp"

namespace kinformer::detail {

class DeltaQueue {
 public:
  /// One queued key's deltas, oldest first.
  class Entry {
   public:
    explicit Entry(Delta first) : first_(std::move(first)) {}

    std::string_view key() const noexcept { return back().key(); }
    std::size_t size() const noexcept { return more_ ? 1 + more_->size() : 1; }
    const Delta& back() const noexcept { return more_ ? more_->back() : first_; }
    Delta& back() noexcept { return more_ ? more_->back() : first_; }
    /// `delta` must have this entry's key.
    void push_back(Delta delta);
    /// A copy of the deltas (objects shared).
    Deltas copy() const;
    /// Moves the deltas out; the entry is left unusable (it is being popped).
    Deltas take();

   private:
    Delta first_;
    // Later deltas, only for a key changed again before it was popped; never an
    // empty vector. A pointer, not a vector, keeps an entry at 40 B.
    std::unique_ptr<Deltas> more_;
  };

  DeltaQueue() = default;
  /// A moved-from queue is empty.
  DeltaQueue(DeltaQueue&& other);
  DeltaQueue& operator=(DeltaQueue&& other);
  DeltaQueue(const DeltaQueue&) = delete;
  DeltaQueue& operator=(const DeltaQueue&) = delete;
  ~DeltaQueue() = default;

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  /// The entry queued under `key`, or null.
  Entry* find(std::string_view key) noexcept;
  const Entry* find(std::string_view key) const noexcept;
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// Queues a new entry at the back; its key must not be queued.
  Entry& push_back(Delta first);
  /// Queues `deltas` (non-empty) as one entry under its newest delta's key, which
  /// must not be queued.
  Entry& push_back(Deltas deltas);
  /// The i-th entry in queue order (0 = the oldest); i < size().
  Entry& operator[](std::size_t i) noexcept { return entries_[i]; }
  const Entry& operator[](std::size_t i) const noexcept { return entries_[i]; }
  /// Removes the oldest entry (the queue must not be empty) and returns its deltas.
  Deltas pop_front();
  /// Grows the key table so that `n` keys fit without rehashing.
  void reserve(std::size_t n);

  /// Heap bytes of the key table (the entries are counted by the deque's blocks).
  std::size_t table_bytes() const noexcept { return capacity_ * sizeof(Slot); }

 private:
  // A slot's mark: empty_mark, erased_mark (probing continues past it), or the
  // key's hash with full_bit set; its low bits pick the slot.
  struct Slot {
    std::uint32_t mark;
    std::uint32_t ticket;
  };
  static constexpr std::uint32_t empty_mark = 0;
  static constexpr std::uint32_t erased_mark = 1;
  static constexpr std::uint32_t full_bit = 0x80000000u;

  static std::uint32_t mark_of(std::string_view key) noexcept;
  /// The slot whose entry has `key` (hash `mark`), or capacity_ when absent.
  std::size_t slot_of(std::string_view key, std::uint32_t mark) const noexcept;
  /// Adds the index slot of the entry just pushed at the back.
  void index_back(std::uint32_t mark);
  void rehash(std::size_t capacity);
  void release();

  std::deque<Entry> entries_;       // queue order; entries_[i] has ticket front_ticket_ + i
  std::uint32_t front_ticket_ = 0;  // the oldest entry's ticket
  std::unique_ptr<Slot[]> slots_;   // capacity_ slots; full ones are exactly the queued keys
  std::size_t capacity_ = 0;        // 0 or a power of two, at most 2^31
  std::size_t used_ = 0;            // full + erased slots; < capacity_, so every probe ends
};

}  // namespace kinformer::detail
