#include "apiserver/patch.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

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

std::optional<ApiError> strategic_merge(json& target, const json& patch);

std::optional<ApiError> merge_list(json& target, const std::string& field, const json& patch) {
  if (!target.is_array()) target = json::array();
  bool replace = false;
  for (const auto& element : patch)
    if (element.is_object() && element.value("$patch", "") == "replace") replace = true;
  if (replace) {
    json out = json::array();
    for (const auto& element : patch)
      if (!(element.is_object() && element.contains("$patch"))) out.push_back(element);
    target = std::move(out);
    return std::nullopt;
  }
  const char* key = patch.empty() || !patch.front().is_object() ? nullptr : merge_key_for(field, patch.front());
  if (!key) {
    if (field == "finalizers") {  // patchStrategy=merge on a list of strings: union
      for (const auto& value : patch)
        if (std::find(target.begin(), target.end(), value) == target.end()) target.push_back(value);
      return std::nullopt;
    }
    target = patch;
    return std::nullopt;
  }
  for (const auto& element : patch) {
    if (!element.is_object() || !element.contains(key))
      return ApiError::bad_request("strategic merge patch: an element of " + field + " lacks its merge key \"" +
                                   key + "\"");
    const auto& id = element[key];
    auto match = std::find_if(target.begin(), target.end(),
                              [&](const json& t) { return t.is_object() && t.contains(key) && t[key] == id; });
    if (element.value("$patch", "") == "delete") {
      if (match != target.end()) target.erase(match);
      continue;
    }
    if (match == target.end()) {
      json fresh = json::object();
      if (auto error = strategic_merge(fresh, element)) return error;
      target.push_back(std::move(fresh));
    } else if (auto error = strategic_merge(*match, element)) {
      return error;
    }
  }
  return std::nullopt;
}

std::optional<ApiError> strategic_merge(json& target, const json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return std::nullopt;
  }
  if (auto directive = patch.find("$patch"); directive != patch.end()) {
    if (*directive == "replace") {
      target = patch;
      target.erase("$patch");
      return std::nullopt;
    }
    if (*directive == "delete") {
      target = json::object();
      return std::nullopt;
    }
    return ApiError::bad_request("strategic merge patch: unknown $patch directive " + directive->dump());
  }
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const auto& field = it.key();
    const auto& value = it.value();
    static const std::string set_order = "$setElementOrder/", delete_from = "$deleteFromPrimitiveList/";
    if (field == "$retainKeys" || field.compare(0, set_order.size(), set_order) == 0) continue;
    if (field.compare(0, delete_from.size(), delete_from) == 0) {
      auto list = target.find(field.substr(delete_from.size()));
      if (list != target.end() && list->is_array() && value.is_array())
        for (const auto& doomed : value) list->erase(std::remove(list->begin(), list->end(), doomed), list->end());
      continue;
    }
    if (value.is_null()) {
      target.erase(field);
    } else if (value.is_object()) {
      if (auto error = strategic_merge(target[field], value)) return error;
      if (value.value("$patch", "") == "delete") target.erase(field);
    } else if (value.is_array()) {
      if (auto error = merge_list(target[field], field, value)) return error;
    } else {
      target[field] = value;
    }
  }
  return std::nullopt;
}

json removal_patch_of(const json& previous, const json& next) {
  json out = json::object();
  for (auto it = previous.begin(); it != previous.end(); ++it) {
    const auto& field = it.key();
    if (!field.empty() && field[0] == '$') continue;
    auto there = next.find(field);
    if (there == next.end() || there->is_null()) {
      out[field] = nullptr;
    } else if (it->is_object() && there->is_object()) {
      auto inner = removal_patch_of(*it, *there);
      if (!inner.empty()) out[field] = std::move(inner);
    } else if (it->is_array() && there->is_array() && !it->empty() && it->front().is_object()) {
      const char* key = merge_key_for(field, it->front());
      if (!key) continue;  // unkeyed lists are replaced by the next configuration anyway
      json elements = json::array();
      for (const auto& old_element : *it) {
        if (!old_element.is_object() || !old_element.contains(key)) continue;
        const auto& id = old_element[key];
        auto match = std::find_if(there->begin(), there->end(),
                                  [&](const json& e) { return e.is_object() && e.contains(key) && e[key] == id; });
        if (match == there->end()) {
          elements.push_back({{key, id}, {"$patch", "delete"}});
        } else {
          auto inner = removal_patch_of(old_element, *match);
          if (!inner.empty()) {
            inner[key] = id;
            elements.push_back(std::move(inner));
          }
        }
      }
      if (!elements.empty()) out[field] = std::move(elements);
    }
  }
  return out;
}

}  // namespace

json removal_patch(const json& previous, const json& next) {
  if (!previous.is_object() || !next.is_object()) return json::object();
  return removal_patch_of(previous, next);
}

std::optional<ApiError> apply_merge_patch(json& target, const json& patch) {
  if (!patch.is_object()) return ApiError::bad_request("a merge patch must be a JSON object");
  target.merge_patch(patch);
  return std::nullopt;
}

std::optional<ApiError> apply_strategic_merge_patch(json& target, const json& patch) {
  if (!patch.is_object()) return ApiError::bad_request("a strategic merge patch must be a JSON object");
  return strategic_merge(target, patch);
}

std::optional<ApiError> apply_json_patch(json& target, const json& operations) {
  if (!operations.is_array()) return ApiError::bad_request("a JSON patch must be an array of operations");
  for (const auto& op : operations)
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") ||
        !op["path"].is_string())
      return ApiError::bad_request("a JSON patch operation needs string fields \"op\" and \"path\": " + op.dump());
  try {
    // "copy" is the one operation whose result is not bounded by the patch's own size:
    // each copy of the root doubles the document, so a few KB of copies would need
    // 2^N bytes. The values copied are measured before each copy and limited in total
    // (what kube-apiserver bounds with json-patch's AccumulatedCopySizeLimit). The
    // operations between copies are applied in one batch: patch() copies the document.
    std::size_t copied = 0;
    json batch = json::array();
    for (const auto& op : operations) {
      if (op["op"] == "copy" && op.contains("from") && op["from"].is_string()) {
        if (!batch.empty()) target = target.patch(std::exchange(batch, json::array()));
        // at() throws for a missing "from", as patch() would.
        copied += target.at(json::json_pointer(op["from"].get<std::string>())).dump().size();
        if (copied > max_json_patch_copy_bytes)
          return ApiError{422, "Invalid",
                          "the JSON patch copies more than " + std::to_string(max_json_patch_copy_bytes) +
                              " bytes of values in total",
                          {}, {}, {}, {}, {}};
      }
      batch.push_back(op);
    }
    if (!batch.empty()) target = target.patch(batch);
    return std::nullopt;
  } catch (const json::exception& e) {
    ApiError error{422, "Invalid", std::string("the JSON patch does not apply: ") + e.what(), {}, {}, {}, {}, {}};
    return error;
  }
}

}  // namespace kinformer::apiserver
