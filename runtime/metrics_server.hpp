// runtime/metrics_server.hpp
//
// MetricsServer: the one call a service makes to expose its metrics and health
// (issue 15, item 2): a small HTTP/1.1 endpoint on Boost.Beast serving
//   GET /metrics   200, MetricsRegistry::render() as text/plain; version=0.0.4
//   GET /healthz   200 "ok" while the process serves at all (liveness)
//   GET /readyz    200 "ok" when options.ready() is true (no callback = true) and
//                  every readiness check of the registry passes (each SharedInformer
//                  adds one: it has synced); else 503 "not ready", naming the checks
//                  that failed, one per line
// and 404 for any other path, 405 for any other method.
//
//   MetricsServer metrics({&default_registry()});   // /readyz: every informer of it has synced
//   auto port = metrics.start();   // Result<uint16_t>, 0 in options = a free port
//
// Contract
//   * Binds 127.0.0.1 unless bind_address says otherwise. One I/O thread; requests
//     are answered in order per connection with keep-alive. A request whose header
//     exceeds 8 KiB, with a body or a chunked trailer over 8 KiB, is answered 413 and
//     closed; one with a Transfer-Encoding other than chunked 501 and closed. A
//     connection that has not sent a whole request within 30 s is closed, so clients
//     cannot hold memory or sockets. At most max_connections connections, and
//     max_connections_per_client from one IP address: at a cap the one waiting longest
//     for its request is closed, and accept() backs off instead of spinning when
//     descriptors run out (runtime/accept_loop.hpp). A handler's exception closes its
//     connection, never the process (runtime/io_loop.hpp).
//   * ready() and the registry's checks run on the I/O thread, once per /readyz: keep
//     them cheap and non-blocking.
//     If it throws, /readyz answers 503 naming the exception.
//   * stop() (also the destructor) closes the listener and every connection and
//     joins the thread. The registry must outlive the server.
// Threading: start()/stop() from one owning thread; port() from any.
// Errors: start() fails with Errc::server_error naming the address and the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/metrics.hpp"
#include "runtime/result.hpp"

namespace kinformer {

struct MetricsServerOptions {
  MetricsRegistry* registry = nullptr;     // null = default_registry()
  std::function<bool()> ready;             // empty = always ready
  std::string bind_address = "127.0.0.1";  // loopback only unless asked
  std::uint16_t port = 0;                  // 0 = a free port
  // Connections at once, and from one IP address (Prometheus needs one): beyond them the
  // longest-waiting connection is closed (runtime/connection_registry.hpp).
  std::size_t max_connections = 128;
  std::size_t max_connections_per_client = 32;
};

class MetricsServer {
 public:
  explicit MetricsServer(MetricsServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// Binds and starts the I/O thread; returns the bound port. Idempotent while running.
  Result<std::uint16_t> start();
  /// Idempotent.
  void stop();
  std::uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinformer
