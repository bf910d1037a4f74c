// apiserver/json_path.hpp
//
// JsonPath: the subset of Kubernetes JSONPath that CustomResourceDefinitions use in
// additionalPrinterColumns (".status.replicas", ".spec.ports[0].port",
// ".status.conditions[?(@.type==\"Ready\")].status") and in subresources.scale
// (".spec.replicas"), evaluated against a stored object (issue 32).
//
// Contract
//   * parse() accepts an optional "{...}" wrapper and "$" root, then segments:
//     .name, ['name'] or ["name"], [N] (N < 0 counts from the end), [*] and .*,
//     and filters [?(@.a.b)] (exists) and [?(@.a.b==literal)] / != with a string,
//     number or boolean literal. Anything else ("..", slices, unions, functions)
//     is refused with a message naming the position.
//   * find() returns every match in document order (none when a step is absent or
//     of the wrong JSON type); it never throws and never copies the document.
//   * set() writes a value at a path of plain names (what scale's specReplicasPath
//     is), creating missing objects; it refuses wildcards, filters and indexes.
// Threading: immutable after parse(); any thread may evaluate it.
// Errors: parse() and set() return Errc::decode_failed with the reason.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/result.hpp"

namespace kinformer::apiserver {

class JsonPath {
 public:
  [[nodiscard]] static Result<JsonPath> parse(std::string_view expression);

  /// Every value the path selects in `document`, in document order.
  std::vector<const nlohmann::json*> find(const nlohmann::json& document) const;
  /// The first match, or nullptr.
  const nlohmann::json* first(const nlohmann::json& document) const;
  /// Sets the value at this path of plain names in `document`, creating objects on the way.
  [[nodiscard]] Result<void> set(nlohmann::json& document, nlohmann::json value) const;

  const std::string& text() const { return text_; }

 private:
  struct Field { std::string name; };
  struct Index { long long index; };
  struct Wildcard {};
  struct Filter {
    std::vector<std::string> path;  // @.a.b
    enum class Op { exists, equal, not_equal } op = Op::exists;
    std::string literal;            // the right-hand side as JSON text
  };
  using Step = std::variant<Field, Index, Wildcard, Filter>;

  static bool filter_matches(const Filter& filter, const nlohmann::json& element);

  std::string text_;
  std::vector<Step> steps_;
};

}  // namespace kinformer::apiserver
