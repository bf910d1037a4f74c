// runtime/store_core.hpp
//
// StoreCore: the Indexer's data without its concurrency scheme — the key ->
// object table and the named indexes, maintained as informer-semantics.md §2.4
// says. The Indexer (runtime/indexer.hpp) puts it behind a reader/writer lock;
// bench/bench_runtime.cpp wraps the same core in the schemes that lost the
// measurement (sharding, copy-on-write snapshots), so the figures compare schemes,
// not data structures.
//
// Contract
//   * As the Indexer's (upsert, no-op delete of a missing key, replace rebuilds
//     every index, add_indexers indexes existing objects, unknown index errors).
//   * Each index maps value -> ObjectSet: the set holds the objects themselves, so
//     by_index() needs no second lookup, and an update whose values did not change
//     just swaps the object in place (no set or map node is touched).
//   * Memory per object beyond the Object: ~20–40 B in the table, the same again
//     per index value it has, plus one map node per distinct value.
// Threading: not thread-safe. Const members only read, so one writer may read
//   without a lock while readers hold a shared one (indexer.cpp relies on it).
// Errors: Errc::unknown_index, Errc::index_exists; never throws (beyond bad_alloc).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/indexer.hpp"
#include "runtime/object_set.hpp"

namespace kinformer::detail {

class StoreCore {
 public:
  struct Index {
    IndexFunc func;
    std::map<std::string, ObjectSet, std::less<>> values;  // no empty sets
  };
  using IndexMap = std::map<std::string, Index, std::less<>>;

  /// `indexers` plus the built-in "namespace" index.
  explicit StoreCore(Indexers indexers = {});

  // -- writes --
  void upsert(ObjectPtr object);
  void erase(std::string_view key);
  /// Exactly `list` (a later duplicate key wins), every index rebuilt.
  void replace(std::vector<ObjectPtr> list);
  [[nodiscard]] Result<void> add_indexers(Indexers indexers);
  /// add_indexers() in two steps, so that the Indexer can build without its lock:
  /// new indexes over the current objects (a read), or Errc::index_exists ...
  [[nodiscard]] Result<IndexMap> build_indexes(Indexers indexers) const;
  /// ... then adding them (a write; `built` came from build_indexes() on this state).
  void install_indexes(IndexMap built);

  /// An empty core with the same index functions (for building a replacement).
  StoreCore empty_like() const;

  // -- reads --
  ObjectPtr get_by_key(std::string_view key) const;
  std::vector<ObjectPtr> list() const;
  std::vector<std::string> list_keys() const;
  std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] Result<std::vector<ObjectPtr>> index(std::string_view name, const Object& object) const;
  [[nodiscard]] Result<std::vector<std::string>> index_keys(std::string_view name, std::string_view value) const;
  [[nodiscard]] Result<std::vector<ObjectPtr>> by_index(std::string_view name, std::string_view value) const;
  std::vector<std::string> list_index_func_values(std::string_view name) const;

 private:
  /// Moves `key` between value sets of `index` as `old` -> `now` (either null).
  static void reindex(Index& index, std::string_view key, const ObjectPtr& old, const ObjectPtr& now);
  static void index_all(Index& index, const ObjectSet& items);
  /// The named index, or Errc::unknown_index.
  Result<const Index*> find_index(std::string_view name) const;

  ObjectSet items_;
  IndexMap indexes_;
};

}  // namespace kinformer::detail
