// apiserver/storage/snapshot.hpp
//
// The snapshot file: every object of the store at one revision, written atomically
// and checked completely when read back.
//
//   {"kind":"KinformerApiserverSnapshot","version":2,"revision":R,
//    "objects":[{"resource":"pods./v1","object":{...}}, ...],"checksum":"crc32c:XXXXXXXX"}
//
// The checksum is the CRC-32C of every byte before ',"checksum"', so the file stays
// plain JSON (jq reads it) and a change of any value is caught.
//
// Contract
//   * write_snapshot() writes temp + fsync + rename + fsync(dir): a crash leaves the
//     old or the new snapshot.
//   * read_snapshot() returns the objects only when everything holds: the checksum
//     (version 2; version 1 files, written before checksums, are accepted with a
//     note on stderr), the revision (an unsigned integer <= max_revision), every entry
//     (decode_persisted_object()), no key twice, every namespaced object in a
//     namespace the snapshot holds, and the namespaces default, kube-system and
//     kube-public present. Each error names the file and the entry.
//   * Its CustomResourceDefinitions are read first and each serves its kind in
//     `registry` (follow_crd(), apiserver/crd.hpp), so the custom resources after them
//     are known; a CRD that cannot be served is an error naming it. The registry keeps
//     those kinds even when a later entry fails.
// Threading: plain functions. Errors: Result (Errc::decode_failed for content,
//   Errc::server_error for I/O); never throws.
#pragma once

#include <string>
#include <vector>

#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

/// The snapshot text of `contents` (what write_snapshot() writes).
std::string render_snapshot(const Store::Contents& contents);

Result<void> write_snapshot(const std::string& path, const Store::Contents& contents);

Result<Store::Contents> read_snapshot(const std::string& path, ResourceRegistry& registry);
/// read_snapshot() on text already in memory; `path` only names it in errors.
Result<Store::Contents> parse_snapshot(const std::string& text, const std::string& path,
                                       ResourceRegistry& registry);

}  // namespace kinformer::apiserver::storage
