#include "runtime/object_set.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace kinformer::detail {

namespace {

std::size_t hash_key(std::string_view key) noexcept { return std::hash<std::string_view>{}(key); }

// The top 7 bits: the low bits pick the slot, so the tag filters on independent bits.
std::uint8_t tag_of(std::size_t hash) noexcept {
  return static_cast<std::uint8_t>(0x80u | (hash >> (8 * sizeof(std::size_t) - 7)));
}

// At most 7/8 full (erased slots included): with the tag bytes scanned first, a
// miss reads a few contiguous bytes, and an object is dereferenced only on a tag hit.
bool over_load(std::size_t used, std::size_t capacity) noexcept { return used * 8 > capacity * 7; }

}  // namespace

ObjectSet::ObjectSet(ObjectSet&& other) noexcept
    : slots_(std::move(other.slots_)),
      tags_(std::move(other.tags_)),
      capacity_(std::exchange(other.capacity_, 0)),
      size_(std::exchange(other.size_, 0)),
      used_(std::exchange(other.used_, 0)) {}

ObjectSet& ObjectSet::operator=(ObjectSet&& other) noexcept {
  if (this != &other) {
    slots_ = std::move(other.slots_);
    tags_ = std::move(other.tags_);
    capacity_ = std::exchange(other.capacity_, 0);
    size_ = std::exchange(other.size_, 0);
    used_ = std::exchange(other.used_, 0);
  }
  return *this;
}

ObjectSet::ObjectSet(const ObjectSet& other)
    : capacity_(other.capacity_), size_(other.size_), used_(other.used_) {
  // Slot for slot: no rehashing, so no object is dereferenced to find its key.
  if (capacity_ == 0) return;
  slots_ = std::make_unique<ObjectPtr[]>(capacity_);
  tags_ = std::make_unique<std::uint8_t[]>(capacity_);
  std::copy(other.tags_.get(), other.tags_.get() + capacity_, tags_.get());
  for (std::size_t i = 0; i < capacity_; ++i)
    if (tags_[i] & full_bit) slots_[i] = other.slots_[i];
}

ObjectSet& ObjectSet::operator=(const ObjectSet& other) {
  if (this != &other) {
    ObjectSet copy(other);
    *this = std::move(copy);
  }
  return *this;
}

std::size_t ObjectSet::slot_of(std::string_view key, std::size_t hash) const noexcept {
  if (capacity_ == 0) return 0;
  const std::size_t mask = capacity_ - 1;
  const std::uint8_t tag = tag_of(hash);
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const std::uint8_t t = tags_[i];
    if (t == empty_tag) return capacity_;
    if (t == tag && slots_[i]->key() == key) return i;
  }
}

const ObjectPtr* ObjectSet::find(std::string_view key) const noexcept {
  const std::size_t i = slot_of(key, hash_key(key));
  return i < capacity_ ? &slots_[i] : nullptr;
}

ObjectPtr ObjectSet::insert_or_assign(ObjectPtr object) {
  const std::string_view key = object->key();
  const std::size_t hash = hash_key(key);
  if (std::size_t i = slot_of(key, hash); i < capacity_) return std::exchange(slots_[i], std::move(object));
  if (capacity_ == 0 || over_load(used_ + 1, capacity_)) {
    // Grow when live entries need it; otherwise the same size just sheds erased slots.
    std::size_t capacity = capacity_ == 0 ? 2 : capacity_;
    while (over_load(size_ + 1, capacity) || 2 * (size_ + 1) > capacity) capacity *= 2;
    rehash(capacity);
  }
  const std::size_t mask = capacity_ - 1;
  std::size_t i = hash & mask;
  while (tags_[i] & full_bit) i = (i + 1) & mask;
  if (tags_[i] == empty_tag) ++used_;
  tags_[i] = tag_of(hash);
  slots_[i] = std::move(object);
  ++size_;
  return nullptr;
}

ObjectPtr ObjectSet::erase(std::string_view key) {
  const std::size_t i = slot_of(key, hash_key(key));
  if (i >= capacity_) return nullptr;
  ObjectPtr out = std::move(slots_[i]);
  tags_[i] = erased_tag;
  --size_;
  if (size_ == 0) {
    // Nothing left to probe past: forget the erased marks.
    for (std::size_t j = 0; j < capacity_; ++j) tags_[j] = empty_tag;
    used_ = 0;
  }
  return out;
}

void ObjectSet::clear() noexcept {
  slots_.reset();
  tags_.reset();
  capacity_ = size_ = used_ = 0;
}

void ObjectSet::reserve(std::size_t n) {
  std::size_t capacity = capacity_ == 0 ? 2 : capacity_;
  while (over_load(n, capacity) || n >= capacity) capacity *= 2;
  if (capacity > capacity_) rehash(capacity);
}

void ObjectSet::rehash(std::size_t capacity) {
  auto slots = std::make_unique<ObjectPtr[]>(capacity);
  auto tags = std::make_unique<std::uint8_t[]>(capacity);  // value-initialised: all empty
  const std::size_t mask = capacity - 1;
  for (std::size_t j = 0; j < capacity_; ++j) {
    if (!(tags_[j] & full_bit)) continue;
    const std::size_t hash = hash_key(slots_[j]->key());
    std::size_t i = hash & mask;
    while (tags[i] != empty_tag) i = (i + 1) & mask;
    tags[i] = tag_of(hash);
    slots[i] = std::move(slots_[j]);
  }
  slots_ = std::move(slots);
  tags_ = std::move(tags);
  capacity_ = capacity;
  used_ = size_;
}

}  // namespace kinformer::detail
