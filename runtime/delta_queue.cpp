#include "runtime/delta_queue.hpp"

#include <cassert>
#include <functional>

namespace kinformer::detail {

namespace {

// As ObjectSet's: at most 7/8 of the slots full or erased.
bool over_load(std::size_t used, std::size_t capacity) noexcept { return used * 8 > capacity * 7; }

// Tables up to this many slots are kept when the queue empties: a FIFO that
// drains after every watch batch would otherwise allocate one per batch.
constexpr std::size_t kept_capacity = 256;

}  // namespace

// What the header's 40 B per queued key counts on (g++ on x86-64): a deque
// block of 512 B then holds 12 entries.
static_assert(sizeof(DeltaQueue::Entry) <= 40, "a queued key's entry grew past 40 B");

// -- Entry --

void DeltaQueue::Entry::push_back(Delta delta) {
  if (!more_) more_ = std::make_unique<Deltas>();
  more_->push_back(std::move(delta));
}

Deltas DeltaQueue::Entry::copy() const {
  Deltas out;
  out.reserve(size());
  out.push_back(first_);
  if (more_) out.insert(out.end(), more_->begin(), more_->end());
  return out;
}

Deltas DeltaQueue::Entry::take() {
  if (!more_) {
    Deltas out;
    out.reserve(1);
    out.push_back(std::move(first_));
    return out;
  }
  // The oldest joins the vector that is already there.
  more_->insert(more_->begin(), std::move(first_));
  return std::move(*more_);
}

// -- DeltaQueue --

DeltaQueue::DeltaQueue(DeltaQueue&& other)
    : entries_(std::move(other.entries_)),
      front_ticket_(other.front_ticket_),
      slots_(std::move(other.slots_)),
      capacity_(std::exchange(other.capacity_, 0)),
      used_(std::exchange(other.used_, 0)) {
  other.entries_.clear();
}

DeltaQueue& DeltaQueue::operator=(DeltaQueue&& other) {
  if (this != &other) {
    entries_ = std::move(other.entries_);
    other.entries_.clear();
    front_ticket_ = other.front_ticket_;
    slots_ = std::move(other.slots_);
    capacity_ = std::exchange(other.capacity_, 0);
    used_ = std::exchange(other.used_, 0);
  }
  return *this;
}

std::uint32_t DeltaQueue::mark_of(std::string_view key) noexcept {
  return static_cast<std::uint32_t>(std::hash<std::string_view>{}(key)) | full_bit;
}

std::size_t DeltaQueue::slot_of(std::string_view key, std::uint32_t mark) const noexcept {
  if (capacity_ == 0) return 0;
  const std::size_t mask = capacity_ - 1;
  for (std::size_t i = mark & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.mark == empty_mark) return capacity_;
    if (s.mark == mark && entries_[static_cast<std::uint32_t>(s.ticket - front_ticket_)].key() == key) return i;
  }
}

DeltaQueue::Entry* DeltaQueue::find(std::string_view key) noexcept {
  const std::size_t i = slot_of(key, mark_of(key));
  return i < capacity_ ? &entries_[static_cast<std::uint32_t>(slots_[i].ticket - front_ticket_)] : nullptr;
}

const DeltaQueue::Entry* DeltaQueue::find(std::string_view key) const noexcept {
  const std::size_t i = slot_of(key, mark_of(key));
  return i < capacity_ ? &entries_[static_cast<std::uint32_t>(slots_[i].ticket - front_ticket_)] : nullptr;
}

DeltaQueue::Entry& DeltaQueue::push_back(Delta first) {
  const std::uint32_t mark = mark_of(first.key());
  entries_.emplace_back(std::move(first));
  index_back(mark);
  return entries_.back();
}

DeltaQueue::Entry& DeltaQueue::push_back(Deltas deltas) {
  assert(!deltas.empty());
  const std::uint32_t mark = mark_of(deltas.back().key());
  Entry& entry = entries_.emplace_back(std::move(deltas.front()));
  for (std::size_t i = 1; i < deltas.size(); ++i) entry.push_back(std::move(deltas[i]));
  index_back(mark);
  return entry;
}

void DeltaQueue::index_back(std::uint32_t mark) {
  assert(slot_of(entries_.back().key(), mark) == capacity_ || capacity_ == 0);
  if (capacity_ == 0 || over_load(used_ + 1, capacity_)) {
    // Grow when live keys need it; otherwise the same size just sheds erased slots.
    std::size_t capacity = capacity_ == 0 ? 8 : capacity_;
    while (over_load(size(), capacity) || 2 * size() > capacity) capacity *= 2;
    rehash(capacity);
  }
  const std::uint32_t ticket = front_ticket_ + static_cast<std::uint32_t>(entries_.size() - 1);
  const std::size_t mask = capacity_ - 1;
  std::size_t i = mark & mask;
  while (slots_[i].mark & full_bit) i = (i + 1) & mask;
  if (slots_[i].mark == empty_mark) ++used_;
  slots_[i] = Slot{mark, ticket};
}

Deltas DeltaQueue::pop_front() {
  assert(!entries_.empty());
  Entry& front = entries_.front();
  // Found by ticket: unique among queued keys, so no key text is compared.
  const std::uint32_t mark = mark_of(front.key());
  const std::size_t mask = capacity_ - 1;
  std::size_t i = mark & mask;
  while (!(slots_[i].mark == mark && slots_[i].ticket == front_ticket_)) i = (i + 1) & mask;
  slots_[i].mark = erased_mark;
  Deltas out = front.take();
  entries_.pop_front();
  ++front_ticket_;
  if (entries_.empty()) release();
  return out;
}

void DeltaQueue::reserve(std::size_t n) {
  std::size_t capacity = capacity_ == 0 ? 8 : capacity_;
  while (over_load(n, capacity) || n >= capacity) capacity *= 2;
  if (capacity > capacity_) rehash(capacity);
}

void DeltaQueue::rehash(std::size_t capacity) {
  assert(capacity <= full_bit);
  auto slots = std::make_unique<Slot[]>(capacity);  // value-initialised: all empty
  const std::size_t mask = capacity - 1;
  std::size_t full = 0;  // not size(): index_back() rehashes with its entry not yet in the table
  for (std::size_t j = 0; j < capacity_; ++j) {
    const Slot s = slots_[j];
    if (!(s.mark & full_bit)) continue;
    std::size_t i = s.mark & mask;
    while (slots[i].mark != empty_mark) i = (i + 1) & mask;
    slots[i] = s;
    ++full;
  }
  slots_ = std::move(slots);
  capacity_ = capacity;
  used_ = full;
}

void DeltaQueue::release() {
  // Nothing left to probe past: forget the erased marks, and give a large
  // table and the deque's block map back.
  if (capacity_ > kept_capacity) {
    slots_.reset();
    capacity_ = 0;
    std::deque<Entry>().swap(entries_);
  } else {
    for (std::size_t i = 0; i < capacity_; ++i) slots_[i] = Slot{empty_mark, 0};
  }
  used_ = 0;
}

}  // namespace kinformer::detail
