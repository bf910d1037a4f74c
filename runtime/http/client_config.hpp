// runtime/http/client_config.hpp
//
// ClientConfig: everything the HTTP client needs to reach one API server — its
// URL, TLS material, credentials and limits — however it was obtained (a --server
// flag, a kubeconfig, the in-cluster service account; runtime/http/kubeconfig.hpp).
// BearerToken: the token to send, re-read from its file when the file changes
// (a projected service-account token is rotated in place).
//
// Contract
//   * parse_server_url() accepts http:// and https:// URLs with an optional port
//     (default 80/443) and path prefix; anything else is Errc::server_error.
//   * A ClientConfig never prints its token: describe() shows "<redacted>", and no
//     error built from a config includes it.
//   * BearerToken::current() returns the file's first line (trimmed) when a file is
//     set, re-read whenever its mtime or size changes; else the fixed token.
// Threading: ClientConfig is a plain value; BearerToken is thread-safe.
// Errors: Result<T>; never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/result.hpp"

namespace kinformer::http {

struct ServerAddress {
  bool tls = false;
  std::string host;       // a DNS name or an IP address, without brackets
  std::string port;       // "443" when the URL names none
  std::string base_path;  // "" or "/prefix" without a trailing '/'
};

/// "https://10.0.0.1:6443" → {tls, "10.0.0.1", "6443", ""}.
[[nodiscard]] Result<ServerAddress> parse_server_url(std::string_view url);

struct ClientConfig {
  std::string server;           // http(s)://host[:port][/prefix]
  std::string ca_pem;           // trusted CAs (PEM); "" = the system's default paths
  std::string client_cert_pem;  // client certificate chain (PEM), with client_key_pem
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;         // "" = the URL's host (SNI and the SAN check)
  std::string token;                   // bearer token; never logged
  std::string token_file;              // wins over token; re-read when it changes
  std::string namespace_ = "default";  // the context's namespace
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{60000};  // a whole list/get/create request
  /// One watch event's JSON larger than this closes the watch (a runaway line
  /// must not grow memory without bound); kube-apiserver's objects stay < 3 MiB.
  std::size_t max_event_bytes = 16 * 1024 * 1024;
  /// A list body's limit; Beast's 8 MB default is far too small for 100k Pods.
  std::uint64_t max_list_bytes = std::uint64_t{8} * 1024 * 1024 * 1024;
  std::size_t max_idle_connections = 4;  // kept alive for lists and requests

  /// "https://host:6443 (token: <redacted>, ca: 1 PEM, client cert: no)" for logs.
  std::string describe() const;
};

class BearerToken {
 public:
  BearerToken(std::string token, std::string file);
  /// The token to send now; "" when none (or the file cannot be read).
  std::string current();

 private:
  std::mutex mu_;
  std::string token_;       // guarded by mu_
  std::string file_;        // immutable
  std::time_t mtime_ = 0;   // guarded by mu_; of the last read
  long mtime_ns_ = -1;      // guarded by mu_
  std::int64_t size_ = -1;  // guarded by mu_
};

}  // namespace kinformer::http
