#include "runtime/delta_fifo.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace kinformer {

namespace {

Delta tombstone_delta(std::string_view key, ObjectPtr last_known) {
  return Delta{DeltaType::deleted, nullptr, std::make_shared<const Tombstone>(Tombstone{std::string(key), std::move(last_known)})};
}

Error closed_error() { return Error{Errc::fifo_closed, "the DeltaFIFO is closed and drained"}; }

}  // namespace

DeltaFIFO::DeltaFIFO(DeltaFIFOOptions options) : options_(std::move(options)) {
  if (options_.track_known_objects) {
    known_.reserve(options_.known_objects.size());
    for (ObjectPtr& object : options_.known_objects) known_.insert_or_assign(std::move(object));
  }
  options_.known_objects.clear();
  options_.known_objects.shrink_to_fit();
}

// -- producers --

Result<void> DeltaFIFO::add(ObjectPtr object) {
  populated_ = true;
  return enqueue(DeltaType::added, std::move(object), true);
}

Result<void> DeltaFIFO::update(ObjectPtr object) {
  populated_ = true;
  return enqueue(DeltaType::updated, std::move(object), true);
}

Result<void> DeltaFIFO::delete_object(ObjectPtr object) {
  assert(object);
  populated_ = true;
  const std::string_view key = object->key();
  // Neither queued nor known: a relist already reported this deletion.
  if (items_.count(key) == 0 && !(options_.track_known_objects && known_.contains(key))) return {};
  return enqueue(DeltaType::deleted, std::move(object), true);
}

Result<void> DeltaFIFO::replace(std::vector<ObjectPtr> list, std::string_view /*resource_version*/) {
  const DeltaType action = options_.emit_delta_type_replaced ? DeltaType::replaced : DeltaType::sync;
  // Which keys were listed, without a set of them (for a 150k-pod list that set cost
  // a hash and a node per key, ~7 MB at peak): a listed key that was queued before
  // has grown by a delta (a listed delta is never a deletion, so nothing folds it
  // away), and every key queued after those was new, so listed.
  const std::size_t queued_before = queue_.size();
  std::vector<std::size_t> sizes_before;
  sizes_before.reserve(queued_before);
  for (const Item* item : queue_) sizes_before.push_back(item->deltas.size());
  items_.reserve(items_.size() + list.size());
  if (options_.track_known_objects) known_.reserve(list.size());  // every listed key is known once popped
  for (ObjectPtr& object : list) {
    assert(object);
    // Transformed even when `action` is sync: the internal type is "replaced" (§3.3).
    if (options_.transformer) {
      auto transformed = options_.transformer(std::move(object));
      if (!transformed) return std::move(transformed).error();
      object = std::move(transformed).value();
    }
    append(Delta{action, std::move(object), nullptr});
  }
  std::size_t listed = queue_.size() - queued_before;  // distinct keys

  std::size_t deletions = 0;
  // Queued but gone: the tombstone carries the newest queued state. A key whose
  // deltas already end in a deletion gets one too; push_deduped folds it away.
  for (std::size_t i = 0; i < queued_before; ++i) {
    Item* item = queue_[i];
    if (item->deltas.size() != sizes_before[i]) {
      ++listed;
      continue;
    }
    ObjectPtr last = item->deltas.back().newest_object();
    push_deduped(item->deltas, tombstone_delta(item->key, std::move(last)));
    ++deletions;
  }
  if (options_.track_known_objects) {
    known_.for_each([&](const ObjectPtr& object) {
      const std::string_view key = object->key();
      if (items_.count(key) != 0) return;  // listed (so queued now), or queued and tombstoned above
      append(tombstone_delta(key, object));
      ++deletions;
    });
  }

  if (!populated_) {
    populated_ = true;
    initial_population_count_ = listed + deletions;
  }
  return {};
}

Result<void> DeltaFIFO::resync() {
  if (!options_.track_known_objects) return {};
  known_.for_each([&](const ObjectPtr& object) {
    // A key with queued deltas already carries newer news than the cached copy.
    if (items_.count(object->key()) == 0) append(Delta{DeltaType::sync, object, nullptr});
  });
  return {};
}

void DeltaFIFO::add_if_not_present(Deltas deltas) {
  if (deltas.empty()) return;
  populated_ = true;
  const std::string_view key = deltas.back().key();
  if (items_.count(key) != 0) return;  // the queued, newer state wins
  auto item = std::make_unique<Item>();
  item->key = std::string(key);
  item->deltas = std::move(deltas);
  queue_.push_back(item.get());
  const std::string_view stable_key = item->key;
  items_.emplace(stable_key, std::move(item));
}

// -- the consumer --

Result<std::optional<PoppedDeltas>> DeltaFIFO::pop() {
  if (queue_.empty()) {
    if (closed_) return closed_error();
    return std::optional<PoppedDeltas>{};
  }
  PoppedDeltas popped = take_front();
  remember(popped.deltas);
  return std::optional<PoppedDeltas>(std::move(popped));
}

Result<std::optional<PoppedDeltas>> DeltaFIFO::pop(const std::function<Result<void>(const PoppedDeltas&)>& process) {
  if (queue_.empty()) {
    if (closed_) return closed_error();
    return std::optional<PoppedDeltas>{};
  }
  PoppedDeltas popped = take_front();
  Result<void> processed = process(popped);
  if (processed) {
    remember(popped.deltas);
    return std::optional<PoppedDeltas>(std::move(popped));
  }
  Error error = processed.error();
  if (error.code == Errc::requeue) {
    add_if_not_present(popped.deltas);
    if (error.message.empty()) return std::optional<PoppedDeltas>(std::move(popped));
    return error;
  }
  remember(popped.deltas);
  return error;
}

Result<std::vector<PoppedDeltas>> DeltaFIFO::pop_batch(std::size_t max_n) {
  if (queue_.empty() && closed_) return closed_error();
  std::vector<PoppedDeltas> out;
  out.reserve(std::min(max_n, queue_.size()));
  while (out.size() < max_n && !queue_.empty()) {
    out.push_back(take_front());
    remember(out.back().deltas);
  }
  return out;
}

// -- observers --

std::vector<std::string> DeltaFIFO::list_keys() const {
  std::vector<std::string> out;
  out.reserve(queue_.size());
  for (const Item* item : queue_) out.push_back(item->key);
  return out;
}

std::optional<Deltas> DeltaFIFO::get_by_key(std::string_view key) const {
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return it->second->deltas;
}

std::vector<ObjectPtr> DeltaFIFO::list() const {
  std::vector<ObjectPtr> out;
  out.reserve(queue_.size());
  for (const Item* item : queue_)
    if (const ObjectPtr& newest = item->deltas.back().newest_object()) out.push_back(newest);
  return out;
}

ObjectPtr DeltaFIFO::known_object(std::string_view key) const {
  const ObjectPtr* found = known_.find(key);
  return found ? *found : nullptr;
}

// -- internals --

Result<void> DeltaFIFO::enqueue(DeltaType type, ObjectPtr object, bool transform) {
  assert(object);
  if (transform && options_.transformer) {
    auto transformed = options_.transformer(std::move(object));
    if (!transformed) return std::move(transformed).error();
    object = std::move(transformed).value();
  }
  append(Delta{type, std::move(object), nullptr});
  return {};
}

void DeltaFIFO::append(Delta delta) {
  const std::string_view key = delta.key();
  if (auto it = items_.find(key); it != items_.end()) {
    push_deduped(it->second->deltas, std::move(delta));
    return;
  }
  auto item = std::make_unique<Item>();
  item->key = std::string(key);
  item->deltas.push_back(std::move(delta));
  queue_.push_back(item.get());
  const std::string_view stable_key = item->key;
  items_.emplace(stable_key, std::move(item));
}

void DeltaFIFO::push_deduped(Deltas& deltas, Delta delta) {
  if (!deltas.empty() && deltas.back().type == DeltaType::deleted && delta.type == DeltaType::deleted) {
    // Two deletions in a row: keep the older one unless it is only a tombstone.
    if (deltas.back().is_tombstone()) deltas.back() = std::move(delta);
    return;
  }
  deltas.push_back(std::move(delta));
}

PoppedDeltas DeltaFIFO::take_front() {
  Item* item = queue_.front();
  queue_.pop_front();
  // Evaluated before the counter moves: the last initial key still reports true.
  const bool initial = !has_synced();
  if (initial_population_count_ > 0) --initial_population_count_;
  auto node = items_.extract(item->key);  // owns `item` until the end of this scope
  return PoppedDeltas{std::move(item->deltas), initial};
}

void DeltaFIFO::remember(const Deltas& deltas) {
  if (!options_.track_known_objects) return;
  const Delta& newest = deltas.back();
  if (newest.type == DeltaType::deleted) {
    known_.erase(newest.key());
  } else {
    known_.insert_or_assign(newest.object);
  }
}

}  // namespace kinformer
