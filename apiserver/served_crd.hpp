// apiserver/served_crd.hpp
//
// served_crd_version(): the served version entry of the CustomResourceDefinition that
// defines a custom kind, read from the storage when a request needs it, so that its
// additionalPrinterColumns (apiserver/table_printer.hpp) and subresources.scale
// (apiserver/scale_subresource.hpp) are always the stored CRD's current ones (issue 32).
//
// Contract
//   * The CRD is the cluster-scoped customresourcedefinitions object named
//     "<plural>.<group>"; its served version is the one spec.versions entry with
//     served: true whose name is the type's version (kinformer serves one per CRD).
//   * nullopt for a built-in kind, for a custom kind added without a CRD
//     (ResourceRegistry::add(), --resource), and when the CRD is gone or unreadable.
// Threading: as thread-safe as the Storage (every Storage is).
// Errors: none; a CRD that cannot be read counts as absent.
#pragma once

#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/resources.hpp"
#include "apiserver/storage/storage.hpp"

namespace kinformer::apiserver {

std::optional<nlohmann::json> served_crd_version(const ResourceRegistry& registry, const Storage& storage,
                                                 const ResourceType& type);

}  // namespace kinformer::apiserver
