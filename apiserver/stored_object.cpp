#include "apiserver/stored_object.hpp"

#include <atomic>
#include <cassert>
#include <nlohmann/json.hpp>

#include "apiserver/resource_version.hpp"
#include "apiserver/watch_encoder.hpp"
#include "runtime/key.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

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

}  // namespace

std::string object_key(std::string_view ns, std::string_view name) { return make_key(ns, name); }

StoredPtr make_stored(const ResourceType& type, json object, std::uint64_t revision) {
  set_resource_version(object, revision);
  auto out = std::make_shared<StoredObject>();
  out->type = &type;
  out->resource_version = revision;
  const auto& meta = object.at("metadata");
  out->name = meta.value("name", "");
  out->namespace_name = type.namespaced ? meta.value("namespace", "") : "";
  out->uid = meta.value("uid", "");
  out->key = object_key(out->namespace_name, out->name);
  if (auto labels = meta.find("labels"); labels != meta.end() && labels->is_object())
    for (auto it = labels->begin(); it != labels->end(); ++it)
      if (it.value().is_string()) out->labels[it.key()] = it.value().get<std::string>();
  out->fields["metadata.name"] = out->name;
  if (type.namespaced) out->fields["metadata.namespace"] = out->namespace_name;
  for (const auto& path : type.selectable_fields)
    // events' "source" selects on source.component (kube-apiserver's event field set)
    out->fields[path] =
        path == "source" ? field_value(object, "source.component") : field_value(object, path);
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

StoredObject::~StoredObject() {
  if (const Object* parsed = parsed_.load(std::memory_order_acquire)) ObjectPtr::adopt(parsed);
}

ObjectPtr StoredObject::object() const {
  // Once set, parsed_ keeps its reference until this StoredObject goes, so a new one can be shared from it.
  if (const Object* cached = parsed_.load(std::memory_order_acquire)) return ObjectPtr::share(*cached);
  auto parsed = Object::parse(json);
  // make_stored() serialized a complete object with a name: parsing it cannot fail
  assert(parsed && "a stored object's JSON does not parse as an Object");
  if (!parsed) return nullptr;
  ObjectPtr mine = std::move(parsed).value();
  ObjectPtr kept = mine;
  const Object* expected = nullptr;
  // two first readers may race: both keep the one that was stored first
  if (!parsed_.compare_exchange_strong(expected, kept.get(), std::memory_order_acq_rel)) return ObjectPtr::share(*expected);
  (void)kept.release();  // now parsed_'s reference
  return mine;
}

EventPtr make_event(EventType type, StoredPtr object, StoredPtr previous) {
  auto event = std::make_shared<StoreEvent>();
  event->resource_version = object->resource_version;
  event->type = type;
  event->line = event_line(line_type(type), object->json);
  event->object = std::move(object);
  event->previous = std::move(previous);
  return event;
}

}  // namespace kinformer::apiserver
