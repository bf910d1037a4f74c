#include "apiserver/patch.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/json_hash.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// The patchMergeKey of the list fields kubectl edits in built-in kinds (from the
// Kubernetes API types' struct tags). Any other list is replaced wholesale.
const char* merge_key_for(const std::string& field, const json& element) {
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" || field == "volumes" ||
      field == "env" || field == "imagePullSecrets" || field == "resourceClaims")
    return "name";
  if (field == "volumeMounts" || field == "volumeDevices") return "mountPath";
  if (field == "ports") return element.contains("containerPort") ? "containerPort" : "port";
  if (field == "conditions") return "type";
  if (field == "ownerReferences") return "uid";
  if (field == "hostAliases") return "ip";
  if (field == "topologySpreadConstraints") return "topologyKey";
  return nullptr;
}

std::optional<ApiError> strategic_merge(json& target, const json& patch, WorkBudget& budget);

bool is_directive_key(const std::string& key) {
  static const std::string set_order = "$setElementOrder/", delete_from = "$deleteFromPrimitiveList/";
  return key == "$patch" || key == "$retainKeys" || key.compare(0, set_order.size(), set_order) == 0 ||
         key.compare(0, delete_from.size(), delete_from) == 0;
}

// `value` without the strategic merge directives anywhere in it: they steer a merge and
// are never fields (kube-apiserver's decoding drops them, with every other unknown field).
void strip_directives(json& value, WorkBudget& budget) {
  std::vector<json*> pending{&value};
  while (!pending.empty() && budget.charge()) {
    json* at = pending.back();
    pending.pop_back();
    if (at->is_object()) {
      for (auto it = at->begin(); it != at->end();) {
        if (is_directive_key(it.key())) {
          it = at->erase(it);
        } else {
          pending.push_back(&it.value());
          ++it;
        }
      }
    } else if (at->is_array()) {
      for (auto& element : *at) pending.push_back(&element);
    }
  }
}

// A `$patch` directive of a map or list element: "" when absent; only strings are directives.
bool directive_is(const json& element, const char* directive) {
  if (!element.is_object()) return false;
  auto it = element.find("$patch");
  return it != element.end() && it->is_string() && it->get_ref<const std::string&>() == directive;
}

std::optional<ApiError> non_string_directive(const json& element) {
  if (!element.is_object()) return std::nullopt;
  auto it = element.find("$patch");
  if (it == element.end() || it->is_string()) return std::nullopt;
  return ApiError::bad_request(std::string("strategic merge patch: the $patch directive must be a string, not ") +
                               it->type_name());
}

// `list` without the elements marked in `doomed` (one pass, instead of an erase each).
void erase_marked(json& list, const std::vector<bool>& doomed) {
  json kept = json::array();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (!doomed[i]) kept.push_back(std::move(list[i]));
  list = std::move(kept);
}

// Every element of `list` equal to one of `values` goes, in one pass over each.
void erase_values(json& list, const json& values, WorkBudget& budget) {
  std::unordered_set<json, JsonHash> doomed(values.begin(), values.end());
  if (!budget.charge(values.size() + list.size())) return;
  list.erase(std::remove_if(list.begin(), list.end(), [&](const json& v) { return doomed.count(v) > 0; }),
             list.end());
}

// Elements merged by `key`: each patch element finds its target element through a hash
// index of the target's keys, so a merge costs O(target + patch), not their product.
std::optional<ApiError> merge_by_key(json& target, const std::string& field, const char* key, const json& patch,
                                     WorkBudget& budget) {
  std::unordered_map<json, std::size_t, JsonHash> at;  // merge key -> index in target; the first element with it
  for (std::size_t i = 0; i < target.size(); ++i)
    if (target[i].is_object())
      if (auto id = target[i].find(key); id != target[i].end()) at.emplace(*id, i);
  std::vector<bool> doomed(target.size(), false);
  bool any_doomed = false;
  if (!budget.charge(target.size())) return budget.error();
  for (const auto& element : patch) {
    if (!budget.charge()) return budget.error();
    if (!element.is_object() || !element.contains(key))
      return ApiError::bad_request("strategic merge patch: an element of " + field + " lacks its merge key \"" +
                                   key + "\"");
    const auto& id = element[key];
    auto match = at.find(id);
    if (directive_is(element, "delete")) {
      if (match != at.end()) {
        doomed[match->second] = any_doomed = true;
        at.erase(match);
      }
      continue;
    }
    if (match == at.end()) {
      json fresh = json::object();
      if (auto error = strategic_merge(fresh, element, budget)) return error;
      target.push_back(std::move(fresh));
      doomed.push_back(false);
      at.emplace(id, target.size() - 1);
    } else if (auto error = strategic_merge(target[match->second], element, budget)) {
      return error;
    }
  }
  if (any_doomed) erase_marked(target, doomed);
  return std::nullopt;
}

std::optional<ApiError> merge_list(json& target, const std::string& field, const json& patch, WorkBudget& budget) {
  if (!target.is_array()) target = json::array();
  bool replace = false;
  for (const auto& element : patch) {
    if (auto bad = non_string_directive(element)) return bad;
    if (directive_is(element, "replace")) replace = true;
  }
  if (replace) {
    json out = json::array();
    for (const auto& element : patch)
      if (!(element.is_object() && element.contains("$patch"))) out.push_back(element);
    strip_directives(out, budget);
    target = std::move(out);
    return std::nullopt;
  }
  const auto rule = list_merge_rule(field, patch.empty() ? json() : patch.front());
  if (rule.kind == ListMergeRule::Kind::set_of_values) {
    std::unordered_set<json, JsonHash> present(target.begin(), target.end());
    if (!budget.charge(target.size() + patch.size())) return budget.error();
    for (const auto& value : patch)
      if (present.insert(value).second) target.push_back(value);
    return std::nullopt;
  }
  if (rule.kind == ListMergeRule::Kind::replace) {
    target = patch;
    strip_directives(target, budget);
    return std::nullopt;
  }
  return merge_by_key(target, field, rule.key, patch, budget);
}

std::optional<ApiError> strategic_merge(json& target, const json& patch, WorkBudget& budget) {
  if (!budget.charge()) return budget.error();
  if (!patch.is_object()) {
    target = patch;
    strip_directives(target, budget);
    return std::nullopt;
  }
  if (auto directive = patch.find("$patch"); directive != patch.end()) {
    if (*directive == "replace") {
      target = patch;
      strip_directives(target, budget);
      return std::nullopt;
    }
    if (*directive == "delete") {
      target = json::object();
      return std::nullopt;
    }
    return ApiError::bad_request("strategic merge patch: unknown $patch directive " +
                                 cut_text(directive->dump(), 64));
  }
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const auto& field = it.key();
    const auto& value = it.value();
    static const std::string delete_from = "$deleteFromPrimitiveList/";
    if (field.compare(0, delete_from.size(), delete_from) == 0) {
      auto list = target.find(field.substr(delete_from.size()));
      if (list != target.end() && list->is_array() && value.is_array()) erase_values(*list, value, budget);
      continue;
    }
    if (is_directive_key(field)) continue;
    if (value.is_null()) {
      target.erase(field);
    } else if (value.is_object()) {
      if (auto error = strategic_merge(target[field], value, budget)) return error;
      if (directive_is(value, "delete")) target.erase(field);
    } else if (value.is_array()) {
      if (auto error = merge_list(target[field], field, value, budget)) return error;
    } else {
      target[field] = value;
    }
  }
  return budget.exhausted() ? std::optional<ApiError>(budget.error()) : std::nullopt;
}

}  // namespace

ListMergeRule list_merge_rule(const std::string& field, const json& first_element) {
  if (first_element.is_object())
    if (const char* key = merge_key_for(field, first_element)) return {ListMergeRule::Kind::by_key, key};
  if (field == "finalizers") return {ListMergeRule::Kind::set_of_values, nullptr};  // patchStrategy=merge on strings
  return {};
}

std::optional<ApiError> apply_merge_patch(json& target, const json& patch, WorkBudget& budget) {
  if (!patch.is_object()) return ApiError::bad_request("a merge patch must be a JSON object");
  json fields = patch;
  strip_directives(fields, budget);
  if (budget.exhausted()) return budget.error();
  target.merge_patch(fields);
  return std::nullopt;
}

std::optional<ApiError> apply_strategic_merge_patch(json& target, const json& patch, WorkBudget& budget) {
  if (!patch.is_object()) return ApiError::bad_request("a strategic merge patch must be a JSON object");
  return strategic_merge(target, patch, budget);
}

namespace {

// The nesting depth of `value` (a scalar is 1), counted without recursion; stops above `cap`.
std::size_t bounded_depth(const json& value, std::size_t cap, WorkBudget& budget) {
  std::size_t deepest = 0;
  std::vector<std::pair<const json*, std::size_t>> stack{{&value, 1}};
  while (!stack.empty() && deepest <= cap && budget.charge()) {
    auto [at, depth] = stack.back();
    stack.pop_back();
    deepest = std::max(deepest, depth);
    if (at->is_structured())
      for (const auto& child : *at) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

ApiError patch_invalid(const std::string& why) {
  return ApiError{422, "Invalid", "the JSON patch does not apply: " + why, {}, {}, {}, {}, {}};
}

// The number of reference tokens of a JSON pointer's text ("" is the root: 0). Counted
// on the text, before a json_pointer is built, so that a path of 64k segments costs a
// scan and a refusal, not the quadratic walks of its parents.
std::size_t segments_of(const std::string& pointer) {
  return static_cast<std::size_t>(std::count(pointer.begin(), pointer.end(), '/'));
}

// RFC 6902 applied in place, one operation at a time, so that every operation is
// checked before it runs: the document never nests deeper than limits.max_depth
// (copying or comparing it recurses) and never grows past limits.max_bytes (repeated
// `copy` doubles it). Every step is charged to the request's budget.
class JsonPatcher {
 public:
  JsonPatcher(json& document, const ObjectLimits& limits, WorkBudget& budget)
      : document_(document), limits_(limits), budget_(budget), size_(bounded_size(document, limits.max_bytes)) {}

  std::optional<ApiError> apply(const json& op) {
    const auto& name = op["op"].get_ref<const std::string&>();
    auto path = pointer(op, "path");
    if (!path) return path.error();
    const std::size_t path_depth = segments_of(op["path"].get_ref<const std::string&>());
    if (!budget_.charge(1 + path_depth)) return budget_.error();
    if (name == "add" || name == "replace" || name == "test") {
      auto value = op.find("value");
      if (value == op.end())
        return ApiError::bad_request("JSON patch operation \"" + name + "\" needs a value");
      if (name == "test") {
        if (!document_.contains(*path) || document_.at(*path) != *value)
          return patch_invalid("test failed at " + path->to_string());
        return std::nullopt;
      }
      if (auto bad = admit(path_depth, *value, bounded_size(*value, limits_.max_bytes))) return bad;
      if (name == "replace" && !document_.contains(*path))
        return patch_invalid("replace: nothing at " + path->to_string());
      if (name == "add") return add(*path, *value);
      document_.at(*path) = *value;
      return std::nullopt;
    }
    if (name == "remove") return remove(*path).second;
    if (name == "move" || name == "copy") {
      auto from = pointer(op, "from");
      if (!from) return from.error();
      if (!document_.contains(*from)) return patch_invalid(name + ": nothing at " + from->to_string());
      if (name == "copy") {
        const json& source = document_.at(*from);
        const auto growth = bounded_size(source, limits_.max_bytes);
        if (!budget_.charge(growth)) return budget_.error();
        if (auto bad = admit(path_depth, source, growth)) return bad;
        json copied = source;
        return add(*path, std::move(copied));
      }
      const auto& from_text = op["from"].get_ref<const std::string&>();
      const auto& path_text = op["path"].get_ref<const std::string&>();
      if (path_text.compare(0, from_text.size() + 1, from_text + "/") == 0)
        return patch_invalid("move: " + path_text + " is inside " + from_text);
      auto [moved, error] = remove(*from);
      if (error) return error;
      // The value nested within the budget where it was; only a deeper place can break it.
      if (path_depth > segments_of(from_text))
        if (auto bad = admit(path_depth, moved, 0)) return bad;
      return add(*path, std::move(moved));
    }
    return ApiError::bad_request("unknown JSON patch operation \"" + name + "\"");
  }

 private:
  ApiResult<json::json_pointer> pointer(const json& op, const char* field) {
    auto it = op.find(field);
    if (it == op.end() || !it->is_string())
      return ApiError::bad_request(std::string("a JSON patch operation needs a string \"") + field + "\"");
    try {
      return json::json_pointer(it->get<std::string>());
    } catch (const json::exception& e) {
      return ApiError::bad_request(std::string("a JSON patch operation has an invalid ") + field + ": " +
                                   e.what());
    }
  }

  // A value may go `path_depth` levels down: the result stays within the depth and size budgets.
  std::optional<ApiError> admit(std::size_t path_depth, const json& value, std::size_t growth) {
    if (path_depth >= limits_.max_depth ||
        path_depth + bounded_depth(value, limits_.max_depth - path_depth, budget_) > limits_.max_depth)
      return object_too_deep(limits_.max_depth);
    if (budget_.exhausted()) return budget_.error();
    size_ += growth;
    if (size_ > limits_.max_bytes) return object_too_large(limits_.max_bytes);
    return std::nullopt;
  }

  std::optional<ApiError> add(const json::json_pointer& path, json value) {
    if (path.empty()) {
      document_ = std::move(value);
      return std::nullopt;
    }
    auto parent_path = path.parent_pointer();
    if (!document_.contains(parent_path)) return patch_invalid("add: no parent at " + path.to_string());
    json& parent = document_.at(parent_path);
    const auto& last = path.back();
    if (parent.is_object()) {
      parent[last] = std::move(value);
      return std::nullopt;
    }
    if (!parent.is_array())
      return patch_invalid("add: the parent of " + path.to_string() + " is not an object or array");
    if (last == "-") {
      parent.push_back(std::move(value));
      return std::nullopt;
    }
    auto index = array_index(last);
    if (!index || *index > parent.size())
      return patch_invalid("add: index out of range at " + path.to_string());
    // an insertion moves every element after it
    if (!budget_.charge(parent.size() - *index)) return budget_.error();
    parent.insert(parent.begin() + static_cast<std::ptrdiff_t>(*index), std::move(value));
    return std::nullopt;
  }

  std::pair<json, std::optional<ApiError>> remove(const json::json_pointer& path) {
    if (path.empty() || !document_.contains(path))
      return {json(), patch_invalid("remove: nothing at " + path.to_string())};
    json& parent = document_.at(path.parent_pointer());
    const auto& last = path.back();
    json removed;
    if (parent.is_object()) {
      auto it = parent.find(last);
      removed = std::move(*it);
      parent.erase(it);
    } else {
      auto index = array_index(last);
      if (!index || *index >= parent.size())
        return {json(), patch_invalid("remove: index out of range at " + path.to_string())};
      if (!budget_.charge(parent.size() - *index)) return {json(), budget_.error()};
      removed = std::move(parent[*index]);
      parent.erase(parent.begin() + static_cast<std::ptrdiff_t>(*index));
    }
    return {std::move(removed), std::nullopt};
  }

  static std::optional<std::size_t> array_index(const std::string& token) {
    if (token.empty() || token.size() > 9 || token.find_first_not_of("0123456789") != std::string::npos ||
        (token.size() > 1 && token[0] == '0'))
      return std::nullopt;
    return static_cast<std::size_t>(std::stoul(token));
  }

  json& document_;
  const ObjectLimits& limits_;
  WorkBudget& budget_;
  std::size_t size_;  // an upper bound of the document's serialized size
};

}  // namespace

std::optional<ApiError> apply_json_patch(json& target, const json& operations, const ObjectLimits& limits,
                                         WorkBudget& budget) {
  if (!operations.is_array()) return ApiError::bad_request("a JSON patch must be an array of operations");
  if (operations.size() > limits.max_patch_operations)
    return ApiError{422,
                    "Invalid",
                    "the JSON patch has " + std::to_string(operations.size()) +
                        " operations; the server accepts at most " +
                        std::to_string(limits.max_patch_operations),
                    {},
                    {},
                    {},
                    {},
                    {}};
  for (const auto& op : operations) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") ||
        !op["path"].is_string())
      return ApiError::bad_request("a JSON patch operation needs string fields \"op\" and \"path\"");
    // No place in an object within the depth budget has a longer path.
    for (const char* field : {"path", "from"})
      if (auto it = op.find(field); it != op.end() && it->is_string() &&
                                    segments_of(it->get_ref<const std::string&>()) > limits.max_depth)
        return patch_invalid(std::string("the ") + field + " has more segments than objects nest (" +
                             std::to_string(limits.max_depth) + ")");
  }
  JsonPatcher patcher(target, limits, budget);
  try {
    for (const auto& op : operations)
      if (auto failed = patcher.apply(op)) return failed;
  } catch (const json::exception& e) {  // a pointer into a value of the wrong type
    return patch_invalid(e.what());
  }
  return std::nullopt;
}

}  // namespace kinformer::apiserver
