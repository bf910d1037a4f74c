// apiserver/resource_version.hpp
//
// The resourceVersion rule of the API server, in one place: a resourceVersion is the
// storage's revision (one global counter; on etcd, etcd's int64 revision) written as
// decimal text (kube-api-protocol.md §A2, §A4.1). Clients treat it as opaque; the server
// parses what it is sent and writes what it hands out only through this header.
//
// Contract
//   * parse_resource_version(): one or more decimal digits and nothing else (no sign, no
//     space), value 0..max_revision; leading zeros are accepted, as Go's ParseUint
//     accepts them. Anything else is nullopt: the caller says what garbage means (a
//     query parameter or continue token is 400, a persisted object is refused, a stored
//     object never holds one).
//   * format_resource_version() writes the canonical text (no leading zeros), so
//     parse_resource_version(format_resource_version(r)) == r for every r <= max_revision.
//   * same_resource_version(): clients may only compare resourceVersions for equality
//     (§A2), so a precondition names a revision only in its canonical text: "007" is not
//     revision 7, and "" or garbage names none.
//   * set_resource_version() writes an object's metadata.resourceVersion (creating
//     metadata when absent).
// Threading: pure functions. Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace kinformer::apiserver {

/// The largest revision: etcd's revisions are int64.
constexpr std::uint64_t max_revision = 0x7fffffffffffffffULL;

[[nodiscard]] std::optional<std::uint64_t> parse_resource_version(std::string_view text);
std::string format_resource_version(std::uint64_t revision);
/// True when `text` is the canonical text of `revision`.
bool same_resource_version(std::string_view text, std::uint64_t revision);
/// object.metadata.resourceVersion = format_resource_version(revision).
void set_resource_version(nlohmann::json& object, std::uint64_t revision);

}  // namespace kinformer::apiserver
