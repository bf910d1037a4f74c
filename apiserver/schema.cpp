#include "apiserver/schema.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "apiserver/json_hash.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

// A schema node's enum: its values, and how a message lists them; keyed by the nodes of
// the schema document, which the schema keeps alive and never changes.
struct OpenApiSchema::Enums {
  struct Enum {
    std::unordered_set<json, JsonHash> values;
    std::string shown;
  };
  std::unordered_map<const json*, Enum> by_node;
};

namespace {

const char* const known_types[] = {"object", "array", "string", "integer", "number", "boolean"};

// A string value is quoted into a cause up to this many bytes.
constexpr std::size_t max_shown_value_bytes = 256;

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
  // Read as booleans by the walk (has_type); a string here threw type_error out of it.
  for (const char* flag : {"nullable", "x-kubernetes-int-or-string"})
    if (auto f = s.find(flag); f != s.end() && !f->is_boolean()) return path + "." + flag + " must be a boolean";
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
    // A whole float is an integer within ±(2^53 - 1), as go-openapi's
    // IsFloat64AJSONInteger decides; beyond that a cast to an integer type was undefined.
    const double d = v.get<double>();
    constexpr double max_exact = 9007199254740991.0;
    return std::fabs(d) <= max_exact && d == std::trunc(d) ? "integer" : "number";
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

// What kube-apiserver prints for a value in a type error: strings quoted, containers by
// kind. Cut before rendering: a 1 MB string costs a cut, not a copy into every cause.
std::string shown(const json& v) {
  if (v.is_object()) return "\"object\"";
  if (v.is_array()) return "\"array\"";
  if (v.is_string()) return json(cut_text(v.get_ref<const std::string&>(), max_shown_value_bytes)).dump();
  return v.dump();
}

// One walk of an object against a schema. The field path is a stack of references into
// the object's keys, rendered (and cut) only for a cause: a long key under an array of
// thousands of wrong items is not copied into a path per item. The walk stops after
// max_invalid_causes + 1 causes (ApiError::invalid lists the first ones and says there
// were more) and when the budget is spent.
class Walk {
 public:
  Walk(const OpenApiSchema::Enums& enums, std::vector<ApiError::Cause>& out, WorkBudget& budget)
      : enums_(enums), out_(out), budget_(budget) {}

  void check(const json& v, const json& s, bool root) {
    if (done() || !budget_.charge()) return;
    const std::string wanted = s.value("type", "");
    if (!has_type(v, wanted, s)) {
      const auto field = path();
      add("FieldValueInvalid", "Invalid value: " + shown(v) + ": " + field + " in body must be of type " +
                                   (wanted.empty() ? std::string("int-or-string") : wanted) + ": \"" +
                                   type_of(v) + "\"");
      return;
    }
    if (auto e = enums_.by_node.find(&s); e != enums_.by_node.end() && !e->second.values.count(v))
      add("FieldValueNotSupported", "Unsupported value: " + shown(v) + ": supported values: " + e->second.shown);
    if (v.is_object()) {
      if (auto r = s.find("required"); r != s.end() && r->is_array())
        for (const auto& name : *r)
          if (name.is_string() && !v.contains(name.get_ref<const std::string&>())) {
            path_.push_back({Segment::property, name.get_ref<const std::string&>(), 0});
            add("FieldValueRequired", "Required value");
            path_.pop_back();
          }
      auto properties = s.find("properties");
      auto additional = s.find("additionalProperties");
      for (auto it = v.begin(); it != v.end() && !done(); ++it) {
        if (root && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata")) continue;
        if (properties != s.end() && properties->is_object())
          if (auto property = properties->find(it.key()); property != properties->end()) {
            descend({Segment::property, it.key(), 0}, it.value(), *property);
            continue;
          }
        if (additional != s.end() && additional->is_object()) descend({Segment::map_key, it.key(), 0}, it.value(), *additional);
      }
    } else if (v.is_array()) {
      if (auto items = s.find("items"); items != s.end())
        for (std::size_t i = 0; i < v.size() && !done(); ++i) descend({Segment::list_item, {}, i}, v[i], *items);
    }
  }

 private:
  struct Segment {
    enum Kind { property, map_key, list_item } kind;
    std::string_view name;  // property and map_key: the object's own key, alive for the walk
    std::size_t position;  // list_item
  };

  bool done() const { return out_.size() > max_invalid_causes || budget_.exhausted(); }

  void descend(Segment segment, const json& v, const json& s) {
    path_.push_back(segment);
    check(v, s, false);
    path_.pop_back();
  }

  void add(const char* type, std::string message) {
    out_.push_back({type, cut_text(message, max_cause_message_bytes), path()});
  }

  // As kube-apiserver writes it ("spec.ports[0].name", "spec.labels[key]"), cut to
  // max_cause_field_bytes: rendering stops once the path is that long.
  std::string path() const {
    std::string out;
    for (const auto& segment : path_) {
      if (out.size() > max_cause_field_bytes) break;
      switch (segment.kind) {
        case Segment::property:
          if (!out.empty()) out += '.';
          out.append(segment.name.substr(0, max_cause_field_bytes));
          break;
        case Segment::map_key:
          out.append("[").append(segment.name.substr(0, max_cause_field_bytes)).append("]");
          break;
        case Segment::list_item:
          out.append("[").append(std::to_string(segment.position)).append("]");
          break;
      }
    }
    return cut_text(out, max_cause_field_bytes);
  }

  const OpenApiSchema::Enums& enums_;
  std::vector<ApiError::Cause>& out_;
  WorkBudget& budget_;
  std::vector<Segment> path_;
};

// The enums of every schema node, as hash sets (a value is checked in O(1), not against
// each allowed value) with their message text rendered once.
void collect_enums(const json& s, OpenApiSchema::Enums& out) {
  if (!s.is_object()) return;
  if (auto e = s.find("enum"); e != s.end() && e->is_array()) {
    auto& entry = out.by_node[&s];
    entry.values.insert(e->begin(), e->end());
    std::string allowed;
    for (const auto& option : *e) {
      if (allowed.size() > max_cause_message_bytes) break;
      allowed += (allowed.empty() ? "" : ", ") + shown(option);
    }
    entry.shown = cut_text(allowed, max_cause_message_bytes / 2);
  }
  if (auto p = s.find("properties"); p != s.end() && p->is_object())
    for (const auto& property : *p) collect_enums(property, out);
  if (auto i = s.find("items"); i != s.end()) collect_enums(*i, out);
  if (auto a = s.find("additionalProperties"); a != s.end()) collect_enums(*a, out);
}

}  // namespace

Result<std::shared_ptr<const OpenApiSchema>> OpenApiSchema::parse(const json& schema) {
  if (auto bad = check_schema(schema, "openAPIV3Schema"); !bad.empty()) return {Errc::decode_failed, bad};
  auto kept = std::make_shared<const json>(schema);
  auto enums = std::make_shared<Enums>();
  collect_enums(*kept, *enums);
  return std::shared_ptr<const OpenApiSchema>(new OpenApiSchema(std::move(kept), std::move(enums)));
}

std::vector<ApiError::Cause> OpenApiSchema::validate(const json& object, WorkBudget& budget) const {
  std::vector<ApiError::Cause> out;
  Walk(*enums_, out, budget).check(object, *schema_, true);
  return out;
}

}  // namespace kinformer::apiserver
