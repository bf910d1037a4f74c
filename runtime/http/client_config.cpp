#include "runtime/http/client_config.hpp"

#include <sys/stat.h>

#include <fstream>

namespace kinformer::http {

Result<ServerAddress> parse_server_url(std::string_view url) {
  ServerAddress address;
  std::string_view rest;
  if (url.rfind("https://", 0) == 0) {
    address.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return Error{Errc::server_error,
                 "server URL '" + std::string(url) + "' must start with http:// or https://"};
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    address.base_path = std::string(path);
  }
  if (!authority.empty() && authority.front() == '[') {  // [::1]:6443
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      return Error{Errc::server_error, "server URL has an unclosed '[': " + std::string(url)};
    address.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') address.port = std::string(authority.substr(1));
  } else {
    const auto colon = authority.rfind(':');
    address.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) address.port = std::string(authority.substr(colon + 1));
  }
  if (address.host.empty()) return Error{Errc::server_error, "server URL names no host: " + std::string(url)};
  if (address.port.empty()) address.port = address.tls ? "443" : "80";
  for (char c : address.port)
    if (c < '0' || c > '9')
      return Error{Errc::server_error, "server URL has a bad port: " + std::string(url)};
  return address;
}

std::string ClientConfig::describe() const {
  std::string text = server + " (token: ";
  text += token.empty() && token_file.empty() ? "none" : "<redacted>";
  text += ", ca: ";
  text += ca_pem.empty() ? "system" : "given";
  text += ", client cert: ";
  text += client_cert_pem.empty() ? "no" : "yes";
  if (insecure_skip_tls_verify) text += ", TLS verification OFF";
  return text + ")";
}

BearerToken::BearerToken(std::string token, std::string file)
    : token_(std::move(token)), file_(std::move(file)) {}

std::string BearerToken::current() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_.empty()) return token_;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) return token_;  // keep the last good token while it is replaced
  if (st.st_mtim.tv_sec == mtime_ && st.st_mtim.tv_nsec == mtime_ns_ && st.st_size == size_) return token_;
  std::ifstream in(file_);
  std::string line;
  if (!in || !std::getline(in, line)) return token_;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  token_ = std::move(line);
  mtime_ = st.st_mtim.tv_sec;
  mtime_ns_ = st.st_mtim.tv_nsec;
  size_ = st.st_size;
  return token_;
}

}  // namespace kinformer::http
