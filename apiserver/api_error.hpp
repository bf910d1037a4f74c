// apiserver/api_error.hpp
//
// ApiError and ApiResult<T>: how the API server's layers report a failed request
// as the Kubernetes Status object the client will see (kube-api-protocol.md §A7).
//
// Contract
//   * An ApiError carries the HTTP code, the Status `reason`, a human message and
//     the optional details (name, group, kind); to_status_json() renders exactly
//     the Status body kubectl and client-go classify by reason/code.
//   * to_status_json() never throws on text that is not UTF-8 (a name taken from the
//     URL): such bytes are replaced.
//   * The named constructors produce the messages kube-apiserver uses, so
//     `kubectl` prints familiar lines ("pods \"x\" not found").
//   * invalid() is bounded whatever the causes: it keeps at most max_invalid_causes of
//     them (the message then says that more were found), cuts each cause's field path
//     to max_cause_field_bytes and its message to max_cause_message_bytes (cut_text()),
//     and its message joins those cut causes, so a 422 is at most ~130 KB.
// Threading: plain values. Errors: none; never throws (beyond std::bad_alloc).
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kinformer::apiserver {

/// The bounds of a 422 Invalid answer (issue 33): a request whose every field is wrong
/// gets the first causes, not one per field.
constexpr std::size_t max_invalid_causes = 100;
constexpr std::size_t max_cause_field_bytes = 256;
constexpr std::size_t max_cause_message_bytes = 1024;

/// `text` when it has at most `limit` bytes; else its first bytes (never a partial
/// UTF-8 sequence) and "...", at most `limit` bytes in all.
std::string cut_text(std::string_view text, std::size_t limit);

struct ApiError {
  struct Cause {
    std::string type;     // "FieldValueRequired", "ResourceVersionTooLarge", ...
    std::string message;
    std::string field;
  };

  int code = 500;
  std::string reason;   // "NotFound", "AlreadyExists", "Conflict", ... ("" for none)
  std::string message;
  std::string name;     // details.name
  std::string group;    // details.group
  std::string kind;     // details.kind (the resource plural for most errors)
  std::vector<Cause> causes;
  std::string continue_token;  // metadata.continue of a 410 for an expired continue

  /// The Status object, serialized: {"kind":"Status","apiVersion":"v1",...}.
  std::string to_status_json() const;

  static ApiError bad_request(std::string message);
  static ApiError not_found(const std::string& group, const std::string& plural, const std::string& name);
  static ApiError path_not_found();  // unknown URL: "the server could not find the requested resource"
  static ApiError already_exists(const std::string& group, const std::string& plural, const std::string& name);
  static ApiError conflict(const std::string& group, const std::string& plural, const std::string& name,
                           const std::string& why);
  static ApiError invalid(const std::string& group, const std::string& kind, const std::string& name,
                          std::vector<Cause> causes);
  static ApiError method_not_allowed();
  static ApiError unsupported_media_type(const std::string& content_type);
  static ApiError too_large(std::size_t limit);
  static ApiError expired(std::string message);
  static ApiError unauthorized();
  /// 403: "<plural> \"name\" is forbidden: <why>".
  static ApiError forbidden(const std::string& group, const std::string& plural, const std::string& name,
                            const std::string& why);
  /// 504 Timeout, cause ResourceVersionTooLarge: a requested RV the store has not reached.
  static ApiError too_large_resource_version(std::uint64_t requested, std::uint64_t current);
  static ApiError internal(std::string message);
};

/// A T or an ApiError. Check `if (!r)` before `r.value()`.
template <class T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  ApiResult(ApiError error) : state_(std::move(error)) {}  // NOLINT

  explicit operator bool() const noexcept { return state_.index() == 0; }
  T& value() & { assert(*this); return std::get<0>(state_); }
  const T& value() const& { assert(*this); return std::get<0>(state_); }
  T&& value() && { assert(*this); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const ApiError& error() const& { assert(!*this); return std::get<1>(state_); }
  ApiError&& error() && { assert(!*this); return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, ApiError> state_;
};

}  // namespace kinformer::apiserver
