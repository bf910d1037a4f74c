#include "apiserver/storage/store.hpp"

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "apiserver/object_rules.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// What one history event keeps alive: its line and the object it carries (the
// previous state is counted by the event that made it).
std::size_t event_bytes(const StoreEvent& event) { return event.line.size() + event.object->json.size(); }

}  // namespace

Store::Store(const ResourceRegistry& registry, StoreOptions options) : registry_(registry), options_(options) {
  if (options_.watch_history == 0) options_.watch_history = 1;
  if (!options_.bootstrap_namespaces) return;
  std::vector<std::function<void()>> none;
  for (const char* ns : {"default", "kube-system", "kube-public"})
    (void)commit_create_locked(*registry_.namespaces(), "", json{{"metadata", {{"name", ns}}}}, false, none);
  // The bootstrap namespaces are the starting state, not watchable history.
  history_.clear();
  history_bytes_ = 0;
  compacted_through_ = revision_;
  durable_revision_ = revision_;
}

// Declared after the lock_guard, so its destructor runs while the mutex is still held.
struct Store::LogHandOff {
  Store& store;
  ~LogHandOff() { store.hand_to_log_locked(); }
};

void Store::hand_to_log_locked() {
  if (log_ && !unlogged_.empty()) log_->append(std::move(unlogged_));
  unlogged_.clear();
}

std::uint64_t Store::revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

std::uint64_t Store::progress(const ResourceType&) const {
  std::lock_guard lock(mu_);
  return durable_revision_;
}

std::uint64_t Store::compacted_through(const ResourceType&) const {
  std::lock_guard lock(mu_);
  return compacted_through_;
}

ApiResult<StoredPtr> Store::get(const ResourceType& type, std::string_view ns, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto bucket = objects_.find(&type);
  if (bucket != objects_.end()) {
    auto it = bucket->second.find(object_key(type.namespaced ? ns : "", name));
    if (it != bucket->second.end()) return it->second;
  }
  return ApiError::not_found(type.group, type.plural, std::string(name));
}

ApiResult<Store::ListPage> Store::list(const ResourceType& type, const ListQuery& query) const {
  std::lock_guard lock(mu_);
  ListPage page;
  static const Bucket empty;
  auto found = objects_.find(&type);
  const Bucket& current = found == objects_.end() ? empty : found->second;
  // An older snapshot is the current bucket with the changes since undone: `undone`
  // maps each key changed after at_revision to its state then (nullptr: absent). It
  // costs the history since the snapshot, not a copy of the bucket.
  Bucket undone;
  page.revision = revision_;
  if (query.at_revision != 0 && query.at_revision != revision_) {
    if (query.at_revision < compacted_through_)
      return ApiError::expired("too old resource version: " + std::to_string(query.at_revision) + " (" +
                               std::to_string(compacted_through_ + 1) + ")");
    if (query.at_revision > revision_)
      return ApiError::bad_request("snapshot revision " + std::to_string(query.at_revision) +
                                   " is in the future");
    for (auto it = history_.rbegin(); it != history_.rend() && (*it)->resource_version > query.at_revision;
         ++it)
      if ((*it)->object->type == &type)
        undone[(*it)->object->key] = (*it)->previous;  // the oldest change wins
    page.revision = query.at_revision;
  }
  std::string prefix = query.namespace_name.empty() ? std::string{} : query.namespace_name + "/";
  auto start = [&](const Bucket& b) {
    return query.after_key.empty() ? b.lower_bound(prefix) : b.upper_bound(query.after_key);
  };
  auto in_range = [&](const std::string& key) {
    return prefix.empty() || key.compare(0, prefix.size(), prefix) == 0;
  };
  auto now = start(current), then = start(undone);
  while (true) {
    bool now_ok = now != current.end() && in_range(now->first);
    bool then_ok = then != undone.end() && in_range(then->first);
    if (!now_ok && !then_ok) break;
    const StoredPtr* item = nullptr;
    if (then_ok && (!now_ok || then->first <= now->first)) {
      if (now_ok && now->first == then->first) ++now;
      item = &(then++)->second;
    } else {
      item = &(now++)->second;
    }
    if (!*item || (query.filter && !query.filter(**item))) continue;
    if (query.limit != 0 && page.items.size() == query.limit) {
      if (page.last_key.empty()) page.last_key = page.items.back()->key;
      ++page.remaining;
      if (query.filter) break;     // with a filter only "more remain" is reported
      if (query.remaining_hint) {  // the hint counts this page too; at least this item remains
        auto hint = *query.remaining_hint;
        page.remaining = std::max<std::size_t>(1, hint > query.limit ? hint - query.limit : 0);
        break;
      }
      continue;
    }
    page.items.push_back(*item);
  }
  return page;
}

ApiResult<Store::WriteResult> Store::commit_create_locked(const ResourceType& type, std::string_view ns, json object,
                                                          bool dry_run, std::vector<std::function<void()>>& wake) {
  auto& bucket = objects_[&type];
  auto check_namespace = [&]() -> std::optional<ApiError> {
    auto& namespaces = objects_[registry_.namespaces()];
    if (options_.bootstrap_namespaces && namespaces.find(std::string(ns)) == namespaces.end())
      return ApiError::not_found("", "namespaces", std::string(ns));
    return std::nullopt;
  };
  auto taken = [&](const std::string& key) { return bucket.find(key) != bucket.end(); };
  if (auto refused = prepare_create(type, ns, object, check_namespace, taken)) return *refused;
  auto key = object_key(type.namespaced ? ns : "", object["metadata"]["name"].get<std::string>());
  auto stored = make_stored(type, std::move(object), revision_ + 1);
  if (dry_run) return WriteResult{stored, true};
  ++revision_;
  bucket[key] = stored;
  append_event_locked(EventType::added, stored, nullptr, wake);
  return WriteResult{stored, true};
}

ApiResult<Store::WriteResult> Store::create(const ResourceType& type, std::string_view ns, json object, bool dry_run) {
  std::vector<std::function<void()>> wake;
  ApiResult<WriteResult> result = [&] {
    std::lock_guard lock(mu_);
    LogHandOff hand_off{*this};
    return commit_create_locked(type, ns, std::move(object), dry_run, wake);
  }();
  for (auto& w : wake) w();
  return result;
}

ApiResult<Store::WriteResult> Store::write(const ResourceType& type, std::string_view ns, std::string_view name,
                                           const Mutation& mutation, bool create_if_absent, bool dry_run) {
  std::vector<std::function<void()>> wake;
  ApiResult<WriteResult> result = [&]() -> ApiResult<WriteResult> {
    std::lock_guard lock(mu_);
    LogHandOff hand_off{*this};
    auto& bucket = objects_[&type];
    auto key = object_key(type.namespaced ? ns : "", name);
    auto it = bucket.find(key);
    if (it == bucket.end()) {
      if (!create_if_absent) return ApiError::not_found(type.group, type.plural, std::string(name));
      auto fresh = mutation(nullptr);
      if (!fresh) return std::move(fresh).error();
      return commit_create_locked(type, ns, std::move(fresh).value(), dry_run, wake);
    }
    const StoredPtr current = it->second;
    json before = json::parse(current->json);
    auto changed = mutation(&before);
    if (!changed) return std::move(changed).error();
    json after = std::move(changed).value();
    auto differs = prepare_update(type, *current, before, after);
    if (!differs) return std::move(differs).error();
    if (!differs.value()) return WriteResult{current, false};
    auto stored = make_stored(type, std::move(after), revision_ + 1);
    if (dry_run) return WriteResult{stored, false};
    ++revision_;
    it->second = stored;
    append_event_locked(EventType::modified, stored, current, wake);
    return WriteResult{stored, false};
  }();
  for (auto& w : wake) w();
  return result;
}

StoredPtr Store::remove_locked(const ResourceType& type, const StoredPtr& current,
                               std::vector<std::function<void()>>& wake) {
  auto gone = make_stored(type, json::parse(current->json), ++revision_);
  objects_[&type].erase(current->key);
  append_event_locked(EventType::deleted, gone, current, wake);
  return gone;
}

ApiResult<StoredPtr> Store::remove(const ResourceType& type, std::string_view ns, std::string_view name,
                                   const Preconditions& preconditions, bool dry_run) {
  std::vector<std::function<void()>> wake;
  ApiResult<StoredPtr> result = [&]() -> ApiResult<StoredPtr> {
    std::lock_guard lock(mu_);
    LogHandOff hand_off{*this};
    auto& bucket = objects_[&type];
    auto it = bucket.find(object_key(type.namespaced ? ns : "", name));
    if (it == bucket.end()) return ApiError::not_found(type.group, type.plural, std::string(name));
    StoredPtr current = it->second;
    if (auto refused = deletion_refused(type, &type == registry_.namespaces(), *current, preconditions))
      return *refused;
    if (dry_run) return current;
    if (&type == registry_.namespaces()) {
      // Namespace deletion removes what the namespace holds first, one event each.
      for (auto& [owner, objects] : objects_) {
        if (!owner->namespaced) continue;
        std::vector<StoredPtr> doomed;
        for (const auto& [key, object] : objects)
          if (object->namespace_name == current->name) doomed.push_back(object);
        for (const auto& object : doomed) (void)remove_locked(*owner, object, wake);
      }
    }
    return remove_locked(type, current, wake);
  }();
  for (auto& w : wake) w();
  return result;
}

void Store::append_event_locked(EventType type, StoredPtr object, StoredPtr previous,
                                std::vector<std::function<void()>>& wake) {
  auto event = make_event(type, std::move(object), std::move(previous));
  history_bytes_ += event_bytes(*event);
  if (log_) unlogged_.push_back(event);
  history_.push_back(std::move(event));
  while (history_.size() > options_.watch_history ||
         (history_.size() > 1 && history_bytes_ > options_.watch_history_bytes)) {
    compacted_through_ = history_.front()->resource_version;
    history_bytes_ -= event_bytes(*history_.front());
    history_.pop_front();
  }
  if (log_) return;  // watchers wait for mark_durable()
  durable_revision_ = revision_;
  for (auto& [ticket, w] : waiters_) wake.push_back(std::move(w));
  waiters_.clear();
}

bool Store::events_after(const ResourceType&, std::uint64_t after, std::size_t max,
                         std::vector<EventPtr>& out) const {
  std::lock_guard lock(mu_);
  if (after < compacted_through_) return false;
  if (after >= durable_revision_) return true;
  // history_ holds revisions compacted_through_+1 .. revision_, contiguously; watchers
  // see them up to durable_revision_.
  std::size_t index = after - compacted_through_;
  std::size_t end = std::min<std::size_t>(history_.size(), durable_revision_ - compacted_through_);
  for (std::size_t n = 0; index < end && n < max; ++index, ++n) out.push_back(history_[index]);
  return true;
}

std::uint64_t Store::notify_after(const ResourceType&, std::uint64_t rv, std::function<void()> wake) {
  {
    std::lock_guard lock(mu_);
    if (durable_revision_ <= rv) {
      auto ticket = next_ticket_++;
      waiters_.emplace(ticket, std::move(wake));
      return ticket;
    }
  }
  wake();
  return 0;
}

void Store::cancel_wait(const ResourceType&, std::uint64_t ticket) {
  std::lock_guard lock(mu_);
  waiters_.erase(ticket);
}

void Store::compact() {
  std::lock_guard lock(mu_);
  history_.clear();
  history_bytes_ = 0;
  compacted_through_ = revision_;
}

void Store::attach_log(StoreLog* log) {
  std::lock_guard lock(mu_);
  log_ = log;
  durable_revision_ = revision_;  // what was there before the log is the recovered, durable state
}

void Store::mark_durable(std::uint64_t revision) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mu_);
    revision = std::min(revision, revision_);
    if (revision <= durable_revision_) return;
    durable_revision_ = revision;
    for (auto& [ticket, w] : waiters_) wake.push_back(std::move(w));
    waiters_.clear();
  }
  for (auto& w : wake) w();
}

Store::Contents Store::contents() const {
  Contents out;
  std::lock_guard lock(mu_);
  out.revision = revision_;
  for (const auto& type : registry_.all())
    if (auto bucket = objects_.find(&type); bucket != objects_.end())
      for (const auto& [key, object] : bucket->second) out.objects.push_back(object);
  return out;
}

void Store::restore(std::uint64_t revision, std::vector<StoredPtr> objects) {
  std::unordered_map<const ResourceType*, Bucket> loaded;
  for (auto& object : objects) loaded[object->type][object->key] = std::move(object);
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mu_);
    objects_ = std::move(loaded);
    revision_ = revision;
    durable_revision_ = revision;
    history_.clear();
    history_bytes_ = 0;
    compacted_through_ = revision_;
    for (auto& [ticket, w] : waiters_) wake.push_back(std::move(w));
    waiters_.clear();
  }
  for (auto& w : wake) w();
}

Result<void> Store::replay(EventType type, StoredPtr object) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mu_);
    auto fail = [&](const std::string& why) {
      return Error{Errc::decode_failed, object->type->plural + " " + object->key + " at resourceVersion " +
                                            std::to_string(object->resource_version) + ": " + why};
    };
    if (object->resource_version != revision_ + 1)
      return fail("does not follow revision " + std::to_string(revision_));
    auto& bucket = objects_[object->type];
    auto it = bucket.find(object->key);
    StoredPtr previous = it == bucket.end() ? nullptr : it->second;
    if (type == EventType::added && previous) return fail("ADDED, but the object exists");
    if (type != EventType::added && !previous)
      return fail("MODIFIED or DELETED, but the object does not exist");
    if (type == EventType::added && object->type->namespaced && options_.bootstrap_namespaces) {
      auto& namespaces = objects_[registry_.namespaces()];
      if (namespaces.find(object->namespace_name) == namespaces.end())
        return fail("its namespace " + object->namespace_name + " does not exist");
    }
    revision_ = object->resource_version;
    if (type == EventType::deleted)
      bucket.erase(object->key);
    else
      bucket[object->key] = object;
    append_event_locked(type, std::move(object), std::move(previous), wake);
  }
  for (auto& w : wake) w();
  return {};
}

}  // namespace kinformer::apiserver
