// runtime/object_set.hpp
//
// ObjectSet: a hash set of ObjectPtr keyed by Object::key(), the compact map
// under the DeltaFIFO's known-objects view, the Indexer's store and every index
// value's key set.
//
// Why not std::unordered_map<std::string, ObjectPtr>: a node-based map costs a
// node (next pointer, key, value, cached hash: ~64 B + malloc overhead) plus a
// key copy per entry. The key already lives inside the Object, so a flat table of
// ObjectPtr with a 32-bit mark (the key's hash) per slot costs ~14–27 B per entry
// (8 B pointer + 4 B mark, load factor between 7/16 and 7/8) and no allocation
// per insert; the mark lets the table grow without touching the objects.
//
// Contract
//   * At most one object per key; insert_or_assign() replaces the object with the
//     same key and returns the one it replaced.
//   * Lookups take a std::string_view key; no std::string is built.
//   * Iteration order is unspecified and changes when the table grows.
//   * A moved-from set is empty.
// Threading: not thread-safe; the owner synchronises (indexer.cpp, one FIFO owner).
// Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "runtime/object.hpp"

namespace kinformer::detail {

class ObjectSet {
 public:
  ObjectSet() = default;
  ObjectSet(ObjectSet&& other) noexcept;
  ObjectSet& operator=(ObjectSet&& other) noexcept;
  ObjectSet(const ObjectSet& other);
  ObjectSet& operator=(const ObjectSet& other);
  ~ObjectSet() = default;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  /// The object stored under `key`, or null.
  const ObjectPtr* find(std::string_view key) const noexcept;
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// Stores `object` (non-null) under its key; returns the object it replaced, or null.
  ObjectPtr insert_or_assign(ObjectPtr object);
  /// Removes the object under `key`; returns it, or null when absent.
  ObjectPtr erase(std::string_view key);
  void clear() noexcept;
  /// Grows the table so that `n` objects fit without rehashing.
  void reserve(std::size_t n);

  /// Calls `f(const ObjectPtr&)` for every stored object, in unspecified order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (marks_[i] & full_bit) f(slots_[i]);
  }

  // A slot's mark: empty_mark, erased_mark (probing continues past it), or the
  // key's hash with full_bit set. The slot is picked by the mark's low bits, so a
  // rehash moves slots by their marks alone, without dereferencing an object to
  // hash its key again (that was ~13 % of a 150k-pod initial list's CPU, the
  // Indexer's table doubling as the pops fill it); a lookup dereferences an
  // object only on a 32-bit hash match.
  static constexpr std::uint32_t empty_mark = 0;
  static constexpr std::uint32_t erased_mark = 1;
  static constexpr std::uint32_t full_bit = 0x80000000u;

  /// Heap bytes of the table itself (the objects are shared and not counted).
  std::size_t table_bytes() const noexcept { return capacity_ * (sizeof(ObjectPtr) + sizeof(std::uint32_t)); }

 private:
  /// The slot holding `key`, or capacity_ when absent; `mark` is the key's (object_set.cpp).
  std::size_t slot_of(std::string_view key, std::uint32_t mark) const noexcept;
  void rehash(std::size_t capacity);

  std::unique_ptr<ObjectPtr[]> slots_;  // capacity_ slots; non-null iff the mark is full
  std::unique_ptr<std::uint32_t[]> marks_;  // capacity_ marks
  std::size_t capacity_ = 0;  // 0 or a power of two, at most 2^31
  std::size_t size_ = 0;      // full slots
  std::size_t used_ = 0;      // full + erased slots; < capacity_, so every probe ends
};

}  // namespace kinformer::detail
