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
  if (!queue_.contains(key) && !(options_.track_known_objects && known_.contains(key))) return {};
  return enqueue(DeltaType::deleted, std::move(object), true);
}

Result<void> DeltaFIFO::replace(const std::vector<ObjectPtr>& list, std::string_view /*resource_version*/) {
  const DeltaType action = options_.emit_delta_type_replaced ? DeltaType::replaced : DeltaType::sync;
  // Which keys were listed, without a set of them (for a 150k-pod list that set cost
  // a hash and a node per key, ~7 MB at peak): a listed key that was queued before
  // has grown by a delta (a listed delta is never a deletion, so nothing folds it
  // away), and every key queued after those was new, so listed.
  const std::size_t queued_before = queue_.size();
  std::vector<std::size_t> sizes_before;
  sizes_before.reserve(queued_before);
  for (std::size_t i = 0; i < queued_before; ++i) sizes_before.push_back(queue_[i].size());
  queue_.reserve(queue_.size() + list.size());
  // The known view is not reserved for the list here: it grows as the keys are
  // popped, while the queue shrinks, so its table and a full queue never coexist
  // (5 MB off a 150k-pod initial list's peak; a rehash moves 32-bit marks only).
  for (const ObjectPtr& listed : list) {
    assert(listed);
    ObjectPtr object = listed;
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
    Entry& entry = queue_[i];
    if (entry.size() != sizes_before[i]) {
      ++listed;
      continue;
    }
    ObjectPtr last = entry.back().newest_object();
    push_deduped(entry, tombstone_delta(entry.key(), std::move(last)));
    ++deletions;
  }
  if (options_.track_known_objects) {
    known_.for_each([&](const ObjectPtr& object) {
      const std::string_view key = object->key();
      if (queue_.contains(key)) return;  // listed (so queued now), or queued and tombstoned above
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
    if (!queue_.contains(object->key())) append(Delta{DeltaType::sync, object, nullptr});
  });
  return {};
}

void DeltaFIFO::add_if_not_present(Deltas deltas) {
  if (deltas.empty()) return;
  populated_ = true;
  const std::string_view key = deltas.back().key();
  if (queue_.contains(key)) return;  // the queued, newer state wins
  queue_.push_back(std::move(deltas));
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
  for (std::size_t i = 0; i < queue_.size(); ++i) out.emplace_back(queue_[i].key());
  return out;
}

std::optional<Deltas> DeltaFIFO::get_by_key(std::string_view key) const {
  const Entry* entry = queue_.find(key);
  if (!entry) return std::nullopt;
  return entry->copy();
}

std::vector<ObjectPtr> DeltaFIFO::list() const {
  std::vector<ObjectPtr> out;
  out.reserve(queue_.size());
  for (std::size_t i = 0; i < queue_.size(); ++i)
    if (const ObjectPtr& newest = queue_[i].back().newest_object()) out.push_back(newest);
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
  if (Entry* entry = queue_.find(delta.key())) {
    push_deduped(*entry, std::move(delta));
    return;
  }
  queue_.push_back(std::move(delta));
}

void DeltaFIFO::push_deduped(Entry& entry, Delta delta) {
  Delta& last = entry.back();
  if (last.type == DeltaType::deleted && delta.type == DeltaType::deleted) {
    // Two deletions in a row: keep the older one unless it is only a tombstone.
    if (last.is_tombstone()) last = std::move(delta);
    return;
  }
  entry.push_back(std::move(delta));
}

PoppedDeltas DeltaFIFO::take_front() {
  // Evaluated before the counter moves: the last initial key still reports true.
  const bool initial = !has_synced();
  if (initial_population_count_ > 0) --initial_population_count_;
  return PoppedDeltas{queue_.pop_front(), initial};
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
