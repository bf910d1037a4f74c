// apiserver/schema.hpp
//
// OpenApiSchema: the part of a CustomResourceDefinition's openAPIV3Schema the
// embedded API server enforces on every write of a custom resource (issue 17).
//
// Contract
//   * parse() accepts a JSON schema object; every nested schema must be an object,
//     "type" one of object, array, string, integer, number, boolean; "required" an
//     array of strings. Other keywords are kept and ignored.
//   * validate() checks types (integer is a number without a fraction;
//     x-kubernetes-int-or-string takes either; nullable allows null), required
//     properties, enum, properties, items and additionalProperties schemas. At the
//     root, apiVersion, kind and metadata are the server's and are not checked.
//   * Each violation is one cause with its field path as kube-apiserver writes it
//     ("spec.replicas", "spec.ports[0].name"): FieldValueRequired, FieldValueInvalid
//     (wrong type) or FieldValueNotSupported (enum).
//   * Bounded (issue 33): the walk stops after max_invalid_causes + 1 causes or when
//     the request's WorkBudget is spent (the caller checks budget.exhausted()); a path
//     is rendered only for a cause and cut to max_cause_field_bytes, a string value to
//     256 bytes, an enum's list of allowed values to half a cause. An enum value is
//     looked up in a hash set built by parse().
//   * Unknown fields are kept (no structural pruning).
// Threading: immutable after parse(); any thread may validate().
// Errors: parse() names the first bad keyword and its path; never throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/api_error.hpp"
#include "apiserver/work_budget.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

class OpenApiSchema {
 public:
  [[nodiscard]] static Result<std::shared_ptr<const OpenApiSchema>> parse(const nlohmann::json& schema);

  /// The violations of the schema by `object`, in document order (at most
  /// max_invalid_causes + 1); empty when valid.
  std::vector<ApiError::Cause> validate(const nlohmann::json& object, WorkBudget& budget) const;

  /// The schema as given.
  const nlohmann::json& document() const { return *schema_; }

  struct Enums;  // every schema node's enum as a hash set (schema.cpp)

 private:
  OpenApiSchema(std::shared_ptr<const nlohmann::json> schema, std::shared_ptr<const Enums> enums)
      : schema_(std::move(schema)), enums_(std::move(enums)) {}
  std::shared_ptr<const nlohmann::json> schema_;
  std::shared_ptr<const Enums> enums_;  // built once by parse()
};

}  // namespace kinformer::apiserver
