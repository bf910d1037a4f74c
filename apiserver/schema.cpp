#include "apiserver/schema.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

const char* const known_types[] = {"object", "array", "string", "integer", "number", "boolean"};

std::string check_schema(const json& s, const std::string& path) {
  if (!s.is_object()) return path + " must be an object";
  if (auto t = s.find("type"); t != s.end()) {
    if (!t->is_string() || std::find(std::begin(known_types), std::end(known_types), t->get<std::string>()) ==
                               std::end(known_types))
      return path + ".type must be one of object, array, string, integer, number, boolean";
  }
  if (auto r = s.find("required"); r != s.end()) {
    if (!r->is_array()) return path + ".required must be an array of strings";
    for (const auto& name : *r)
      if (!name.is_string()) return path + ".required must be an array of strings";
  }
  if (auto e = s.find("enum"); e != s.end() && !e->is_array()) return path + ".enum must be an array";
  if (auto p = s.find("properties"); p != s.end()) {
    if (!p->is_object()) return path + ".properties must be an object";
    for (auto it = p->begin(); it != p->end(); ++it)
      if (auto bad = check_schema(it.value(), path + ".properties[" + it.key() + "]"); !bad.empty())
        return bad;
  }
  if (auto i = s.find("items"); i != s.end())
    if (auto bad = check_schema(*i, path + ".items"); !bad.empty()) return bad;
  if (auto a = s.find("additionalProperties"); a != s.end() && !a->is_boolean())
    if (auto bad = check_schema(*a, path + ".additionalProperties"); !bad.empty()) return bad;
  return {};
}

std::string type_of(const json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number_float()) {
    double d = v.get<double>();
    return d == static_cast<double>(static_cast<long long>(d)) ? "integer" : "number";
  }
  return "null";
}

bool has_type(const json& v, const std::string& wanted, const json& s) {
  if (v.is_null()) return s.value("nullable", false);
  if (s.value("x-kubernetes-int-or-string", false)) {
    auto t = type_of(v);
    return t == "integer" || t == "string";
  }
  if (wanted.empty()) return true;
  auto t = type_of(v);
  return t == wanted || (wanted == "number" && t == "integer");
}

// What kube-apiserver prints for a value in a type error: strings quoted, containers by kind.
std::string shown(const json& v) {
  if (v.is_object()) return "\"object\"";
  if (v.is_array()) return "\"array\"";
  return v.dump();
}

void check_value(const json& v, const json& s, const std::string& path, std::vector<ApiError::Cause>& out,
                 bool root) {
  const std::string wanted = s.value("type", "");
  if (!has_type(v, wanted, s)) {
    out.push_back({"FieldValueInvalid",
                   "Invalid value: " + shown(v) + ": " + path + " in body must be of type " +
                       (wanted.empty() ? std::string("int-or-string") : wanted) + ": \"" + type_of(v) + "\"",
                   path});
    return;
  }
  if (auto e = s.find("enum");
      e != s.end() && e->is_array() && std::find(e->begin(), e->end(), v) == e->end()) {
    std::string allowed;
    for (const auto& option : *e) allowed += (allowed.empty() ? "" : ", ") + option.dump();
    out.push_back({"FieldValueNotSupported",
                   "Unsupported value: " + v.dump() + ": supported values: " + allowed, path});
  }
  auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (v.is_object()) {
    if (auto r = s.find("required"); r != s.end() && r->is_array())
      for (const auto& name : *r)
        if (name.is_string() && !v.contains(name.get<std::string>()))
          out.push_back({"FieldValueRequired", "Required value", child(name.get<std::string>())});
    const json* properties = s.contains("properties") ? &s["properties"] : nullptr;
    const json* additional = s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (root && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata")) continue;
      if (properties && properties->contains(it.key()))
        check_value(it.value(), (*properties)[it.key()], child(it.key()), out, false);
      else if (additional && additional->is_object())
        check_value(it.value(), *additional, path + "[" + it.key() + "]", out, false);
    }
  } else if (v.is_array()) {
    if (auto items = s.find("items"); items != s.end())
      for (std::size_t i = 0; i < v.size(); ++i)
        check_value(v[i], *items, path + "[" + std::to_string(i) + "]", out, false);
  }
}

}  // namespace

Result<std::shared_ptr<const OpenApiSchema>> OpenApiSchema::parse(const json& schema) {
  if (auto bad = check_schema(schema, "openAPIV3Schema"); !bad.empty()) return {Errc::decode_failed, bad};
  return std::shared_ptr<const OpenApiSchema>(new OpenApiSchema(std::make_shared<const json>(schema)));
}

std::vector<ApiError::Cause> OpenApiSchema::validate(const json& object) const {
  std::vector<ApiError::Cause> out;
  check_value(object, *schema_, "", out, true);
  return out;
}

}  // namespace kinformer::apiserver
