#include "apiserver/auth.hpp"

#include <algorithm>
#include <cctype>

namespace kinformer::apiserver {

std::optional<std::string_view> bearer_credentials(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() <= scheme.size() || authorization[scheme.size()] != ' ') return std::nullopt;
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return std::nullopt;
  auto credentials = authorization.substr(scheme.size() + 1);
  while (!credentials.empty() && credentials.front() == ' ') credentials.remove_prefix(1);
  while (!credentials.empty() && credentials.back() == ' ') credentials.remove_suffix(1);
  if (credentials.empty()) return std::nullopt;
  return credentials;
}

bool constant_time_equals(std::string_view a, std::string_view b) {
  // Every byte of the longer text is visited whatever the content; the length
  // difference is folded in rather than returned early.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    auto x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    auto y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool Authenticator::accepts(std::string_view authorization, bool verified_certificate) const {
  if (!required()) return true;
  if (client_certificates_ && verified_certificate) return true;
  if (token_.empty()) return false;
  auto credentials = bearer_credentials(authorization);
  return credentials && constant_time_equals(*credentials, token_);
}

}  // namespace kinformer::apiserver
