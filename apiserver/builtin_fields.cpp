#include "apiserver/builtin_fields.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

enum class Width { int32, int64 };

struct FieldRule {
  const char* group;
  std::vector<const char*> kinds;
  std::vector<const char*> path;  // "*": each element of a list
  Width width;
  std::int64_t min;
  std::int64_t max;
};

constexpr std::int64_t int32_max = INT32_MAX;

const std::vector<FieldRule>& rules() {
  static const std::vector<FieldRule> all = {
      {"apps", {"Deployment", "StatefulSet", "ReplicaSet"}, {"spec", "replicas"}, Width::int32, 0, int32_max},
      {"", {"ReplicationController"}, {"spec", "replicas"}, Width::int32, 0, int32_max},
      {"apps", {"Deployment", "StatefulSet", "ReplicaSet"}, {"spec", "minReadySeconds"}, Width::int32, 0, int32_max},
      {"", {"ReplicationController"}, {"spec", "minReadySeconds"}, Width::int32, 0, int32_max},
      {"apps", {"Deployment", "StatefulSet"}, {"spec", "revisionHistoryLimit"}, Width::int32, 0, int32_max},
      {"batch", {"Job"}, {"spec", "parallelism"}, Width::int32, 0, int32_max},
      {"batch", {"Job"}, {"spec", "completions"}, Width::int32, 0, int32_max},
      {"batch", {"Job"}, {"spec", "backoffLimit"}, Width::int32, 0, int32_max},
      {"batch", {"Job"}, {"spec", "ttlSecondsAfterFinished"}, Width::int32, 0, int32_max},
      {"batch", {"Job"}, {"spec", "activeDeadlineSeconds"}, Width::int64, 1, INT64_MAX},
      {"", {"Pod"}, {"spec", "terminationGracePeriodSeconds"}, Width::int64, 0, INT64_MAX},
      {"", {"Pod"}, {"spec", "activeDeadlineSeconds"}, Width::int64, 1, INT64_MAX},
      {"", {"Pod"}, {"spec", "containers", "*", "ports", "*", "containerPort"}, Width::int32, 1, 65535},
      {"", {"Pod"}, {"spec", "initContainers", "*", "ports", "*", "containerPort"}, Width::int32, 1, 65535},
      {"", {"Service"}, {"spec", "ports", "*", "port"}, Width::int32, 1, 65535},
      {"", {"Service"}, {"spec", "ports", "*", "nodePort"}, Width::int32, 0, 65535},
  };
  return all;
}

bool applies(const FieldRule& rule, const ResourceType& type) {
  if (type.group != rule.group) return false;
  for (const char* kind : rule.kinds)
    if (type.kind == kind) return true;
  return false;
}

// The value as an integer of `width`, or nullopt (not a number, a fraction, out of the type).
std::optional<std::int64_t> integer_of(const json& value, Width width) {
  std::int64_t n = 0;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    n = static_cast<std::int64_t>(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    n = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    // 2^63 is the first double past int64; a whole double below it converts exactly.
    if (!std::isfinite(d) || d != std::floor(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
      return std::nullopt;
    n = static_cast<std::int64_t>(d);
  } else {
    return std::nullopt;
  }
  if (width == Width::int32 && (n > INT32_MAX || n < INT32_MIN)) return std::nullopt;
  return n;
}

// One rule over one object: follows the rule's path, checks every value at its end.
class Checker {
 public:
  Checker(const ResourceType& type, const FieldRule& rule, std::string name)
      : type_(type), rule_(rule), name_(std::move(name)) {}

  std::optional<ApiError> walk(const json& node, std::vector<const char*>::const_iterator step,
                               const std::string& field) const {
    if (step == rule_.path.end()) return check(node, field);
    const std::string name = *step;
    if (name == "*") {
      if (!node.is_array()) return std::nullopt;  // not a list: not this rule's to judge
      for (std::size_t i = 0; i < node.size(); ++i)
        if (auto bad = walk(node[i], step + 1, field + "[" + std::to_string(i) + "]")) return bad;
      return std::nullopt;
    }
    if (!node.is_object()) return std::nullopt;
    auto child = node.find(name);
    if (child == node.end() || child->is_null()) return std::nullopt;
    return walk(*child, step + 1, field.empty() ? name : field + "." + name);
  }

 private:
  std::optional<ApiError> check(const json& value, const std::string& field) const {
    auto n = integer_of(value, rule_.width);
    if (!n)
      return ApiError::bad_request(type_.kind + " in version \"" + type_.version + "\" cannot be handled: " + field +
                                   " must be an " + (rule_.width == Width::int32 ? "int32" : "int64") + ", not " +
                                   cut_text(value.dump(), 64));
    if (*n >= rule_.min && *n <= rule_.max) return std::nullopt;
    const bool open_ended = rule_.max == INT32_MAX || rule_.max == INT64_MAX;
    const std::string bound = open_ended ? "must be greater than or equal to " + std::to_string(rule_.min)
                                         : "must be between " + std::to_string(rule_.min) + " and " +
                                               std::to_string(rule_.max) + ", inclusive";
    return ApiError::invalid(type_.group, type_.kind, name_,
                             {{"FieldValueInvalid", "Invalid value: " + std::to_string(*n) + ": " + bound, field}});
  }

  const ResourceType& type_;
  const FieldRule& rule_;
  std::string name_;  // the object's, for the error's details
};

}  // namespace

std::optional<ApiError> check_builtin_fields(const ResourceType& type, const json& object) {
  if (!type.builtin || !object.is_object()) return std::nullopt;
  std::string name;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    if (auto n = meta->find("name"); n != meta->end() && n->is_string()) name = n->get<std::string>();
  for (const auto& rule : rules())
    if (applies(rule, type))
      if (auto bad = Checker(type, rule, name).walk(object, rule.path.begin(), "")) return bad;
  return std::nullopt;
}

}  // namespace kinformer::apiserver
