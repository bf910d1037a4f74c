// apiserver/connection_registry.hpp
//
// ConnectionRegistry: the API server's live connections, their count against the
// connection cap, and which of them are idle (issue 11: a flood of idle connections
// must not lock out /healthz).
//
// Contract
//   * add()/remove() track each connection for its lifetime; size() counts them.
//   * A connection marks itself idle while it waits for the first byte of a request
//     (set_idle). evict_oldest_idle() closes the one idle the longest and returns
//     whether there was one: the server makes room this way when it reaches its cap
//     or runs out of file descriptors, so an attacker's idle sockets go first and a
//     connection mid-request or watching is never evicted.
//   * close_all() closes every connection (Server::stop()).
//   * Connections are closed through Connection::close(), which must be callable from
//     any thread and must not call back into the registry synchronously.
// Threading: every member is thread-safe (one mutex, never held while closing).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kinformer::apiserver {

class Connection {
 public:
  virtual ~Connection() = default;
  /// Closes the connection from its own executor; safe from any thread.
  virtual void close() = 0;
};

class ConnectionRegistry {
 public:
  void add(Connection* c, std::weak_ptr<Connection> w);
  void remove(Connection* c);
  void set_idle(Connection* c, bool idle);
  bool evict_oldest_idle();
  void close_all();
  std::size_t size() const;

 private:
  struct Entry {
    std::weak_ptr<Connection> weak;
    std::uint64_t idle_since = 0;  // 0 = busy; else a key of idle_
  };
  mutable std::mutex mu_;
  std::unordered_map<Connection*, Entry> live_;  // guarded by mu_
  std::map<std::uint64_t, Connection*> idle_;    // guarded by mu_; oldest first
  std::uint64_t next_idle_ = 1;                  // guarded by mu_
};

}  // namespace kinformer::apiserver
