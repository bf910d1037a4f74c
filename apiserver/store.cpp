#include "apiserver/store.hpp"

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "runtime/selector.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

std::string make_key(std::string_view ns, std::string_view name) {
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

std::string now_rfc3339() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return out;
}

// Uniqueness matters, unpredictability does not: one generator, used under the store mutex.
std::mt19937_64& rng() {
  static std::mt19937_64 generator{std::random_device{}()};
  return generator;
}

std::string new_uid() {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    auto nibble = rng()() & 0xf;
    if (i == 12) nibble = 4;                    // version 4
    if (i == 16) nibble = 8 | (nibble & 0x3);   // RFC 4122 variant
    out += hex[nibble];
  }
  return out;
}

std::string random_suffix() {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // kube-apiserver's generateName alphabet
  std::string out;
  for (int i = 0; i < 5; ++i) out += alphabet[rng()() % (sizeof alphabet - 1)];
  return out;
}

// A selectable field's value as kube-apiserver's field selectors see it: scalars as
// text, absent as "".
std::string field_value(const json& object, const std::string& path) {
  const json* at = &object;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto dot = path.find('.', start);
    auto part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object()) return {};
    auto it = at->find(part);
    if (it == at->end()) return {};
    at = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_boolean()) return at->get<bool>() ? "true" : "false";
  if (at->is_number()) return at->dump();
  return {};
}

std::optional<ApiError> validate_metadata(const ResourceType& type, const json& object) {
  auto invalid = [&](std::string field, std::string message) {
    std::string name;
    if (object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
        object["metadata"].contains("name") && object["metadata"]["name"].is_string())
      name = object["metadata"]["name"].get<std::string>();
    return ApiError::invalid(type.group, type.kind, name, {{"FieldValueInvalid", std::move(message), std::move(field)}});
  };
  if (!object.is_object()) return ApiError::bad_request("the object must be a JSON object");
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return invalid("metadata", "Required value: metadata must be an object");
  for (const char* map_field : {"labels", "annotations"}) {
    auto m = meta->find(map_field);
    if (m == meta->end() || m->is_null()) continue;
    if (!m->is_object()) return invalid(std::string("metadata.") + map_field, "Invalid value: must be a map of strings");
    for (auto it = m->begin(); it != m->end(); ++it)
      if (!it.value().is_string())
        return invalid(std::string("metadata.") + map_field + "." + it.key(), "Invalid value: must be a string");
  }
  if (auto labels = meta->find("labels"); labels != meta->end() && labels->is_object()) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (auto problem = label_key_problem(it.key()))
        return invalid("metadata.labels", "Invalid value: \"" + it.key() + "\": " + *problem);
      if (auto problem = label_value_problem(it.value().get_ref<const std::string&>()))
        return invalid("metadata.labels",
                       "Invalid value: \"" + it.value().get<std::string>() + "\": " + *problem);
    }
  }
  for (const char* string_field : {"name", "namespace", "generateName", "resourceVersion", "uid"}) {
    auto f = meta->find(string_field);
    if (f != meta->end() && !f->is_null() && !f->is_string())
      return invalid(std::string("metadata.") + string_field, "Invalid value: must be a string");
  }
  return std::nullopt;
}

// What one history event keeps alive: its line and the object it carries (the
// previous state is counted by the event that made it).
std::size_t event_bytes(const StoreEvent& event) { return event.line.size() + event.object->json.size(); }

json without_metadata_and_status(json object) {
  object.erase("metadata");
  object.erase("status");
  return object;
}

}  // namespace

StoredPtr make_stored(const ResourceType& type, const json& object) {
  auto out = std::make_shared<StoredObject>();
  out->type = &type;
  const auto& meta = object.at("metadata");
  out->name = meta.value("name", "");
  out->namespace_name = type.namespaced ? meta.value("namespace", "") : "";
  out->uid = meta.value("uid", "");
  out->key = make_key(out->namespace_name, out->name);
  auto rv = meta.value("resourceVersion", "0");
  out->resource_version = std::strtoull(rv.c_str(), nullptr, 10);
  if (auto labels = meta.find("labels"); labels != meta.end() && labels->is_object())
    for (auto it = labels->begin(); it != labels->end(); ++it)
      if (it.value().is_string()) out->labels[it.key()] = it.value().get<std::string>();
  out->fields["metadata.name"] = out->name;
  if (type.namespaced) out->fields["metadata.namespace"] = out->namespace_name;
  for (const auto& path : type.selectable_fields)
    // events' "source" selects on source.component (kube-apiserver's event field set)
    out->fields[path] = path == "source" ? field_value(object, "source.component") : field_value(object, path);
  // apiVersion and kind first, so that a list item (which omits them, §A3) is a
  // suffix of this text and lists share it instead of re-rendering every object.
  auto& text = out->json;
  text = "{";
  auto member = [&](const std::string& key, const json& value) {
    if (text.size() > 1) text += ',';
    text += json(key).dump();
    text += ':';
    text += value.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  for (const char* typed : {"apiVersion", "kind"})
    if (auto it = object.find(typed); it != object.end()) member(typed, *it);
  out->untyped_from = text.size() > 1 ? text.size() : 0;
  for (auto it = object.begin(); it != object.end(); ++it)
    if (it.key() != "apiVersion" && it.key() != "kind") member(it.key(), it.value());
  text += '}';
  return out;
}

ObjectPtr StoredObject::object() const {
  if (auto cached = std::atomic_load(&parsed_)) return cached;
  auto parsed = Object::parse(json);
  // make_stored() serialized a complete object with a name: parsing it cannot fail
  assert(parsed && "a stored object's JSON does not parse as an Object");
  if (!parsed) return nullptr;
  ObjectPtr expected;
  ObjectPtr mine = std::move(parsed).value();
  // two first readers may race: both keep the one that was stored first
  if (!std::atomic_compare_exchange_strong(&parsed_, &expected, mine)) return expected;
  return mine;
}

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

std::uint64_t Store::compacted_through() const {
  std::lock_guard lock(mu_);
  return compacted_through_;
}

ApiResult<StoredPtr> Store::get(const ResourceType& type, std::string_view ns, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto bucket = objects_.find(&type);
  if (bucket != objects_.end()) {
    auto it = bucket->second.find(make_key(type.namespaced ? ns : "", name));
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
  if (auto bad = validate_metadata(type, object)) return *bad;
  auto& meta = object["metadata"];
  auto& bucket = objects_[&type];
  if (type.namespaced) {
    meta["namespace"] = std::string(ns);
    auto& namespaces = objects_[registry_.namespaces()];
    if (options_.bootstrap_namespaces && namespaces.find(std::string(ns)) == namespaces.end())
      return ApiError::not_found("", "namespaces", std::string(ns));
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.value("name", "");
  if (name.empty()) {
    std::string prefix = meta.value("generateName", "");
    if (prefix.empty())
      return ApiError::invalid(type.group, type.kind, "",
                               {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}});
    for (int attempt = 0; attempt < 8 && name.empty(); ++attempt) {
      auto candidate = prefix + random_suffix();
      if (bucket.find(make_key(ns, candidate)) == bucket.end()) name = candidate;
    }
    if (name.empty()) return ApiError::already_exists(type.group, type.plural, prefix + "*");
    meta["name"] = name;
  }
  // Namespace names are labels; every other kind (nodes, CRDs "plural.group") takes subdomains.
  const bool label_only = &type == registry_.namespaces();
  bool valid = label_only ? is_dns_label(name) : is_dns_subdomain(name);
  if (!valid)
    return ApiError::invalid(type.group, type.kind, name,
                             {{"FieldValueInvalid",
                               "Invalid value: \"" + name + "\": a lowercase RFC 1123 " +
                                   (label_only ? "label" : "subdomain") +
                                   " must consist of lower case alphanumeric characters, '-' or '.', and must "
                                   "start and end with an alphanumeric character",
                               "metadata.name"}});
  auto key = make_key(type.namespaced ? ns : "", name);
  if (bucket.find(key) != bucket.end()) return ApiError::already_exists(type.group, type.plural, name);

  object["kind"] = type.kind;
  object["apiVersion"] = type.api_version();
  meta["uid"] = new_uid();
  meta["creationTimestamp"] = now_rfc3339();
  meta.erase("deletionTimestamp");
  meta.erase("managedFields");
  if (type.tracks_generation) meta["generation"] = 1;
  if (type.kind == "Pod" && !object.contains("status")) object["status"] = {{"phase", "Pending"}};
  if (type.kind == "Namespace") object["status"] = {{"phase", "Active"}};
  meta["resourceVersion"] = std::to_string(revision_ + 1);
  auto stored = make_stored(type, object);
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
    auto key = make_key(type.namespaced ? ns : "", name);
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
    if (auto bad = validate_metadata(type, after)) return *bad;
    auto& meta = after["metadata"];
    auto current_rv = std::to_string(current->resource_version);
    auto wanted_rv = meta.value("resourceVersion", "");
    if (!wanted_rv.empty() && wanted_rv != current_rv)
      return ApiError::conflict(type.group, type.plural, current->name,
                                "the object has been modified; please apply your changes to the latest version and try again");
    if (meta.contains("name") && meta["name"] != current->name)
      return ApiError::bad_request("the name of the object (" + meta.value("name", "") +
                                   ") does not match the name on the URL (" + current->name + ")");
    // Server-owned metadata survives every update.
    const auto& old_meta = before["metadata"];
    meta["name"] = current->name;
    if (type.namespaced) meta["namespace"] = current->namespace_name; else meta.erase("namespace");
    for (const char* owned : {"uid", "creationTimestamp", "generation", "deletionTimestamp"}) {
      if (old_meta.contains(owned)) meta[owned] = old_meta[owned]; else meta.erase(owned);
    }
    meta.erase("managedFields");
    after["kind"] = type.kind;
    after["apiVersion"] = type.api_version();
    meta["resourceVersion"] = current_rv;
    if (after == before) return WriteResult{current, false};
    if (type.tracks_generation && without_metadata_and_status(after) != without_metadata_and_status(before))
      meta["generation"] = old_meta.value("generation", 0) + 1;
    meta["resourceVersion"] = std::to_string(revision_ + 1);
    auto stored = make_stored(type, after);
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
  json last = json::parse(current->json);
  last["metadata"]["resourceVersion"] = std::to_string(++revision_);
  auto gone = make_stored(type, last);
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
    auto it = bucket.find(make_key(type.namespaced ? ns : "", name));
    if (it == bucket.end()) return ApiError::not_found(type.group, type.plural, std::string(name));
    StoredPtr current = it->second;
    if (!preconditions.uid.empty() && preconditions.uid != current->uid)
      return ApiError::conflict(type.group, type.plural, current->name,
                                "Precondition failed: UID in precondition: " + preconditions.uid +
                                    ", UID in object meta: " + current->uid);
    if (!preconditions.resource_version.empty() &&
        preconditions.resource_version != std::to_string(current->resource_version))
      return ApiError::conflict(type.group, type.plural, current->name,
                                "Precondition failed: ResourceVersion in precondition: " +
                                    preconditions.resource_version + ", ResourceVersion in object meta: " +
                                    std::to_string(current->resource_version));
    if (&type == registry_.namespaces() &&
        (current->name == "default" || current->name == "kube-system" || current->name == "kube-public"))
      return ApiError{403, "Forbidden",
                      "namespaces \"" + current->name + "\" is forbidden: this namespace may not be deleted",
                      current->name, "", "namespaces", {}, {}};
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
  auto event = std::make_shared<StoreEvent>();
  event->resource_version = object->resource_version;
  event->type = type;
  static const char* names[] = {"ADDED", "MODIFIED", "DELETED"};
  event->line.reserve(object->json.size() + 40);
  event->line.append("{\"type\":\"").append(names[static_cast<int>(type)]).append("\",\"object\":");
  event->line.append(object->json).append("}\n");
  event->object = std::move(object);
  event->previous = std::move(previous);
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

bool Store::events_after(std::uint64_t after, std::size_t max, std::vector<EventPtr>& out) const {
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

std::uint64_t Store::notify_after(std::uint64_t rv, std::function<void()> wake) {
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

void Store::cancel_wait(std::uint64_t ticket) {
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
