#include "apiserver/schema_defaults.hpp"

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

const json* schema_member(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_object() ? &*it : nullptr;
}

bool nullable(const json& schema) {
  auto it = schema.find("nullable");
  return it != schema.end() && *it == true;
}

void default_value(const json& schema, json& value, bool root) {
  if (!schema.is_object()) return;
  if (value.is_object()) {
    const json* properties = schema_member(schema, "properties");
    if (properties)
      for (auto it = properties->begin(); it != properties->end(); ++it) {
        const json& property = it.value();
        if (!property.is_object()) continue;
        if (root && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata")) continue;
        auto present = value.find(it.key());
        bool missing = present == value.end() || (present->is_null() && !nullable(property));
        if (missing) {
          auto fallback = property.find("default");
          if (fallback == property.end()) continue;
          value[it.key()] = *fallback;
        }
        default_value(property, value[it.key()], false);
      }
    if (const json* additional = schema_member(schema, "additionalProperties"))
      for (auto it = value.begin(); it != value.end(); ++it)
        if (!properties || !properties->contains(it.key())) default_value(*additional, it.value(), false);
  } else if (value.is_array()) {
    if (const json* items = schema_member(schema, "items"))
      for (auto& element : value) default_value(*items, element, false);
  }
}

}  // namespace

void apply_schema_defaults(const json& schema, json& object) { default_value(schema, object, true); }

}  // namespace kinformer::apiserver
