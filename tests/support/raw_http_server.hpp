// tests/support/raw_http_server.hpp
//
// RawHttpServer: a tiny loopback HTTP server whose answers a test scripts byte for
// byte — malformed watch streams, truncated chunks, resets — and, with TLS options,
// a server that demands a client certificate (the embedded API server has no
// --client-ca yet). POSIX sockets and plain OpenSSL: no Beast, so it compiles fast.
//
// Contract
//   * Binds 127.0.0.1 on a free port; every connection gets its own thread, reads
//     one request head, passes it to the script and writes the returned parts in
//     order (a part with hold keeps the connection open until the server stops; one
//     with `then` pauses after it is written),
//     then closes the connection.
//   * A client that closes while a part is written ends that connection only (SIGPIPE is
//     blocked on connection threads, so a TLS write fails instead of killing the process).
//   * requests() counts the request heads seen; heads() returns them.
//   * The destructor stops accepting, wakes held connections and joins every thread.
// Threading: the script runs on connection threads (one per connection).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::testing {

struct RawTls {
  std::string cert_file;       // PEM server certificate
  std::string key_file;        // PEM server key
  std::string client_ca_file;  // "" = no client certificate asked for
};

/// One piece of an answer: bytes to write, or hold = keep the connection open; `then`:
/// a pause after writing it, so that the client reads it on its own.
struct RawPart {
  std::string bytes;
  bool hold = false;
  std::chrono::milliseconds then{0};
};

class RawHttpServer {
 public:
  using Script = std::function<std::vector<RawPart>(const std::string& head, std::size_t request_number)>;

  explicit RawHttpServer(Script script, RawTls tls = {});
  ~RawHttpServer();
  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const;
  std::size_t requests() const { return requests_; }
  std::vector<std::string> heads() const;
  /// TLS handshakes that failed (a client without a certificate, for one).
  std::size_t failed_handshakes() const { return failed_handshakes_; }
  /// Parts written whole to a client so far (a stalled count means TCP pushed back).
  std::size_t parts_written() const { return parts_written_; }

  /// "HTTP/1.1 200 OK" + chunked headers; chunk() frames one chunk; last_chunk() ends it.
  static std::string chunked_head(int status = 200);
  static std::string chunk(const std::string& data);
  static std::string last_chunk() { return "0\r\n\r\n"; }
  /// A complete Content-Length response.
  static std::string response(int status, const std::string& body, const std::string& extra_headers = "");

 private:
  void accept_loop();
  void serve(int fd);

  Script script_;
  RawTls tls_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX*, kept out of this header
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> requests_{0};
  std::atomic<std::size_t> failed_handshakes_{0};
  std::atomic<std::size_t> parts_written_{0};
  mutable std::mutex mu_;
  std::vector<std::string> heads_;        // guarded by mu_
  std::vector<std::thread> connections_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace kinformer::testing
