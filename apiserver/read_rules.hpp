// apiserver/read_rules.hpp
//
// The resourceVersion rules of reads, written once (kube-api-protocol.md §A4-§A5;
// informer-semantics.md §5.2): how a list's resourceVersion, resourceVersionMatch,
// limit and continue, and a watch's resourceVersion and sendInitialEvents, become a
// read of the Storage. The HTTP API (api.cpp) and the in-process StoreListWatch both
// call these, so the two cannot drift apart.
//
// Contract
//   * list: no continue and RV absent or "0" → the latest state. RV "N" → 504
//     ResourceVersionTooLarge if N is ahead of the store; else the state at exactly
//     N when match is Exact, or when a limit is set and match is not NotOlderThan
//     (410 Expired if N was compacted away); else the latest state (not older than
//     N). continue → the snapshot and position the token names (410 Expired with an
//     inconsistent-continue token when that snapshot was compacted; 400 for a token
//     from the future); RV together with continue is 400. The token's remaining count
//     becomes the query's remaining_hint.
//   * list option validation as kube-apiserver: resourceVersionMatch only with an RV,
//     never with continue, Exact never with RV "0"; sendInitialEvents is 422 on a list.
//   * watch: RV absent or "0", or sendInitialEvents → replay the latest state as ADDED,
//     then the events after it (with sendInitialEvents and bookmarks, an
//     initial-events-end bookmark in between). RV "N" → the events after N; N older
//     than the history → one 410 Expired ERROR event; N ahead of the store →
//     wait_for_revision. sendInitialEvents requires
//     match NotOlderThan, and a match requires sendInitialEvents (422).
// Threading: pure functions over a thread-safe Storage.
// Errors: ApiError values, as the client will see them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "apiserver/api_error.hpp"
#include "apiserver/storage/storage.hpp"

namespace kinformer::apiserver {

/// A list request's read parameters, as the query carries them ("" = absent).
struct ListParams {
  std::string resource_version;
  std::string resource_version_match;
  std::string continue_token;
  std::size_t limit = 0;  // 0 = no limit
  bool send_initial_events = false;
};

/// The store read a list asks for: at_revision, after_key and limit are set; the
/// namespace and filter are the caller's.
[[nodiscard]] ApiResult<Storage::ListQuery> plan_list(const Storage& store, const ResourceType& type,
                                                    const ListParams& params);

/// A watch request's start parameters ("" = absent).
struct WatchParams {
  std::string resource_version;
  std::string resource_version_match;
  bool send_initial_events = false;
};

/// Where a watch starts.
struct WatchStart {
  /// Replay the latest state as ADDED events first; its revision is then the start.
  bool replay_state = false;
  /// Without a replay: stream the events with RV > this.
  std::uint64_t start_after = 0;
  /// Set: the watch sends only this error as an ERROR event, then ends (HTTP 200).
  std::optional<ApiError> final_error;
  /// > 0: the RV is ahead of the store. kube-apiserver waits up to ~3 s for it and then
  /// answers 504 ResourceVersionTooLarge (the HTTP layer does; see api.hpp).
  std::uint64_t wait_for_revision = 0;
};

[[nodiscard]] ApiResult<WatchStart> plan_watch(const Storage& store, const ResourceType& type,
                                                const WatchParams& params);

}  // namespace kinformer::apiserver
