// apiserver/auth.hpp
//
// Authenticator: decides whether a request to the embedded API server is
// authenticated (issue 11). Kept apart from the HTTP session so that the rules are
// unit-tested without sockets.
//
// Contract
//   * With neither a token nor client certificates configured, every request passes
//     (the server binds loopback by default; README "Security").
//   * A request passes when its connection presented a client certificate that the
//     TLS layer verified against --client-ca, or when it carries
//     "Authorization: Bearer <token>" with the configured token. The scheme is
//     case-insensitive (RFC 7235) and the token is compared in constant time
//     (no early exit that would leak the matching prefix length through timing).
//   * There is no authorization: an authenticated client may do anything (no RBAC).
//   * Nothing here logs; the token never leaves this object.
// Threading: immutable after construction; accepts() from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

class Authenticator {
 public:
  Authenticator(std::string token, bool client_certificates)
      : token_(std::move(token)), client_certificates_(client_certificates) {}

  /// Whether requests need credentials at all.
  bool required() const { return !token_.empty() || client_certificates_; }
  /// `authorization`: the header's value ("" when absent); `verified_certificate`: the
  /// TLS layer verified a client certificate on this connection.
  bool accepts(std::string_view authorization, bool verified_certificate) const;

 private:
  std::string token_;         // "" = no token authentication
  bool client_certificates_;  // --client-ca given
};

/// The credentials of "Bearer <credentials>", scheme compared case-insensitively; nullopt otherwise.
std::optional<std::string_view> bearer_credentials(std::string_view authorization);
/// Equality whose running time depends on the lengths only, not on where the texts differ.
bool constant_time_equals(std::string_view a, std::string_view b);

}  // namespace kinformer::apiserver
