#include "apiserver/read_rules.hpp"

#include "apiserver/request_params.hpp"

namespace kinformer::apiserver {

namespace {

ApiError list_options_invalid(const std::string& field, const std::string& message) {
  return ApiError::invalid("meta.k8s.io", "ListOptions", "", {{"FieldValueForbidden", message, field}});
}

std::optional<ApiError> validate_list(const ListParams& p) {
  if (p.send_initial_events)
    return list_options_invalid("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list");
  if (p.resource_version_match.empty()) return std::nullopt;
  if (p.resource_version_match != "NotOlderThan" && p.resource_version_match != "Exact")
    return list_options_invalid("resourceVersionMatch",
                                "Unsupported value: \"" + p.resource_version_match +
                                    "\": supported values: \"Exact\", \"NotOlderThan\"");
  if (p.resource_version.empty())
    return list_options_invalid(
        "resourceVersionMatch",
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
  if (!p.continue_token.empty())
    return list_options_invalid("resourceVersionMatch",
                                "Forbidden: resourceVersionMatch is forbidden when continue is provided");
  if (p.resource_version_match == "Exact" && p.resource_version == "0")
    return list_options_invalid(
        "resourceVersionMatch",
        "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
  return std::nullopt;
}

}  // namespace

ApiResult<Storage::ListQuery> plan_list(const Storage& store, const ResourceType& type, const ListParams& params) {
  if (auto invalid = validate_list(params)) return *invalid;
  auto rv_param = resource_version_param(params.resource_version);
  if (!rv_param) return rv_param.error();
  const std::optional<std::uint64_t> rv = rv_param.value();
  Storage::ListQuery q;
  q.limit = params.limit;
  if (!params.continue_token.empty()) {
    if (rv && *rv != 0)
      return ApiError::bad_request("specifying resource version is not allowed when using continue");
    auto decoded = parse_continue(params.continue_token);
    if (!decoded) return ApiError::bad_request("continue key is not valid: malformed token");
    q.at_revision = decoded->rv;
    q.after_key = decoded->key;
    if (q.at_revision != 0) q.remaining_hint = decoded->remaining;  // used only without a filter
    if (q.at_revision > store.revision_at_least(q.at_revision))
      return ApiError::bad_request("continue key is not valid: its resourceVersion " +
                                   std::to_string(q.at_revision) + " is newer than the server's");
    if (q.at_revision != 0 && q.at_revision < store.compacted_through(type)) {
      ApiError expired = ApiError::expired(
          "The provided continue parameter is too old to display a consistent list result. You can start a "
          "new "
          "list without the continue parameter, or use the continue token in this response to retrieve the "
          "remainder of the results. Continuing with the provided token results in an inconsistent list - "
          "objects "
          "that were created, modified, or deleted between the time the first chunk was returned and now may "
          "show up in the list.");
      expired.continue_token = encode_continue(0, q.after_key);
      return expired;
    }
    return q;
  }
  if (rv && *rv != 0) {
    const auto current = store.revision_at_least(*rv);
    if (*rv > current) return ApiError::too_large_resource_version(*rv, current);
    const bool exact = params.resource_version_match == "Exact" ||
                       (params.limit > 0 && params.resource_version_match != "NotOlderThan");
    if (exact) q.at_revision = *rv;
  }
  return q;
}

ApiResult<WatchStart> plan_watch(const Storage& store, const ResourceType& type, const WatchParams& params) {
  if (params.send_initial_events && params.resource_version_match != "NotOlderThan")
    return list_options_invalid(
        "sendInitialEvents",
        "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
  if (!params.send_initial_events && !params.resource_version_match.empty())
    return list_options_invalid(
        "resourceVersionMatch",
        "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
  auto rv_param = resource_version_param(params.resource_version);
  if (!rv_param) return rv_param.error();
  const std::optional<std::uint64_t> rv = rv_param.value();
  WatchStart start;
  if (!rv || *rv == 0 || params.send_initial_events) {
    start.replay_state = true;
    return start;
  }
  start.start_after = *rv;
  if (*rv > store.revision_at_least(*rv)) start.wait_for_revision = *rv;
  const auto compacted = store.compacted_through(type);
  if (*rv < compacted)
    start.final_error = ApiError::expired("too old resource version: " + params.resource_version + " (" +
                                          std::to_string(compacted + 1) + ")");
  return start;
}

}  // namespace kinformer::apiserver
