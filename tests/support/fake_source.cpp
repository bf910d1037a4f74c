#include "tests/support/fake_source.hpp"

#include <cstdlib>
#include <utility>

#include <nlohmann/json.hpp>

namespace kinformer::testing {

namespace {

using nlohmann::json;

// The registry and the store live and die together: watches keep the store alive
// after the FakeSource is gone, and the store refers to the registry.
struct Backing {
  explicit Backing(std::size_t history_limit)
      : registry(apiserver::ResourceRegistry::with_builtins()),
        store(registry, apiserver::StoreOptions{history_limit, /*bootstrap_namespaces=*/false}) {}
  apiserver::ResourceRegistry registry;
  apiserver::Store store;
};

// The body a client would send: the store owns metadata.resourceVersion.
json body_of(const Object& object) {
  json body = json::parse(object.json(), nullptr, false);
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object())
    body["metadata"].erase("resourceVersion");
  return body;
}

std::pair<std::string_view, std::string_view> split_key(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

}  // namespace

FakeSource::FakeSource(FakeSourceOptions options) {
  auto backing = std::make_shared<Backing>(options.history_limit);
  registry_ = std::shared_ptr<apiserver::ResourceRegistry>(backing, &backing->registry);
  store_ = std::shared_ptr<apiserver::Store>(backing, &backing->store);
  type_ = registry_->find("", "v1", options.resource);
  // a test asking for a resource that is not built in is a bug in the test
  if (!type_) std::abort();
  list_watch_ = std::make_shared<apiserver::StoreListWatch>(store_, *type_);
  faults_ = std::make_shared<FaultInjectingListWatch>(
      list_watch_, FaultInjectionOptions{std::move(options.executor), !options.watch_list, nullptr});
}

FakeSource::~FakeSource() = default;

ObjectPtr FakeSource::write(const ObjectPtr& object, bool create) {
  const auto api_version = object->api_version();
  const auto slash = api_version.find('/');
  const auto group = slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
  const auto version = slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
  const auto* type = registry_->find_kind(group, version, object->kind());
  if (!type) return nullptr;
  const auto ns = type->namespaced ? object->namespace_() : std::string_view{};
  json body = body_of(*object);
  if (create) {
    auto created = store_->create(*type, ns, std::move(body), false);
    return created ? created->object->object() : nullptr;
  }
  // as an update of the main resource through the API: the status stays the server's
  auto keep_status = [&body, type](const json* current) -> apiserver::ApiResult<json> {
    if (type->status_subresource && current) {
      if (current->contains("status")) {
        body["status"] = (*current)["status"];
      } else {
        body.erase("status");
      }
    }
    return body;
  };
  auto written = store_->write(*type, ns, object->name(), keep_status, false, false);
  return written ? written->object->object() : nullptr;
}

ObjectPtr FakeSource::erase(std::string_view key) {
  const auto [ns, name] = split_key(key);
  auto removed = store_->remove(*type_, ns, name, {}, false);
  return removed ? removed.value()->object() : nullptr;
}

template <class Change>
ObjectPtr FakeSource::unseen(Change change) {
  const std::string rv = std::to_string(store_->revision() + 1);
  faults_->drop_events_at(rv);
  ObjectPtr changed = change();
  if (!changed || changed->resource_version() != rv) faults_->stop_dropping_at(rv);
  return changed;
}

ObjectPtr FakeSource::add(const ObjectPtr& object) { return write(object, true); }
ObjectPtr FakeSource::modify(const ObjectPtr& object) { return write(object, false); }
ObjectPtr FakeSource::remove(std::string_view key) { return erase(key); }
ObjectPtr FakeSource::add_drop_watch(const ObjectPtr& object) {
  return unseen([&] { return write(object, true); });
}
ObjectPtr FakeSource::modify_drop_watch(const ObjectPtr& object) {
  return unseen([&] { return write(object, false); });
}
ObjectPtr FakeSource::remove_drop_watch(std::string_view key) {
  return unseen([&] { return erase(key); });
}

void FakeSource::bookmark() { list_watch_->bookmark(); }

void FakeSource::reset_watch() {
  store_->compact();
  faults_->close_watches();
}

std::string FakeSource::resource_version() const { return std::to_string(store_->revision()); }

std::vector<ObjectPtr> FakeSource::objects() const {
  std::vector<ObjectPtr> out;
  auto page = store_->list(*type_, {});
  if (!page) return out;
  out.reserve(page->items.size());
  for (const auto& stored : page->items) out.push_back(stored->object());
  return out;
}

ObjectPtr FakeSource::get(std::string_view key) const {
  const auto [ns, name] = split_key(key);
  auto found = store_->get(*type_, ns, name);
  return found ? found.value()->object() : nullptr;
}

}  // namespace kinformer::testing
