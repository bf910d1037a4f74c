#include "runtime/store_core.hpp"

#include <algorithm>
#include <utility>

namespace kinformer::detail {

namespace {

bool contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

StoreCore::StoreCore(Indexers indexers) {
  indexes_.emplace(std::string(namespace_index), Index{namespace_index_func, {}});
  for (auto& [name, func] : indexers) indexes_.insert_or_assign(name, Index{std::move(func), {}});
}

StoreCore StoreCore::empty_like() const {
  StoreCore out;
  out.indexes_.clear();
  for (const auto& [name, index] : indexes_) out.indexes_.emplace(name, Index{index.func, {}});
  return out;
}

// -- writes --

void StoreCore::upsert(ObjectPtr object) {
  ObjectPtr old = items_.insert_or_assign(object);
  for (auto& [name, index] : indexes_) reindex(index, object->key(), old, object);
}

void StoreCore::erase(std::string_view key) {
  ObjectPtr old = items_.erase(key);
  if (!old) return;  // only a stored key touches the indexes
  for (auto& [name, index] : indexes_) reindex(index, old->key(), old, nullptr);
}

void StoreCore::replace(std::vector<ObjectPtr> list) {
  ObjectSet items;
  items.reserve(list.size());
  for (ObjectPtr& object : list) items.insert_or_assign(std::move(object));
  items_ = std::move(items);
  for (auto& [name, index] : indexes_) {
    index.values.clear();
    index_all(index, items_);
  }
}

Result<void> StoreCore::add_indexers(Indexers indexers) {
  auto built = build_indexes(std::move(indexers));
  if (!built) return std::move(built).error();
  install_indexes(std::move(built).value());
  return {};
}

Result<StoreCore::IndexMap> StoreCore::build_indexes(Indexers indexers) const {
  for (const auto& [name, func] : indexers)
    if (indexes_.count(name) != 0) return Error{Errc::index_exists, "indexer conflict: " + name};
  IndexMap built;
  for (auto& [name, func] : indexers) {
    Index& index = built.emplace(name, Index{std::move(func), {}}).first->second;
    index_all(index, items_);
  }
  return built;
}

void StoreCore::install_indexes(IndexMap built) { indexes_.merge(built); }

void StoreCore::reindex(Index& index, std::string_view key, const ObjectPtr& old, const ObjectPtr& now) {
  const std::vector<std::string> old_values = old ? index.func(*old) : std::vector<std::string>{};
  const std::vector<std::string> new_values = now ? index.func(*now) : std::vector<std::string>{};
  for (const std::string& v : old_values) {
    if (contains(new_values, v)) continue;  // kept: swapped below without touching the map
    auto it = index.values.find(v);
    if (it == index.values.end()) continue;
    it->second.erase(key);
    if (it->second.empty()) index.values.erase(it);  // high-cardinality indexes must not grow forever
  }
  for (const std::string& v : new_values) {
    auto it = index.values.find(v);
    if (it == index.values.end()) it = index.values.emplace(v, ObjectSet{}).first;
    it->second.insert_or_assign(now);
  }
}

void StoreCore::index_all(Index& index, const ObjectSet& items) {
  items.for_each([&index](const ObjectPtr& object) { reindex(index, object->key(), nullptr, object); });
}

// -- reads --

ObjectPtr StoreCore::get_by_key(std::string_view key) const {
  const ObjectPtr* found = items_.find(key);
  return found ? *found : nullptr;
}

std::vector<ObjectPtr> StoreCore::list() const {
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  items_.for_each([&out](const ObjectPtr& object) { out.push_back(object); });
  return out;
}

std::vector<std::string> StoreCore::list_keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  items_.for_each([&out](const ObjectPtr& object) { out.emplace_back(object->key()); });
  return out;
}

Result<const StoreCore::Index*> StoreCore::find_index(std::string_view name) const {
  auto it = indexes_.find(name);
  if (it == indexes_.end()) return Error{Errc::unknown_index, "Index with name " + std::string(name) + " does not exist"};
  return &it->second;
}

Result<std::vector<ObjectPtr>> StoreCore::index(std::string_view name, const Object& object) const {
  auto found = find_index(name);
  if (!found) return std::move(found).error();
  const Index& index = **found;
  std::vector<ObjectPtr> out;
  const std::vector<std::string> values = index.func(object);
  for (const std::string& v : values) {
    auto it = index.values.find(v);
    if (it == index.values.end()) continue;
    it->second.for_each([&out](const ObjectPtr& o) { out.push_back(o); });
  }
  if (values.size() > 1) {
    // An object under several of the values is reported once.
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

Result<std::vector<std::string>> StoreCore::index_keys(std::string_view name, std::string_view value) const {
  auto found = find_index(name);
  if (!found) return std::move(found).error();
  std::vector<std::string> out;
  auto it = (*found)->values.find(value);
  if (it == (*found)->values.end()) return out;
  out.reserve(it->second.size());
  it->second.for_each([&out](const ObjectPtr& o) { out.emplace_back(o->key()); });
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<ObjectPtr>> StoreCore::by_index(std::string_view name, std::string_view value) const {
  auto found = find_index(name);
  if (!found) return std::move(found).error();
  std::vector<ObjectPtr> out;
  auto it = (*found)->values.find(value);
  if (it == (*found)->values.end()) return out;
  out.reserve(it->second.size());
  it->second.for_each([&out](const ObjectPtr& o) { out.push_back(o); });
  return out;
}

std::vector<std::string> StoreCore::list_index_func_values(std::string_view name) const {
  std::vector<std::string> out;
  auto it = indexes_.find(name);
  if (it == indexes_.end()) return out;  // unknown name: empty, not an error (§2.3)
  out.reserve(it->second.values.size());
  for (const auto& [value, set] : it->second.values) out.push_back(value);
  return out;
}

}  // namespace kinformer::detail
