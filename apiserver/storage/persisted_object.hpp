// apiserver/storage/persisted_object.hpp
//
// How one stored object is named and checked when it comes back from disk (a
// snapshot entry or a log event): the same rules for both, so recovery never
// rebuilds a store that the API could not have produced.
//
// Contract
//   * resource_id(type) is "plural.group/version" ("pods./v1"), the resource field of
//     snapshot entries and log events.
//   * find_resource() resolves a resource id to the served entry, else to the newest
//     of `retired` (the kinds a log replay retired: the log records a CRD's deletion
//     before the deletions of its objects, apiserver/crd.hpp).
//   * decode_persisted_object() accepts only: "resource" a resource id find_resource() knows;
//     "object" a JSON object whose kind/apiVersion match it; metadata.name a valid
//     name; metadata.namespace a valid namespace for namespaced kinds and absent
//     otherwise; a non-empty uid; metadata.resourceVersion a decimal string in
//     1..max_revision; labels and annotations maps of strings; other metadata
//     strings where kube-apiserver has strings. Anything else (an entry replaced by 1,
//     "resource": 5, resourceVersion "abc") is an error naming the object and the field.
//   * parse_persisted_json() parses a log record's payload or a snapshot only when its
//     text nests at most max_persisted_depth levels (issue 33, finding 11: a 200k-deep
//     record with a valid CRC-32C overflowed the stack of the recursive parser at
//     start-up). Objects nest at most 1000 levels (--max-depth's maximum); a record or
//     a snapshot adds four.
// Threading: pure functions. Errors: Result with Errc::decode_failed; never throws.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/resource_version.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

constexpr std::size_t max_persisted_depth = 1100;

/// The parsed text; an error saying why not (too deep, not JSON) naming `where`.
Result<nlohmann::json> parse_persisted_json(std::string_view text, const std::string& where);

std::string resource_id(const ResourceType& type);
const ResourceType* find_resource(const ResourceRegistry& registry, std::string_view id,
                                  const std::vector<const ResourceType*>& retired = {});

/// `where` names the entry in errors ("state.json: objects[3]").
Result<StoredPtr> decode_persisted_object(const ResourceRegistry& registry, const nlohmann::json& resource,
                                          const nlohmann::json& object, std::uint64_t newest_revision,
                                          const std::string& where,
                                          const std::vector<const ResourceType*>& retired = {});

}  // namespace kinformer::apiserver::storage
