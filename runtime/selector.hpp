// runtime/selector.hpp
//
// Kubernetes label and field selectors: parsing and matching (the syntax of
// kubectl's -l and --field-selector and of the labelSelector / fieldSelector
// query parameters; kube-api-protocol.md A4).
//
// Contract
//   * LabelSelector: comma-separated requirements, all of which must hold:
//       key=v  key==v  key!=v  key in (v1,v2)  key notin (v1,v2)  key  !key  key>N  key<N
//     `!=` and `notin` also match objects without the key; `>`/`<` compare integers
//     and need the key present with an integer value. Keys are [prefix/]name with
//     Kubernetes' character and length rules; values are ≤ 63 characters of
//     [A-Za-z0-9._-], starting and ending alphanumeric, or empty.
//   * FieldSelector: comma-separated field=value, field==value or field!=value;
//     `\,` `\=` `\\` escape those characters in values. A field the getter does
//     not know reads as "".
//   * The empty text selects everything. Parse errors are Errc::invalid_selector
//     with a message naming the offending requirement and the reason.
// Threading: immutable after parse; matches() may run on any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer {

/// Why `key` is not a valid label key ([prefix/]name), or nullopt when it is. Also what
/// the API server validates in metadata.labels.
std::optional<std::string> label_key_problem(std::string_view key);
/// Why `value` is not a valid label value (empty, or ≤ 63 of [A-Za-z0-9._-] starting and
/// ending alphanumeric), or nullopt.
std::optional<std::string> label_value_problem(std::string_view value);

class LabelSelector {
 public:
  enum class Operator : std::uint8_t { equals, not_equals, in, not_in, exists, does_not_exist, greater_than, less_than };
  struct Requirement {
    std::string key;
    Operator op = Operator::exists;
    std::vector<std::string> values;  // sorted, unique; one for =, !=, >, <
  };
  using LabelGetter = std::function<std::optional<std::string_view>(std::string_view key)>;

  /// Selects everything.
  LabelSelector() = default;
  [[nodiscard]] static Result<LabelSelector> parse(std::string_view text);

  bool matches(const LabelGetter& label) const;
  bool matches(const std::map<std::string, std::string>& labels) const;
  bool matches(const Object& object) const;
  bool empty() const noexcept { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const noexcept { return requirements_; }
  /// Canonical text: requirements sorted by key, e.g. "app=web,tier in (a,b)".
  std::string to_string() const;

 private:
  std::vector<Requirement> requirements_;  // sorted by key
};

class FieldSelector {
 public:
  struct Requirement {
    std::string field;
    bool negated = false;  // !=
    std::string value;
  };
  using FieldGetter = std::function<std::optional<std::string>(std::string_view field_path)>;

  /// Selects everything.
  FieldSelector() = default;
  [[nodiscard]] static Result<FieldSelector> parse(std::string_view text);

  bool matches(const FieldGetter& field) const;
  /// metadata.name and metadata.namespace from the metadata, any other path
  /// through Object::field().
  bool matches(const Object& object) const;
  bool empty() const noexcept { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const noexcept { return requirements_; }
  /// The field paths used, each once, to reject unsupported ones.
  const std::vector<std::string>& fields() const noexcept { return fields_; }
  std::string to_string() const;

 private:
  std::vector<Requirement> requirements_;
  std::vector<std::string> fields_;
};

}  // namespace kinformer
