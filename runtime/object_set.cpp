#include "runtime/object_set.hpp"

#include <algorithm>
#include <cassert>
#include <functional>
#include <utility>

namespace kinformer::detail {

namespace {

std::uint32_t mark_of(std::string_view key) noexcept {
  return static_cast<std::uint32_t>(std::hash<std::string_view>{}(key)) | ObjectSet::full_bit;
}

bool is_full(std::uint32_t mark) noexcept { return (mark & ObjectSet::full_bit) != 0; }

// At most 7/8 full (erased slots included): with the marks scanned first, a miss
// reads a few contiguous words, and an object is dereferenced only on a mark hit.
bool over_load(std::size_t used, std::size_t capacity) noexcept { return used * 8 > capacity * 7; }

}  // namespace

ObjectSet::ObjectSet(ObjectSet&& other) noexcept
    : slots_(std::move(other.slots_)),
      marks_(std::move(other.marks_)),
      capacity_(std::exchange(other.capacity_, 0)),
      size_(std::exchange(other.size_, 0)),
      used_(std::exchange(other.used_, 0)) {}

ObjectSet& ObjectSet::operator=(ObjectSet&& other) noexcept {
  if (this != &other) {
    slots_ = std::move(other.slots_);
    marks_ = std::move(other.marks_);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
    used_ = std::exchange(other.used_, 0);
  }
  return *this;
}

ObjectSet::ObjectSet(const ObjectSet& other)
    : capacity_(other.capacity_), size_(other.size_), used_(other.used_) {
  // Slot for slot: no rehashing.
  if (capacity_ == 0) return;
  slots_ = std::make_unique<ObjectPtr[]>(capacity_);
  marks_ = std::make_unique<std::uint32_t[]>(capacity_);
  std::copy(other.marks_.get(), other.marks_.get() + capacity_, marks_.get());
  for (std::size_t i = 0; i < capacity_; ++i)
    if (is_full(marks_[i])) slots_[i] = other.slots_[i];
}

ObjectSet& ObjectSet::operator=(const ObjectSet& other) {
  if (this != &other) {
    ObjectSet copy(other);
    *this = std::move(copy);
  }
  return *this;
}

std::size_t ObjectSet::slot_of(std::string_view key, std::uint32_t mark) const noexcept {
  if (capacity_ == 0) return 0;
  const std::size_t mask = capacity_ - 1;
  for (std::size_t i = mark & mask;; i = (i + 1) & mask) {
    const std::uint32_t m = marks_[i];
    if (m == empty_mark) return capacity_;
    if (m == mark && slots_[i]->key() == key) return i;
  }
}

const ObjectPtr* ObjectSet::find(std::string_view key) const noexcept {
  const std::size_t i = slot_of(key, mark_of(key));
  return i < capacity_ ? &slots_[i] : nullptr;
}

ObjectPtr ObjectSet::insert_or_assign(ObjectPtr object) {
  const std::string_view key = object->key();
  const std::uint32_t mark = mark_of(key);
  if (std::size_t i = slot_of(key, mark); i < capacity_) return std::exchange(slots_[i], std::move(object));
  if (capacity_ == 0 || over_load(used_ + 1, capacity_)) {
    // Grow when live entries need it; otherwise the same size just sheds erased slots.
    std::size_t capacity = capacity_ == 0 ? 2 : capacity_;
    while (over_load(size_ + 1, capacity) || 2 * (size_ + 1) > capacity) capacity *= 2;
    rehash(capacity);
  }
  const std::size_t mask = capacity_ - 1;
  std::size_t i = mark & mask;
  while (is_full(marks_[i])) i = (i + 1) & mask;
  if (marks_[i] == empty_mark) ++used_;
  marks_[i] = mark;
  slots_[i] = std::move(object);
  ++size_;
  return nullptr;
}

ObjectPtr ObjectSet::erase(std::string_view key) {
  const std::size_t i = slot_of(key, mark_of(key));
  if (i >= capacity_) return nullptr;
  ObjectPtr out = std::move(slots_[i]);
  marks_[i] = erased_mark;
  --size_;
  if (size_ == 0) {
    // Nothing left to probe past: forget the erased marks.
    std::fill(marks_.get(), marks_.get() + capacity_, empty_mark);
    used_ = 0;
  }
  return out;
}

void ObjectSet::clear() noexcept {
  slots_.reset();
  marks_.reset();
  capacity_ = size_ = used_ = 0;
}

void ObjectSet::reserve(std::size_t n) {
  std::size_t capacity = capacity_ == 0 ? 2 : capacity_;
  while (over_load(n, capacity) || n >= capacity) capacity *= 2;
  if (capacity > capacity_) rehash(capacity);
}

void ObjectSet::rehash(std::size_t capacity) {
  assert(capacity <= full_bit);  // a mark's low 31 bits pick the slot
  auto slots = std::make_unique<ObjectPtr[]>(capacity);
  auto marks = std::make_unique<std::uint32_t[]>(capacity);  // value-initialised: all empty
  const std::size_t mask = capacity - 1;
  for (std::size_t j = 0; j < capacity_; ++j) {
    const std::uint32_t mark = marks_[j];
    if (!is_full(mark)) continue;
    std::size_t i = mark & mask;
    while (marks[i] != empty_mark) i = (i + 1) & mask;
    marks[i] = mark;
    slots[i] = std::move(slots_[j]);
  }
  slots_ = std::move(slots);
  marks_ = std::move(marks);
  capacity_ = capacity;
  used_ = size_;
}

}  // namespace kinformer::detail
