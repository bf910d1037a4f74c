// apiserver/http/listener.hpp
//
// Listener: the API server's network side (server.hpp states the contract): it loads
// the TLS files, binds, accepts within the connection limits (runtime/accept_loop.hpp),
// runs the I/O threads and, on etcd, the storage threads API handlers wait on; each
// connection is a session (http/session.hpp). Beast and Asio stay behind this header.
//
// Contract
//   * start() checks and loads TLS (both files or neither; a client CA needs TLS), binds
//     bind_address:port and starts serving; it fails with Errc::server_error naming the
//     file or address. `storage_threads`: the handler pool's size, 0 for none (the memory store).
//   * stop() closes the listener and every connection, gives sessions ~2 s to finish
//     their handlers, then joins the I/O threads and the handler threads.
//   * counters() count from construction on, across restarts.
// Threading: start()/stop() from one owning thread; address(), tls(), counters() from any
//   while running. Errors: as start() says; nothing throws out of the I/O threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "apiserver/http/session_context.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

class Listener {
 public:
  Listener();
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// `context` without counters, address and handlers: the listener fills them in.
  Result<std::uint16_t> start(SessionContext context, unsigned storage_threads);
  void stop();

  /// "127.0.0.1:PORT" ("[::1]:PORT" for IPv6) once started.
  const std::string& address() const;
  bool tls() const;
  const ServerCounters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinformer::apiserver
