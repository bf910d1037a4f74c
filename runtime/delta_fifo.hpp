// runtime/delta_fifo.hpp
//
// DeltaFIFO: a per-key queue of pending changes between the Reflector and the
// Controller (client-go 1.32 DeltaFIFO; informer-semantics.md §3, checklist 1–21).
//
// Contract
//   * A key is queued at most once; its deltas keep arrival order and are never
//     empty. Keys pop in order of first arrival; a key popped and changed again
//     goes to the tail.
//   * The only coalescing: two consecutive deletions collapse into one (the older,
//     unless the older is a tombstone).
//   * Known objects are kept by the FIFO itself (options.track_known_objects): the
//     view is updated at pop time to the popped key's newest object (erased on a
//     deletion), sharing the cache's ObjectPtr. It is what delete_object(),
//     replace() and resync() consult, so a change popped but not yet applied by the
//     Controller still counts as known (architecture.md §4, semantics §10).
//   * replace() tombstones every key queued or known but absent from the list
//     (queued keys in queue order, then known keys in no particular order);
//     the first replace() sets the initial population; has_synced() is true once
//     it has been popped completely (or at once if the first call was not a replace).
//   * The known view costs ~14–27 B per key (16 B for 100k Pods: 131072 slots of
//     the shared ObjectPtr and its key's 32-bit hash, runtime/object_set.hpp); a queued key costs one 40-B entry and
//     an 8-B slot of the key table (runtime/delta_queue.hpp), plus a vector only
//     when it holds more than one delta. bench_runtime (2 vCPUs, load 0.9-2.3,
//     2 runs alternating with the build before the flat queue, medians of 5):
//     6.0–7.7 M add+pop ops/s (add 20k Pods, then pop them; 2.7–4.6 M before),
//     10.7–11.5 M ops/s for update + pop_batch(64) on known keys (8.2–10.3 M).
//   * The transformer runs on objects given to add/update/delete_object/replace,
//     never on sync deltas or tombstones; its error aborts that call.
// Threading: not thread-safe; one owner (the DeltaFIFO actor, actors/delta_fifo.hpp).
// Errors: Errc::fifo_closed from pop()/pop_batch() once closed and drained;
//   transformer errors; a pop(process) error.
//   Never throws (beyond std::bad_alloc).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/delta.hpp"
#include "runtime/delta_queue.hpp"
#include "runtime/object_set.hpp"
#include "runtime/result.hpp"

namespace kinformer {

struct DeltaFIFOOptions {
  /// replace() queues Replaced deltas (true, what informers use) or Sync (false, legacy).
  bool emit_delta_type_replaced = true;
  /// Keep the known-objects view (true for informers). Without it the FIFO behaves
  /// like client-go's DeltaFIFO without knownObjects: delete_object() of a key with
  /// nothing queued is dropped, resync() does nothing.
  bool track_known_objects = true;
  /// Applied to incoming objects; an error aborts the call that brought the object.
  std::function<Result<ObjectPtr>(ObjectPtr)> transformer;
  /// The known view to start from (a FIFO restarted over a warm cache); empty by
  /// default. Seeding it does not mark the FIFO populated.
  std::vector<ObjectPtr> known_objects;
};

/// One popped key: its deltas and whether the pop belongs to the initial list.
struct PoppedDeltas {
  Deltas deltas;
  bool is_in_initial_list = false;
};

class DeltaFIFO {
 public:
  explicit DeltaFIFO(DeltaFIFOOptions options = {});

  // -- producers (the Reflector) --

  /// Queues Added. Marks the FIFO populated.
  [[nodiscard]] Result<void> add(ObjectPtr object);
  /// Queues Updated. Marks the FIFO populated.
  [[nodiscard]] Result<void> update(ObjectPtr object);
  /// Queues Deleted unless the key is neither queued nor known (already deleted by
  /// a relist). Marks the FIFO populated.
  [[nodiscard]] Result<void> delete_object(ObjectPtr object);
  /// A full list: Replaced (or Sync) per listed object, then a tombstone Deleted for
  /// every queued or known key not in the list. `resource_version` is not used here.
  /// The objects are shared, not copied: the caller may keep `list`.
  [[nodiscard]] Result<void> replace(const std::vector<ObjectPtr>& list, std::string_view resource_version);
  /// Sync for every known key that has nothing queued, in no particular order.
  [[nodiscard]] Result<void> resync();
  /// Re-inserts popped deltas only if nothing is queued for their key (client-go
  /// 1.32 AddIfNotPresent); empty deltas are ignored. Marks the FIFO populated.
  void add_if_not_present(Deltas deltas);

  // -- the consumer (the Controller) --

  /// The oldest queued key's deltas, or std::nullopt when the queue is empty and not
  /// closed (the owner parks the request), or Errc::fifo_closed when closed and empty.
  /// Updates the known-objects view.
  [[nodiscard]] Result<std::optional<PoppedDeltas>> pop();
  /// Like pop(), but hands the deltas to `process` first (client-go's Pop(process)).
  /// If `process` fails with Errc::requeue, the deltas go back as add_if_not_present()
  /// puts them and the known view is left alone; pop then succeeds when the error's
  /// message is empty and returns the error otherwise (client-go's ErrRequeue{nil} /
  /// ErrRequeue{err}). Any other error is returned and the deltas are dropped
  /// (RetryOnError=false, as shared informers use); they still count as popped for
  /// the known view: the FIFO cannot tell how far `process` got, and a key known
  /// but not cached costs a spurious delete later, while a key cached but not
  /// known would lose its deletion for good.
  [[nodiscard]] Result<std::optional<PoppedDeltas>> pop(
      const std::function<Result<void>(const PoppedDeltas&)>& process);
  /// Up to `max_n` keys in queue order, each with its own is_in_initial_list (as
  /// that many pop() calls would give); empty when the queue is empty and open,
  /// Errc::fifo_closed when it is empty and closed. Updates the known-objects view.
  [[nodiscard]] Result<std::vector<PoppedDeltas>> pop_batch(std::size_t max_n);

  /// Wakes nothing by itself (the owner answers parked pops); later pops drain what
  /// is queued, then fail with Errc::fifo_closed.
  void close() noexcept { closed_ = true; }
  bool is_closed() const noexcept { return closed_; }

  // -- observers --

  /// populated && the initial population has been popped completely.
  bool has_synced() const noexcept { return populated_ && initial_population_count_ == 0; }
  std::size_t size() const noexcept { return queue_.size(); }
  bool empty() const noexcept { return queue_.empty(); }
  std::vector<std::string> list_keys() const;
  /// A copy of the deltas queued for `key` (objects shared), if any.
  std::optional<Deltas> get_by_key(std::string_view key) const;
  /// The newest object of every queued key.
  std::vector<ObjectPtr> list() const;
  /// The known-objects view: key -> last popped object.
  ObjectPtr known_object(std::string_view key) const;
  std::size_t known_count() const noexcept { return known_.size(); }

 private:
  using Entry = detail::DeltaQueue::Entry;

  /// Appends one delta for `object`'s key (transformed first when `transform`),
  /// applying the dedup rule and queueing the key if it is new.
  [[nodiscard]] Result<void> enqueue(DeltaType type, ObjectPtr object, bool transform);
  /// Appends `delta` under its key with the dedup rule; queues the key if new.
  void append(Delta delta);
  /// Appends to a queued key's deltas; if the last two are deletions, keeps one.
  static void push_deduped(Entry& entry, Delta delta);
  /// Removes the oldest key and returns its deltas with the initial-list flag.
  PoppedDeltas take_front();
  /// Points the known view at the popped key's newest object (or forgets the key).
  void remember(const Deltas& deltas);

  DeltaFIFOOptions options_;
  detail::DeltaQueue queue_;  // queued keys, each once, in order of first arrival
  detail::ObjectSet known_;  // key -> last popped object (deleted keys erased)
  bool populated_ = false;
  std::size_t initial_population_count_ = 0;  // keys of the first replace() not yet popped
  bool closed_ = false;
};

}  // namespace kinformer
