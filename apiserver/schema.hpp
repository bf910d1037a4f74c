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
//     ("spec.replicas", "spec.ports[0].name"): FieldValueRequired or FieldValueInvalid
//     (wrong type, "Unsupported value" for enum).
//   * Unknown fields are kept (no structural pruning).
// Threading: immutable after parse(); any thread may validate().
// Errors: parse() names the first bad keyword and its path; never throws.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

class OpenApiSchema {
 public:
  [[nodiscard]] static Result<std::shared_ptr<const OpenApiSchema>> parse(const nlohmann::json& schema);

  /// Every violation of the schema by `object`, in document order; empty when valid.
  std::vector<ApiError::Cause> validate(const nlohmann::json& object) const;

  /// The schema as given.
  const nlohmann::json& document() const { return *schema_; }

 private:
  explicit OpenApiSchema(std::shared_ptr<const nlohmann::json> schema) : schema_(std::move(schema)) {}
  std::shared_ptr<const nlohmann::json> schema_;
};

}  // namespace kinformer::apiserver
