// apiserver/schema_defaults.hpp
//
// apply_schema_defaults(): a CustomResourceDefinition's structural-schema `default:`
// values filled into a custom resource before it is validated and stored, as
// kube-apiserver does on every write (issue 32; called by apply_defaults()).
//
// Contract
//   * For every property the schema declares with a `default`: when the object lacks
//     it, or holds null where the property is not nullable, the default is copied in.
//     Defaulting then descends into the value (the default included), into
//     `properties`, each `items` element and each `additionalProperties` value, so
//     nested defaults apply wherever their parent object exists.
//   * At the root, apiVersion, kind and metadata are the server's and are left alone.
//   * A schema node or value of an unexpected JSON type is skipped, never an error.
// Threading: a pure function.
// Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace kinformer::apiserver {

void apply_schema_defaults(const nlohmann::json& schema, nlohmann::json& object);

}  // namespace kinformer::apiserver
