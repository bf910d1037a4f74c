// apiserver/server.hpp
//
// Server: the embedded Kubernetes-compatible API server as an object a test, an
// example or the `kinformer apiserver` command starts and stops (issue 4).
//
//   apiserver::Server server({});            // 127.0.0.1, a free port
//   auto port = server.start();              // Result<uint16_t>: the bound port
//   ... kubectl --server server.url() ..., or server.store() in-process ...
//   server.stop();                           // also done by the destructor
//
// Contract
//   * HTTP/1.1 with keep-alive on Boost.Beast; HTTPS when tls_cert_file/tls_key_file
//     are set; with a token or a client CA, every request needs "Authorization:
//     Bearer <token>" (any case of "Bearer") or a client certificate signed by the CA
//     (else 401; auth.hpp). Binds 127.0.0.1 unless bind_address says otherwise.
//   * Bounds (issues 11 and 33; README "Security"): request bodies above max_body_bytes
//     are 413 and close the connection; a header or a chunked trailer above 64 KiB is
//     431, a Transfer-Encoding other than "chunked" 501, both closing it; objects fit
//     `limits`; at most max_connections connections (fewer when RLIMIT_NOFILE is
//     lower), max_connections_per_client from one IP address: beyond them, and when
//     accept() runs out of descriptors, the connection waiting longest for its request
//     (idle, or partly sent, or in its TLS handshake) is closed, and accept backs off
//     instead of spinning (runtime/connection_registry.hpp, runtime/accept_loop.hpp).
//     Watches without a resourceVersion, which start with the whole state, are limited
//     by full_state_watches (429 with Retry-After: 1 beyond). A connection waits
//     idle_timeout for a request, header_timeout for its header, read_timeout for its
//     body and write_timeout for each response write; each deadline is reset per
//     request. "Expect: 100-continue" is answered before the body is read. An exception
//     out of a handler closes its connection, never the process (runtime/io_loop.hpp).
//   * Lists are written from the store's immutable objects in slices; a connection
//     holds pointers to them, never a copy of the list text. So is a watch's initial
//     state. A watch from a future resourceVersion waits up to ~3 s for the store,
//     then gets 504 "Too large resource version".
//   * Watches stream one chunk per batch of newline-terminated events in revision
//     order. A watcher never blocks writers or other watchers: it reads the shared,
//     bounded store history at its own pace and holds at most one batch in flight.
//     A watcher that falls out of the history is sent ERROR 410 and closed; one
//     whose socket accepts nothing for watch_write_timeout is closed. Both are
//     logged to stderr and counted in stats().slow_watchers_closed. A watch's
//     connection closes when the watch ends; a client hang-up is noticed at once.
//   * With a data_file (storage/persistence.hpp): start() recovers the snapshot and
//     write-ahead log (and fails on a missing directory, a damaged file or a corrupt
//     log record unless `repair`); every answer, over HTTP or call(), is sent only once
//     the writes it made or saw are fsynced (group commit); stop() writes the final
//     snapshot. While the disk is full (storage/wal.hpp) writes are 507 before they are
//     applied, /healthz answers 200 saying so and /readyz 500; reads and watches go on.
//   * On etcd, API handlers run on storage_threads threads, not the I/O threads: a
//     request waiting for etcd holds neither an I/O thread nor its connection's
//     other work, and up to storage_threads requests wait for etcd at once.
//   * stop() closes the listener and every connection and joins the I/O threads
//     (and the storage threads, after their requests).
// Threading: start()/stop() from one owning thread; store(), stats(), url() from any.
// Errors: start() fails with Errc::server_error naming the address, file or TLS
//   problem; nothing throws out of the I/O threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "apiserver/api.hpp"
#include "apiserver/storage/etcd/etcd_storage.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/server_observer.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/watch_admission.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

struct ServerOptions {
  std::string bind_address = "127.0.0.1";  // loopback only unless asked
  std::uint16_t port = 0;                  // 0 = a free port, see Server::port()
  std::string token;                       // "" = no token authentication
  std::string tls_cert_file;               // PEM; both set = HTTPS
  std::string tls_key_file;
  std::string client_ca_file;  // PEM CA bundle: client certificates it signed authenticate (TLS only)
  std::string data_file;                   // "" = no persistence
  EtcdOptions etcd;                        // endpoints set: objects live in etcd (not with data_file);
                                           // its watch_history is this struct's
  std::uint64_t wal_compact_bytes = 64ull << 20;  // log size that triggers a snapshot
  bool repair = false;                     // truncate the log at a corrupt record instead of failing
  std::size_t watch_history = 10000;       // events kept for resumption (410 beyond); per type on etcd
  std::size_t watch_history_bytes = 256 * 1024 * 1024;  // ... and at most this many bytes of them
  std::size_t max_body_bytes = 3 * 1024 * 1024;  // kube-apiserver's request limit
  ObjectLimits limits;                 // every decoded or patched object: size, depth, patch operations
  std::size_t max_connections = 4096;  // also at most RLIMIT_NOFILE minus 64 (read at start())
  std::size_t max_connections_per_client = 1024;  // from one IP address
  WatchAdmissionLimits full_state_watches;  // watches without a resourceVersion sending their initial state (429 beyond)
  std::chrono::milliseconds idle_timeout{90000};  // a kept-alive connection waits this long for a request
  std::chrono::milliseconds header_timeout{
      30000};  // a request's header (and a TLS handshake) must arrive in this
  std::chrono::milliseconds read_timeout{60000};  // a request's body must arrive in this after its header
  std::chrono::milliseconds write_timeout{
      60000};  // each response write (a list: each 256 KiB slice) must finish in this
  std::chrono::milliseconds bookmark_interval{60000};   // with allowWatchBookmarks
  std::chrono::milliseconds watch_write_timeout{30000}; // a stuck watcher is closed after this
  unsigned threads = 2;                    // I/O threads
  // On etcd, requests are handled on this many threads of their own, each waiting for
  // etcd's answers, so this many requests are in flight while the I/O threads go on
  // serving (kube-apiserver: a goroutine per request). Unused by the memory store.
  unsigned storage_threads = 64;
  bool log_requests = false;               // one info log line per request (method, target; never credentials)
  // Told about every request and watch (apiserver/server_observer.hpp), e.g. ServerMetrics.
  std::shared_ptr<ServerObserver> observer;
};

struct ServerStats {
  std::uint64_t requests = 0;
  std::uint64_t watches_started = 0;
  std::uint64_t watches_active = 0;
  std::uint64_t slow_watchers_closed = 0;
  std::uint64_t log_records = 0;  // with a data file: write-ahead log records written ...
  std::uint64_t log_syncs = 0;    // ... and the fdatasyncs that made them durable (group commit)
};

class Server {
 public:
  explicit Server(ServerOptions options, ResourceRegistry registry = ResourceRegistry::with_builtins());
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Loads the data file, binds, starts the I/O threads. Returns the bound port.
  Result<std::uint16_t> start();
  /// Idempotent. Saves the data file; returns its error (the server stops regardless).
  Result<void> stop();

  std::uint16_t port() const;
  /// "http://127.0.0.1:PORT" (https when TLS is on).
  std::string url() const;
  /// The memory Store, or (after start()) the EtcdStorage.
  Storage& store();
  const ResourceRegistry& registry() const;

  /// Serves one API request in-process, without a socket or auth (a demo creating its
  /// objects, a test arranging state): the same answer as over HTTP. Watches need the
  /// HTTP endpoint: a watch request here is 400 BadRequest.
  HttpResponse call(const std::string& method, const std::string& target, const std::string& body = "",
                    const std::string& content_type = "application/json");
  ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinformer::apiserver
