#include "apiserver/managed_fields.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/json_hash.hpp"
#include "apiserver/patch.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// kube-apiserver's field manager strips these before it computes a field set: they are
// the server's, or they name the object rather than set it.
bool is_unowned_metadata(const std::string& field) {
  return field == "name" || field == "namespace" || field == "uid" || field == "resourceVersion" ||
         field == "generation" || field == "creationTimestamp" || field == "selfLink" || field == "managedFields";
}

// `$patch`, `$setElementOrder/...` and the like steer a strategic merge; they are not fields.
bool is_directive(const std::string& field) { return !field.empty() && field[0] == '$'; }

// A member of a FieldsV1 set stands for its own path when it is a leaf ({}) or has ".".
bool owns_itself(const json& member) { return member.empty() || member.contains("."); }

// `children` (without ".") as a member that does (or does not) own its own path.
json as_member(json children, bool itself) {
  if (itself && !children.empty()) children["."] = json::object();
  return children;
}

json children_of(const json& member) {
  json out = member.is_object() ? member : json::object();
  out.erase(".");
  return out;
}

json fields_of_value(const std::string& field, const json& value, bool strategic, WorkBudget& budget);

json fields_of_object(const json& object, bool strategic, WorkBudget& budget) {
  json out = json::object();
  for (auto it = object.begin(); it != object.end() && budget.charge(); ++it)
    if (!is_directive(it.key())) out["f:" + it.key()] = fields_of_value(it.key(), it.value(), strategic, budget);
  return out;
}

json fields_of_list(const std::string& field, const json& list, bool strategic, WorkBudget& budget) {
  if (!strategic || list.empty()) return json::object();
  const auto rule = list_merge_rule(field, list.front());
  json out = json::object();
  if (rule.kind == ListMergeRule::Kind::set_of_values) {
    for (const auto& value : list)
      if (budget.charge()) out["v:" + value.dump()] = json::object();
  } else if (rule.kind == ListMergeRule::Kind::by_key) {
    for (const auto& element : list) {
      if (!budget.charge()) break;
      if (!element.is_object() || !element.contains(rule.key)) continue;  // the merge refuses it (400)
      out["k:" + json{{rule.key, element[rule.key]}}.dump()] =
          as_member(fields_of_object(element, strategic, budget), true);
    }
  }
  return out;  // a list replaced whole is one leaf
}

json fields_of_value(const std::string& field, const json& value, bool strategic, WorkBudget& budget) {
  if (value.is_object()) return fields_of_object(value, strategic, budget);
  if (value.is_array()) return fields_of_list(field, value, strategic, budget);
  return json::object();
}

// The elements of one list by the `k:` members that name them ({"name":"c0"}), through
// a hash index per set of key fields, built on first use: a member is found in O(1),
// so walking a field set over a list of n keyed elements costs O(n), not O(n²).
class KeyedElements {
 public:
  KeyedElements(const json& list, WorkBudget& budget) : list_(list), budget_(budget) {}

  /// The position of the element `member` names, or the list's size (none, or not a list).
  std::size_t find(const std::string& member) {
    const std::size_t none = list_.is_array() ? list_.size() : 0;
    auto key = json::parse(member.substr(2), nullptr, false);
    if (!list_.is_array() || !key.is_object() || key.empty()) return none;
    std::vector<std::string> names;
    for (auto k = key.begin(); k != key.end(); ++k) names.push_back(k.key());
    auto [index, fresh] = indexes_.try_emplace(std::move(names));
    if (fresh) build(index->first, index->second);
    auto at = index->second.find(key.dump());
    return at == index->second.end() ? none : at->second;
  }

 private:
  // Each element's projection on `names`, rendered as a member's key is (keys sorted).
  void build(const std::vector<std::string>& names, std::unordered_map<std::string, std::size_t>& index) {
    if (!budget_.charge(list_.size() * names.size())) return;
    for (std::size_t i = 0; i < list_.size(); ++i) {
      const auto& element = list_[i];
      if (!element.is_object()) continue;
      json projection = json::object();
      for (const auto& name : names) {
        auto there = element.find(name);
        if (there == element.end()) break;
        projection[name] = *there;
      }
      if (projection.size() == names.size()) index.emplace(projection.dump(), i);  // the first one wins
    }
  }

  const json& list_;
  WorkBudget& budget_;
  std::map<std::vector<std::string>, std::unordered_map<std::string, std::size_t>> indexes_;
};

// What a member of a FieldsV1 set names inside `node`, or nullptr (`v:` members name
// a value, not a place). `keyed` indexes `node` when it is a list.
const json* member_in(const json* node, const std::string& member, KeyedElements* keyed) {
  if (!node || member.size() < 2 || member[1] != ':') return nullptr;
  if (member[0] == 'f' && node->is_object()) {
    auto child = node->find(member.substr(2));
    return child == node->end() ? nullptr : &*child;
  }
  if (member[0] == 'k' && node->is_array() && keyed) {
    auto at = keyed->find(member);
    return at == node->size() ? nullptr : &(*node)[at];
  }
  return nullptr;
}

// The members of `fields` whose values differ between `before` and `after`.
json changed_members(const json* before, const json* after, const json& fields, WorkBudget& budget) {
  json out = json::object();
  std::optional<KeyedElements> keyed_before, keyed_after;
  if (before && before->is_array()) keyed_before.emplace(*before, budget);
  if (after && after->is_array()) keyed_after.emplace(*after, budget);
  for (auto it = fields.begin(); it != fields.end() && budget.charge(); ++it) {
    if (it.key() == "." || !it.value().is_object()) continue;
    const json* was = member_in(before, it.key(), keyed_before ? &*keyed_before : nullptr);
    const json* is = member_in(after, it.key(), keyed_after ? &*keyed_after : nullptr);
    const json children = children_of(it.value());
    const bool leaf = children.empty() && it.key()[0] != 'v';
    const bool itself = (leaf && (!was || !is || *was != *is)) || (it.value().contains(".") && (!was) != (!is));
    json rest = children.empty() ? json::object() : changed_members(was, is, children, budget);
    if (itself || !rest.empty()) out[it.key()] = as_member(std::move(rest), itself);
  }
  return out;
}

// Removes the members of `fields` under `node`; true when `node` itself is to go
// (it held something and the removal emptied it). A list's doomed elements are marked
// first and go in one pass, so that the positions the index found stay valid.
bool remove_members(json& node, const json& fields, WorkBudget& budget) {
  if (!fields.is_object() || !node.is_structured() || node.empty()) return false;
  std::optional<KeyedElements> keyed;
  std::vector<bool> doomed;
  std::unordered_set<json, JsonHash> doomed_values;
  if (node.is_array()) {
    keyed.emplace(node, budget);
    doomed.assign(node.size(), false);
  }
  for (auto it = fields.begin(); it != fields.end() && budget.charge(); ++it) {
    const auto& member = it.key();
    if (!it.value().is_object() || member.size() < 2 || member[1] != ':') continue;
    if (node.is_object() && member[0] == 'f') {
      auto child = node.find(member.substr(2));
      if (child == node.end()) continue;
      if (owns_itself(it.value()) || remove_members(*child, it.value(), budget)) node.erase(child);
    } else if (node.is_array() && member[0] == 'k') {
      auto at = keyed->find(member);
      if (at == node.size() || doomed[at]) continue;
      if (owns_itself(it.value()) || remove_members(node[at], it.value(), budget)) doomed[at] = true;
    } else if (node.is_array() && member[0] == 'v') {
      auto value = json::parse(member.substr(2), nullptr, false);
      if (!value.is_discarded()) doomed_values.insert(std::move(value));
    }
  }
  if (node.is_array()) {
    json kept = json::array();
    for (std::size_t i = 0; i < node.size(); ++i)
      if (!doomed[i] && !doomed_values.count(node[i])) kept.push_back(std::move(node[i]));
    node = std::move(kept);
  }
  return node.empty();
}

// Adds the members of `b` to `into` (a FieldsV1 union in place: accumulating many sets
// copies none of them).
void add_fields(json& into, const json& b, WorkBudget& budget) {
  if (!into.is_object()) into = json::object();
  if (!b.is_object()) return;
  for (auto it = b.begin(); it != b.end() && budget.charge(); ++it) {
    if (it.key() == "." || !it.value().is_object()) continue;
    auto mine = into.find(it.key());
    if (mine == into.end() || !mine->is_object()) {
      into[it.key()] = it.value();
      continue;
    }
    const bool itself = owns_itself(*mine) || owns_itself(it.value());
    json children = children_of(*mine);
    add_fields(children, children_of(it.value()), budget);
    *mine = as_member(std::move(children), itself);
  }
}

// `fields` without the members no apply owns, whatever a client wrote into an entry:
// removing them would take the object's identity (or its metadata) away.
json without_unowned(json fields) {
  fields.erase("f:apiVersion");
  fields.erase("f:kind");
  if (auto meta = fields.find("f:metadata"); meta != fields.end()) {
    json kept = json::object();
    if (meta->is_object())
      for (auto it = meta->begin(); it != meta->end(); ++it) {
        const auto& member = it.key();
        if (member != "." && !(member.size() > 2 && is_unowned_metadata(member.substr(2)))) kept[member] = it.value();
      }
    if (kept.empty())
      fields.erase(meta);
    else
      *meta = std::move(kept);
  }
  return fields;
}

// `entry` is the Apply entry of this manager and subresource.
bool is_entry_of(const json& entry, const Applier& applier) {
  return entry.is_object() && entry.value("manager", json()) == applier.manager &&
         entry.value("operation", json()) == "Apply" && entry.value("subresource", json("")) == applier.subresource;
}

// The FieldsV1 set of an entry, or nullptr when it has none that can be read.
const json* set_of(const json& entry) {
  if (!entry.is_object()) return nullptr;
  auto set = entry.find("fieldsV1");
  return set != entry.end() && set->is_object() ? &*set : nullptr;
}

}  // namespace

json owned_fields(const json& configuration, const Applier& applier) {
  auto unbounded = WorkBudget::unbounded();
  return owned_fields(configuration, applier, unbounded);
}

json owned_fields(const json& configuration, const Applier& applier, WorkBudget& budget) {
  if (!configuration.is_object()) return json::object();
  json out = json::object();
  for (auto it = configuration.begin(); it != configuration.end(); ++it) {
    const auto& field = it.key();
    if (field == "apiVersion" || field == "kind" || is_directive(field)) continue;
    if (applier.status_apart && (field == "status") != (applier.subresource == "status")) continue;
    if (field == "metadata" && it->is_object()) {
      json metadata = json::object();
      for (auto m = it->begin(); m != it->end(); ++m)
        if (!is_unowned_metadata(m.key()) && !is_directive(m.key()))
          metadata["f:" + m.key()] = fields_of_value(m.key(), m.value(), applier.strategic, budget);
      if (!metadata.empty()) out["f:metadata"] = std::move(metadata);
      continue;
    }
    out["f:" + field] = fields_of_value(field, it.value(), applier.strategic, budget);
  }
  return out;
}

json fields_difference(const json& fields, const json& minus) {
  json out = json::object();
  if (!fields.is_object()) return out;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it.key() == ".") continue;
    auto other = minus.is_object() ? minus.find(it.key()) : minus.end();
    if (!minus.is_object() || other == minus.end() || !other->is_object()) {
      out[it.key()] = it.value();
      continue;
    }
    const bool itself = owns_itself(it.value()) && !owns_itself(*other);
    json rest = fields_difference(children_of(it.value()), children_of(*other));
    if (itself || !rest.empty()) out[it.key()] = as_member(std::move(rest), itself);
  }
  return out;
}

json fields_union(const json& a, const json& b) {
  json out = a.is_object() ? a : json::object();
  auto unbounded = WorkBudget::unbounded();
  add_fields(out, b, unbounded);
  return out;
}

void remove_fields(json& object, const json& fields, WorkBudget& budget) { remove_members(object, fields, budget); }

std::optional<ApiError> apply_configuration(json& object, const json& configuration, const Applier& applier,
                                            const std::string& now, WorkBudget& budget) {
  if (!object.is_object()) object = json::object();
  const json before = object;
  json entries = json::array();
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    if (auto listed = meta->find("managedFields"); listed != meta->end() && listed->is_array()) entries = *listed;

  const json next = owned_fields(configuration, applier, budget);
  json previous = json::object(), others = json::object();
  std::size_t mine = entries.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json* set = set_of(entries[i]);
    if (is_entry_of(entries[i], applier) && mine == entries.size()) {
      mine = i;
      if (set) previous = *set;
    } else if (set) {
      add_fields(others, *set, budget);
    }
  }
  remove_fields(object, without_unowned(fields_difference(fields_difference(previous, next), others)), budget);
  if (budget.exhausted()) return budget.error();
  auto failed = applier.strategic ? apply_strategic_merge_patch(object, configuration, budget)
                                  : apply_merge_patch(object, configuration, budget);
  if (failed) return failed;
  if (!object.is_object()) return ApiError::bad_request("an apply configuration must be an object");

  // Every apply here is forced: the fields whose values it changed are its manager's alone.
  const json taken = changed_members(&before, &object, next, budget);
  if (budget.exhausted()) return budget.error();
  json kept = json::array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i == mine) {
      if (previous == next) kept.push_back(std::move(entries[i]));
      continue;
    }
    const json* set = set_of(entries[i]);
    if (set && !taken.empty()) {
      json left = fields_difference(*set, taken);
      if (left.empty()) continue;
      if (left != *set) entries[i]["fieldsV1"] = std::move(left);
    }
    kept.push_back(std::move(entries[i]));
  }
  if ((mine == entries.size() || previous != next) && !next.empty()) {
    json entry = {{"manager", applier.manager},   {"operation", "Apply"},     {"apiVersion", applier.api_version},
                  {"time", now},                  {"fieldsType", "FieldsV1"}, {"fieldsV1", next}};
    if (!applier.subresource.empty()) entry["subresource"] = applier.subresource;
    kept.push_back(std::move(entry));
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  if (kept.empty())
    object["metadata"].erase("managedFields");
  else
    object["metadata"]["managedFields"] = std::move(kept);
  return std::nullopt;
}

std::optional<ApiError> managed_fields_refused(const json& configuration) {
  if (!configuration.is_object()) return std::nullopt;
  auto meta = configuration.find("metadata");
  if (meta == configuration.end() || !meta->is_object()) return std::nullopt;
  auto listed = meta->find("managedFields");
  if (listed == meta->end() || listed->is_null()) return std::nullopt;
  return ApiError::bad_request("metadata.managedFields must be nil");
}

std::optional<FieldProblem> managed_fields_problem(const json& managed_fields) {
  const std::string path = "metadata.managedFields";
  if (managed_fields.is_null()) return std::nullopt;
  if (!managed_fields.is_array()) return FieldProblem{path, "Invalid value: must be a list of entries"};
  if (managed_fields == json::array({json::object()})) return std::nullopt;  // the request to clear them
  for (std::size_t i = 0; i < managed_fields.size(); ++i) {
    const auto& entry = managed_fields[i];
    const auto at = path + "[" + std::to_string(i) + "]";
    if (!entry.is_object()) return FieldProblem{at, "Invalid value: must be an object"};
    const auto operation = entry.value("operation", json());
    if (operation != "Apply" && operation != "Update")
      return FieldProblem{at + ".operation", "Invalid value: " + operation.dump() + ": must be `Apply` or `Update`"};
    const auto type = entry.value("fieldsType", json(""));
    if (type != "" && type != "FieldsV1")
      return FieldProblem{at + ".fieldsType", "Invalid value: " + type.dump() + ": must be `FieldsV1`"};
    const auto manager = entry.value("manager", json(""));
    if (!manager.is_string() || manager.get_ref<const std::string&>().size() > 128)
      return FieldProblem{at + ".manager", "Invalid value: must be a string of at most 128 characters"};
    for (const char* text : {"apiVersion", "time", "subresource"})
      if (auto f = entry.find(text); f != entry.end() && !f->is_null() && !f->is_string())
        return FieldProblem{at + "." + text, "Invalid value: must be a string"};
    if (auto set = entry.find("fieldsV1"); set != entry.end() && !set->is_null() && !set->is_object())
      return FieldProblem{at + ".fieldsV1", "Invalid value: must be an object"};
  }
  return std::nullopt;
}

void keep_managed_fields(json& metadata, const json* current_metadata) {
  auto listed = metadata.find("managedFields");
  if (listed != metadata.end() && *listed == json::array({json::object()})) {
    metadata.erase(listed);
    return;
  }
  const bool unset = listed == metadata.end() || listed->is_null() || (listed->is_array() && listed->empty());
  if (!unset) return;
  const json* current = nullptr;
  if (current_metadata && current_metadata->is_object())
    if (auto it = current_metadata->find("managedFields"); it != current_metadata->end()) current = &*it;
  if (current)
    metadata["managedFields"] = *current;
  else
    metadata.erase("managedFields");
}

}  // namespace kinformer::apiserver
