#include "apiserver/request_params.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "apiserver/resource_version.hpp"

namespace kinformer::apiserver {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Continue tokens: base64url("<rv>\n<last key>"); rv 0 means "latest" (an inconsistent continuation).
const char* const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

}  // namespace

std::string url_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 && hex_value(in[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

Query parse_query(std::string_view query) {
  Query out;
  std::size_t start = 0;
  while (start < query.size()) {
    auto amp = query.find('&', start);
    auto pair = query.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    auto eq = pair.find('=');
    if (!pair.empty())
      out[url_decode(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return out;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    auto slash = path.find('/', start);
    auto part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (!part.empty()) out.push_back(url_decode(part));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string param(const Query& q, const char* name) {
  auto it = q.find(name);
  return it == q.end() ? std::string{} : it->second;
}

// Query booleans: absent, "false" and "0" are false; anything else is true (§B6.5).
bool flag(const Query& q, const char* name) {
  auto it = q.find(name);
  if (it == q.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v != "false" && v != "0";
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(text);
}

// resourceVersion: absent (nullopt) or an unsigned integer; anything else is 400.
ApiResult<std::optional<std::uint64_t>> resource_version_param(const std::string& text) {
  if (text.empty()) return std::optional<std::uint64_t>{};
  auto rv = parse_resource_version(text);
  if (!rv) return ApiError::bad_request("invalid resource version \"" + text + "\"");
  return rv;
}

std::string encode_continue(std::uint64_t rv, const std::string& key, std::optional<std::size_t> remaining) {
  std::string raw = format_resource_version(rv) + "\n" + key, out;
  if (remaining) raw += "\n" + std::to_string(*remaining);
  unsigned value = 0;
  int bits = 0;
  for (unsigned char c : raw) {
    value = (value << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += b64[(value >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += b64[(value << (6 - bits)) & 0x3f];
  return out;
}

std::optional<ContinueToken> parse_continue(const std::string& token) {
  std::string raw;
  unsigned value = 0;
  int bits = 0;
  for (char c : token) {
    const char* at = std::strchr(b64, c);
    if (!at || c == '\0') return std::nullopt;
    value = (value << 6) | static_cast<unsigned>(at - b64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      raw += static_cast<char>((value >> bits) & 0xff);
    }
  }
  auto nl = raw.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  auto rv = parse_resource_version(std::string_view(raw).substr(0, nl));
  if (!rv) return std::nullopt;
  ContinueToken out{*rv, raw.substr(nl + 1), std::nullopt};
  // Keys are DNS names: a second newline starts the remaining count.
  if (auto second = out.key.find('\n'); second != std::string::npos) {
    auto remaining = parse_unsigned(out.key.substr(second + 1));
    if (!remaining) return std::nullopt;
    out.remaining = static_cast<std::size_t>(*remaining);
    out.key.erase(second);
  }
  return out;
}

std::optional<std::pair<std::uint64_t, std::string>> decode_continue(const std::string& token) {
  auto parsed = parse_continue(token);
  if (!parsed) return std::nullopt;
  return std::make_pair(parsed->rv, parsed->key);
}

}  // namespace kinformer::apiserver
