#include "apiserver/storage/etcd/etcd_storage.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "apiserver/crd.hpp"
#include "apiserver/object_rules.hpp"
#include "apiserver/storage/etcd/txn_retry.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// Keys per range request when a list has no limit (or a filter skips items).
constexpr std::int64_t range_chunk = 1000;

// The revision an answer was given at: a write's own revision for a Txn.
std::uint64_t header_revision(const json& answer) {
  return static_cast<std::uint64_t>(EtcdClient::number(answer.at("header"), "revision"));
}

bool succeeded(const json& txn) { return txn.value("succeeded", false); }

// The kvs of a Txn's first (range) response.
const json& first_range_kvs(const json& txn) {
  static const json none = json::array();
  auto responses = txn.find("responses");
  if (responses == txn.end() || !responses->is_array() || responses->empty()) return none;
  auto r = (*responses)[0].find("response_range");
  if (r == (*responses)[0].end()) return none;
  auto kvs = r->find("kvs");
  return kvs == r->end() ? none : *kvs;
}

json compare_mod(const std::string& key, std::uint64_t mod_revision) {
  return {
      {"key", EtcdClient::encode(key)}, {"target", "MOD"}, {"mod_revision", std::to_string(mod_revision)}};
}

bool is_terminating(const StoredObject& ns) {
  auto parsed = json::parse(ns.json, nullptr, false);
  if (!parsed.is_object()) return false;
  auto status = parsed.find("status");
  return status != parsed.end() && status->is_object() && status->value("phase", "") == "Terminating";
}

}  // namespace

Result<std::unique_ptr<EtcdStorage>> EtcdStorage::open(ResourceRegistry& registry,
                                                       EtcdOptions options) {
  if (options.prefix.empty() || options.prefix.front() != '/' || options.prefix.back() == '/')
    return Error{Errc::server_error,
                 "--etcd-prefix must start with '/' and not end with one: \"" + options.prefix + "\""};
  auto client =
      EtcdClient::create({options.endpoints, options.request_timeout, std::chrono::milliseconds(1000)});
  if (!client) return std::move(client).error();
  auto status = client.value()->call("/v3/maintenance/status", json::object());
  if (auto* failed = std::get_if<EtcdError>(&status))
    return Error{Errc::connection_failed, "cannot reach etcd: " + failed->message};
  const auto start = header_revision(std::get<json>(status));
  std::unique_ptr<EtcdStorage> storage(
      new EtcdStorage(registry, std::move(options), std::move(client).value()));
  // Before the watches: the CRD watch's events since `start` then apply on top, in order.
  if (auto served = storage->serve_stored_crds(); !served) return std::move(served).error();
  storage->watches_->start(start);
  if (auto made = storage->ensure_bootstrap_namespaces(); !made) return std::move(made).error();
  if (storage->options_.compaction_interval.count() > 0)
    storage->compactor_thread_ = std::thread([s = storage.get()] { s->compactor_loop(); });
  return storage;
}

EtcdStorage::EtcdStorage(ResourceRegistry& registry, EtcdOptions options,
                         std::unique_ptr<EtcdClient> client)
    : registry_(registry),
      options_(std::move(options)),
      client_(std::move(client)),
      watches_(std::make_unique<EtcdWatches>(
          *client_, registry_,
          EtcdWatches::Keys{
              [this](const ResourceType& type) { return type_prefix(type); },
              [this](const ResourceType& type, const json& events) { return decode_events(type, events); },
              [this](const ResourceType& type) { forget_decoded(type); }},
          EtcdWatches::Options{options_.watch_history, options_.watch_failure_grace})) {}

EtcdStorage::~EtcdStorage() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (compactor_thread_.joinable()) compactor_thread_.join();
}

// ---- keys ----

std::string EtcdStorage::resource_segment(const ResourceType& type) const {
  std::string segment = type.builtin || type.group.empty() ? type.plural : type.group + "/" + type.plural;
  // Two versions of one group/plural are separate resources here: the later ones get their own keys.
  for (const auto& other : registry_.all()) {
    if (&other == &type) break;
    if (other.group == type.group && other.plural == type.plural) return segment + "/" + type.version;
  }
  return segment;
}

std::string EtcdStorage::type_prefix(const ResourceType& type) const {
  return options_.prefix + "/" + resource_segment(type) + "/";
}

std::string EtcdStorage::key_of(const ResourceType& type, std::string_view ns, std::string_view name) const {
  return type_prefix(type) + object_key(type.namespaced ? ns : "", name);
}

const ResourceType* EtcdStorage::type_of_key(const std::string& key) const {
  const ResourceType* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& type : registry_.all()) {
    auto prefix = type_prefix(type);
    if (prefix.size() > best_length && key.compare(0, prefix.size(), prefix) == 0) {
      best = &type;
      best_length = prefix.size();
    }
  }
  return best;
}

// ---- etcd round trips ----

ApiResult<json> EtcdStorage::call(std::string_view path, const json& body) const {
  auto answer = client_->call(path, body);
  if (auto* failed = std::get_if<EtcdError>(&answer)) return failed->to_api_error();
  return std::move(std::get<json>(answer));
}

StoredPtr EtcdStorage::stored_from(const ResourceType& type, const json& kv, std::int64_t revision) const {
  auto object = json::parse(EtcdClient::decode(kv.value("value", json())), nullptr, false);
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object() ||
      !object["metadata"].contains("name")) {
    log::warn("apiserver", "etcd value is not an object; skipped", {{"key", EtcdClient::decode(kv["key"])}});
    return nullptr;
  }
  return make_stored(type, std::move(object), static_cast<std::uint64_t>(revision));
}

StoredPtr EtcdStorage::decoded(const ResourceType& type, const std::string& key,
                               std::uint64_t mod_revision) const {
  std::lock_guard lock(decoded_mu_);
  auto of_type = decoded_.find(&type);
  if (of_type == decoded_.end()) return nullptr;
  auto it = of_type->second.find(key);
  return it != of_type->second.end() && it->second->resource_version == mod_revision ? it->second : nullptr;
}

void EtcdStorage::remember(const ResourceType& type, const std::string& key, const StoredPtr& object) const {
  std::lock_guard lock(decoded_mu_);
  auto& of_type = decoded_[&type];
  if (!object) {
    of_type.erase(key);
    return;
  }
  auto& slot = of_type[key];
  if (!slot || slot->resource_version < object->resource_version) slot = object;
}

void EtcdStorage::forget_decoded(const ResourceType& type) const {
  std::lock_guard lock(decoded_mu_);
  decoded_.erase(&type);
}

ApiResult<StoredPtr> EtcdStorage::read(const ResourceType& type, const std::string& key) const {
  auto answer = call("/v3/kv/range", {{"key", EtcdClient::encode(key)}});
  if (!answer) return std::move(answer).error();
  auto kvs = answer->find("kvs");
  if (kvs == answer->end() || !kvs->is_array() || kvs->empty()) return StoredPtr{};
  const auto& kv = (*kvs)[0];
  auto object = stored_from(type, kv, EtcdClient::number(kv, "mod_revision"));
  if (object) remember(type, key, object);
  return object;
}

std::uint64_t EtcdStorage::revision() const {
  return std::max<std::uint64_t>(watches_->reached(), static_cast<std::uint64_t>(client_->last_revision()));
}

std::uint64_t EtcdStorage::revision_at_least(std::uint64_t wanted) const {
  auto now = revision();
  if (now >= wanted) return now;
  (void)client_->call("/v3/maintenance/status",
                      json::object());  // another server wrote it: learn the revision (a failure: keep ours)
  return revision();
}

std::uint64_t EtcdStorage::compacted_through(const ResourceType& type) const {
  return watches_->compacted_through(type);
}

std::uint64_t EtcdStorage::progress(const ResourceType& type) const { return watches_->progress(type); }

ApiResult<StoredPtr> EtcdStorage::get(const ResourceType& type, std::string_view ns,
                                      std::string_view name) const {
  auto found = read(type, key_of(type, ns, name));
  if (!found) return std::move(found).error();
  if (!found.value()) return ApiError::not_found(type.group, type.plural, std::string(name));
  return found;
}

ApiResult<Storage::ListPage> EtcdStorage::list(const ResourceType& type, const ListQuery& query) const {
  const std::string base = type_prefix(type);
  const std::string start = base + (query.namespace_name.empty() ? "" : query.namespace_name + "/");
  const std::string end = EtcdClient::prefix_end(start);
  std::string from = query.after_key.empty() ? start : base + query.after_key + std::string(1, '\0');
  ListPage page;
  std::uint64_t at = query.at_revision;
  std::int64_t total = -1;   // keys in [from, end) at the snapshot, from the first answer
  std::int64_t scanned = 0;  // keys looked at so far
  const std::int64_t chunk =
      query.limit != 0 && !query.filter ? static_cast<std::int64_t>(query.limit) + 1 : range_chunk;
  while (true) {
    // Keys and revisions first: the objects are usually decoded already (the watch saw them).
    json body = {{"key", EtcdClient::encode(from)},
                 {"range_end", EtcdClient::encode(end)},
                 {"limit", chunk},
                 {"keys_only", true}};
    if (at != 0) body["revision"] = std::to_string(at);
    auto answer = call("/v3/kv/range", body);
    if (!answer) return std::move(answer).error();
    if (at == 0) at = static_cast<std::uint64_t>(EtcdClient::number(answer->at("header"), "revision"));
    if (total < 0) total = EtcdClient::number(*answer, "count");
    auto kvs = answer->find("kvs");
    if (kvs == answer->end() || !kvs->is_array() || kvs->empty()) break;
    std::vector<StoredPtr> chunk_items;
    chunk_items.reserve(kvs->size());
    for (const auto& kv : *kvs) {
      auto known = decoded(type, EtcdClient::decode(kv.at("key")),
                           static_cast<std::uint64_t>(EtcdClient::number(kv, "mod_revision")));
      if (!known) break;
      chunk_items.push_back(std::move(known));
    }
    if (chunk_items.size() < kvs->size()) {  // some are new here: the same range, with values
      body.erase("keys_only");
      body["revision"] = std::to_string(at);
      auto full = call("/v3/kv/range", body);
      if (!full) return std::move(full).error();
      answer = std::move(full);
      kvs = answer->find("kvs");
      if (kvs == answer->end() || !kvs->is_array()) break;
      chunk_items.clear();
      for (const auto& kv : *kvs) {
        auto stored = stored_from(type, kv, EtcdClient::number(kv, "mod_revision"));
        if (stored) remember(type, EtcdClient::decode(kv.at("key")), stored);
        chunk_items.push_back(std::move(stored));
      }
    }
    for (auto& stored : chunk_items) {
      ++scanned;
      if (!stored || (query.filter && !query.filter(*stored))) continue;
      if (query.limit != 0 && page.items.size() == query.limit) {
        page.last_key = page.items.back()->key;
        page.remaining =
            query.filter ? 1 : static_cast<std::size_t>(std::max<std::int64_t>(1, total - scanned + 1));
        page.revision = at;
        return page;
      }
      page.items.push_back(std::move(stored));
    }
    if (!answer->value("more", false)) break;
    from = EtcdClient::decode(kvs->back().at("key")) + std::string(1, '\0');
  }
  page.revision = at;
  return page;
}

// ---- writes ----

Attempt<Storage::WriteResult> EtcdStorage::create_once(const ResourceType& type, std::string_view ns,
                                                      json object, bool dry_run) {
  std::uint64_t namespace_revision = 0;
  std::string namespace_key;
  auto check_namespace = [&]() -> std::optional<ApiError> {
    namespace_key = key_of(*registry_.namespaces(), "", ns);
    auto found = read(*registry_.namespaces(), namespace_key);
    if (!found) return std::move(found).error();
    if (!found.value()) return ApiError::not_found("", "namespaces", std::string(ns));
    if (is_terminating(*found.value()))
      return ApiError::forbidden(
          type.group, type.plural, object["metadata"].value("name", ""),
          "unable to create new content in namespace " + std::string(ns) + " because it is being terminated");
    namespace_revision = found.value()->resource_version;
    return std::nullopt;
  };
  // Taken names show up as a failed Txn below; generateName's random suffix rarely collides.
  auto taken = [](const std::string&) { return false; };
  if (auto refused = prepare_create(type, ns, object, check_namespace, taken))
    return ApiResult<WriteResult>(*refused);
  const std::string name = object["metadata"]["name"].get<std::string>();
  const std::string key = key_of(type, ns, name);
  if (dry_run) {
    auto existing = read(type, key);
    if (!existing) return ApiResult<WriteResult>(std::move(existing).error());
    if (existing.value()) return Lost::name_taken;
    return ApiResult<WriteResult>(WriteResult{make_stored(type, std::move(object), revision() + 1), true});
  }
  object["metadata"].erase("resourceVersion");
  json compare =
      json::array({{{"key", EtcdClient::encode(key)}, {"target", "CREATE"}, {"create_revision", "0"}}});
  if (namespace_revision != 0) compare.push_back(compare_mod(namespace_key, namespace_revision));
  json txn = {
      {"compare", compare},
      {"success",
       json::array({{{"request_put",
                      {{"key", EtcdClient::encode(key)}, {"value", EtcdClient::encode(object.dump())}}}}})},
      {"failure", json::array({{{"request_range", {{"key", EtcdClient::encode(key)}}}}})}};
  auto answer = call("/v3/kv/txn", txn);
  if (!answer) return ApiResult<WriteResult>(std::move(answer).error());
  // The namespace changed meanwhile (e.g. it is being deleted): check it again.
  if (!succeeded(*answer)) return first_range_kvs(*answer).empty() ? Lost::namespace_changed : Lost::name_taken;
  return ApiResult<WriteResult>(WriteResult{make_stored(type, std::move(object), header_revision(*answer)), true});
}

ApiResult<Storage::WriteResult> EtcdStorage::create(const ResourceType& type, std::string_view ns,
                                                    json object, bool dry_run) {
  const std::string name = object.value("metadata", json::object()).value("name", "");
  return TxnRetry().run<WriteResult>(
      [&]() -> Attempt<WriteResult> {
        auto created = create_once(type, ns, object, dry_run);
        if (std::get_if<Lost>(&created) && std::get<Lost>(created) == Lost::name_taken)
          return ApiResult<WriteResult>(ApiError::already_exists(type.group, type.plural, name));
        return created;
      },
      [&] { return ApiError::conflict(type.group, type.plural, "", "the namespace kept changing during the create"); });
}

ApiResult<Storage::WriteResult> EtcdStorage::write(const ResourceType& type, std::string_view ns,
                                                   std::string_view name, const Mutation& mutation,
                                                   bool create_if_absent, bool dry_run) {
  const std::string key = key_of(type, ns, name);
  return TxnRetry().run<WriteResult>(
      [&]() -> Attempt<WriteResult> {
        auto current = read(type, key);
        if (!current) return ApiResult<WriteResult>(std::move(current).error());
        if (!current.value()) {
          if (!create_if_absent)
            return ApiResult<WriteResult>(ApiError::not_found(type.group, type.plural, std::string(name)));
          auto fresh = mutation(nullptr);
          if (!fresh) return ApiResult<WriteResult>(std::move(fresh).error());
          return create_once(type, ns, std::move(fresh).value(), dry_run);  // lost: read again
        }
        const StoredPtr existing = current.value();
        json before = json::parse(existing->json);
        auto changed = mutation(&before);
        if (!changed) return ApiResult<WriteResult>(std::move(changed).error());
        json after = std::move(changed).value();
        auto differs = prepare_update(type, *existing, before, after);
        if (!differs) return ApiResult<WriteResult>(std::move(differs).error());
        if (!differs.value()) return ApiResult<WriteResult>(WriteResult{existing, false});
        if (dry_run)
          return ApiResult<WriteResult>(WriteResult{make_stored(type, std::move(after), revision() + 1), false});
        after["metadata"].erase("resourceVersion");
        json txn = {{"compare", json::array({compare_mod(key, existing->resource_version)})},
                    {"success", json::array({{{"request_put",
                                               {{"key", EtcdClient::encode(key)},
                                                {"value", EtcdClient::encode(after.dump())}}}}})}};
        auto answer = call("/v3/kv/txn", txn);
        if (!answer) return ApiResult<WriteResult>(std::move(answer).error());
        if (!succeeded(*answer)) return Lost::modified;  // another writer won: compute again on its result
        return ApiResult<WriteResult>(
            WriteResult{make_stored(type, std::move(after), header_revision(*answer)), false});
      },
      [&] {
        return ApiError::conflict(
            type.group, type.plural, std::string(name),
            "the object kept changing; please apply your changes to the latest version and try again");
      });
}

Attempt<StoredPtr> EtcdStorage::delete_one(const ResourceType& type, const StoredPtr& current) {
  const std::string key = key_of(type, current->namespace_name, current->name);
  json txn = {{"compare", json::array({compare_mod(key, current->resource_version)})},
              {"success", json::array({{{"request_delete_range", {{"key", EtcdClient::encode(key)}}}}})}};
  auto answer = call("/v3/kv/txn", txn);
  if (!answer) return ApiResult<StoredPtr>(std::move(answer).error());
  if (!succeeded(*answer)) return Lost::modified;
  return ApiResult<StoredPtr>(make_stored(type, json::parse(current->json), header_revision(*answer)));
}

std::optional<ApiError> EtcdStorage::empty_namespace(const StoredObject& ns) {
  for (const auto& owner : registry_.all()) {
    if (!owner.namespaced) continue;
    while (true) {
      Storage::ListQuery query;
      query.namespace_name = ns.name;
      query.limit = static_cast<std::size_t>(range_chunk);
      auto doomed = list(owner, query);
      if (!doomed) return std::move(doomed).error();
      for (const auto& object : doomed->items) {
        auto gone = delete_one(owner, object);
        // Lost: it changed meanwhile; the next round lists it again.
        if (auto* settled = std::get_if<ApiResult<StoredPtr>>(&gone); settled && !*settled)
          return std::move(*settled).error();
      }
      if (doomed->items.empty()) break;
    }
  }
  return std::nullopt;
}

ApiResult<StoredPtr> EtcdStorage::remove(const ResourceType& type, std::string_view ns, std::string_view name,
                                         const Preconditions& preconditions, bool dry_run) {
  const std::string key = key_of(type, ns, name);
  const bool is_namespace = &type == registry_.namespaces();
  return TxnRetry().run<StoredPtr>(
      [&]() -> Attempt<StoredPtr> {
        auto current = read(type, key);
        if (!current) return current;
        if (!current.value())
          return ApiResult<StoredPtr>(ApiError::not_found(type.group, type.plural, std::string(name)));
        StoredPtr existing = current.value();
        if (auto refused = deletion_refused(type, is_namespace, *existing, preconditions))
          return ApiResult<StoredPtr>(*refused);
        if (dry_run) return ApiResult<StoredPtr>(existing);
        if (is_namespace) {
          if (!is_terminating(*existing)) {
            // Terminating first: creates in the namespace compare its mod_revision, so none
            // lands after the cascade below has looked.
            auto marked = write(
                type, "", name,
                [](const json* now) -> ApiResult<json> {
                  json next = *now;
                  next["status"]["phase"] = "Terminating";
                  return next;
                },
                false, false);
            if (!marked) return ApiResult<StoredPtr>(std::move(marked).error());
            existing = marked->object;
          }
          if (auto failed = empty_namespace(*existing)) return ApiResult<StoredPtr>(*failed);
        }
        return delete_one(type, existing);
      },
      [&] {
        return ApiError::conflict(type.group, type.plural, std::string(name),
                                  "the object kept changing during the delete");
      });
}

Result<void> EtcdStorage::ensure_bootstrap_namespaces() {
  for (const char* name : {"default", "kube-system", "kube-public"}) {
    // Several servers may start at once: a name another one took is made.
    auto made = TxnRetry().run<bool>(
        [&]() -> Attempt<bool> {
          auto created = create_once(*registry_.namespaces(), "", json{{"metadata", {{"name", name}}}}, false);
          if (auto* lost = std::get_if<Lost>(&created))
            return *lost == Lost::name_taken ? Attempt<bool>(ApiResult<bool>(true)) : Attempt<bool>(*lost);
          auto& settled = std::get<ApiResult<WriteResult>>(created);
          if (!settled) return ApiResult<bool>(std::move(settled).error());
          return ApiResult<bool>(true);
        },
        [] { return ApiError::conflict("", "namespaces", "", "the namespace kept changing during the create"); });
    if (!made)
      return Error{Errc::connection_failed,
                   "cannot create namespace " + std::string(name) + " in etcd: " + made.error().message};
  }
  return {};
}

Result<void> EtcdStorage::serve_stored_crds() {
  const ResourceType* crds = registry_.find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  if (!crds) return {};
  auto page = list(*crds, {});
  if (!page) return Error{Errc::connection_failed, "cannot list the CustomResourceDefinitions in etcd: " +
                                                       page.error().message};
  for (const auto& crd : page->items)
    if (auto served = follow_crd(registry_, EventType::added, *crd); !served)
      log::warn("apiserver", "a CustomResourceDefinition in etcd cannot be served",
                {{"name", crd->name}, {"error", served.error().message}});
  return {};
}

// ---- the watches (apiserver/storage/etcd/etcd_watches.hpp) ----

std::vector<EventPtr> EtcdStorage::decode_events(const ResourceType& type, const json& events) const {
  std::vector<EventPtr> fresh;
  for (const auto& e : events) {
    const auto& kv = e.at("kv");
    const std::string key = EtcdClient::decode(kv.at("key"));
    if (type_of_key(key) != &type) continue;  // another type's keys below this one's prefix
    const auto mod = EtcdClient::number(kv, "mod_revision");
    StoredPtr previous;
    if (auto prev = e.find("prev_kv"); prev != e.end())
      previous = stored_from(type, *prev, EtcdClient::number(*prev, "mod_revision"));
    if (e.value("type", "") == "DELETE") {
      remember(type, key, nullptr);
      if (!previous) continue;  // nothing to tell a watcher about the deleted object
      auto last = make_stored(type, json::parse(previous->json), static_cast<std::uint64_t>(mod));
      fresh.push_back(make_event(EventType::deleted, std::move(last), previous));
      continue;
    }
    auto object = stored_from(type, kv, mod);
    if (!object) continue;
    remember(type, key, object);
    const bool added = EtcdClient::number(kv, "create_revision") == mod;
    fresh.push_back(make_event(added ? EventType::added : EventType::modified, object, added ? nullptr : previous));
  }
  return fresh;
}

bool EtcdStorage::events_after(const ResourceType& type, std::uint64_t after, std::size_t max,
                               std::vector<EventPtr>& out) const {
  return watches_->events_after(type, after, max, out);
}

std::uint64_t EtcdStorage::notify_after(const ResourceType& type, std::uint64_t rv, std::function<void()> wake) {
  return watches_->notify_after(type, rv, std::move(wake));
}

void EtcdStorage::cancel_wait(const ResourceType& type, std::uint64_t ticket) { watches_->cancel_wait(type, ticket); }

void EtcdStorage::compact() {
  auto status = client_->call("/v3/maintenance/status", json::object());
  if (!std::holds_alternative<json>(status)) return;
  const auto now = header_revision(std::get<json>(status));
  // "required revision has been compacted": another server compacted further; fine.
  (void)client_->call("/v3/kv/compaction", {{"revision", std::to_string(now)}});
  watches_->restart_at(now);
}

void EtcdStorage::compactor_loop() {
  std::uint64_t previous = 0;
  std::unique_lock lock(mu_);
  while (!changed_.wait_for(lock, options_.compaction_interval, [&] { return stopping_; })) {
    lock.unlock();
    auto status = client_->call("/v3/maintenance/status", json::object());
    if (auto* answer = std::get_if<json>(&status)) {
      // Already compacted further by another server: etcd refuses, which is fine.
      if (previous > 0) {
        auto done = client_->call("/v3/kv/compaction", {{"revision", std::to_string(previous)}});
        auto* failed = std::get_if<EtcdError>(&done);
        if (!failed || failed->code == EtcdErrc::compacted) watches_->note_compacted(previous);
      }
      previous = header_revision(*answer);
    }
    lock.lock();
  }
}

}  // namespace kinformer::apiserver
