// runtime/connection_registry.hpp
//
// ConnectionRegistry: a server's live connections, their count against a total and a
// per-client cap, and which of them may be closed to make room (issues 11 and 33: a
// flood of idle or half-sent connections must not lock out new clients; every
// listener, the API port and the metrics port, has one).
//
// Contract
//   * admit(client) is asked before a new connection from `client` (its IP address) is
//     served. Under both caps it says yes. At a cap it closes one waiting connection
//     (of that client at the per-client cap, of anyone at the total cap) and says yes;
//     with none waiting it says no and the newcomer is refused.
//   * A connection is waiting while it is `idle` (no byte of its next request yet) or
//     `partial` (in its TLS handshake, or part of a request's header or body has
//     arrived). The one waiting the longest is closed first: its wait starts when it
//     last stopped being `busy` (or was added), and going from idle to partial keeps
//     it, so trickling bytes buys a slowloris client nothing. So half-sent requests
//     go before a fresh client's, and a connection whose request is being answered,
//     or that is watching (`busy`), is never closed to make room.
//   * add()/remove() track each connection for its lifetime. A connection closed to
//     make room stops counting against the caps at once (its close is asynchronous).
//   * evict_one() closes the longest-waiting connection of anyone (accept() ran out of
//     descriptors); close_all() closes every one (the server stops).
//   * Connections are closed through Connection::close(), which must be callable from
//     any thread and must not call back into the registry synchronously.
// Threading: every member is thread-safe (one mutex, never held while closing).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kinformer {

class Connection {
 public:
  virtual ~Connection() = default;
  /// Closes the connection from its own executor; safe from any thread.
  virtual void close() = 0;
};

struct ConnectionLimits {
  std::size_t max_total = 4096;       // connections at once
  std::size_t max_per_client = 1024;  // from one IP address (clamped to max_total)
};

class ConnectionRegistry {
 public:
  enum class Phase { idle, partial, busy };

  explicit ConnectionRegistry(ConnectionLimits limits = {}) : limits_(limits) {}
  /// Before the first admit(): the server lowers its caps to fit RLIMIT_NOFILE.
  void set_limits(ConnectionLimits limits);

  [[nodiscard]] bool admit(const std::string& client);
  /// A new connection starts `busy`.
  void add(Connection* c, std::weak_ptr<Connection> w, const std::string& client);
  void remove(Connection* c);
  void set_phase(Connection* c, Phase phase);
  /// True when a connection was closed.
  bool evict_one();
  void close_all();
  /// Connections counted against the caps (those closed to make room are not).
  std::size_t size() const;

 private:
  using WaitKey = std::uint64_t;  // order in which the waits began
  struct Entry {
    std::weak_ptr<Connection> weak;
    std::string client;
    WaitKey waiting = 0;     // 0: busy (in no waiting map)
    bool evicted = false;    // closed to make room: counted nowhere, evicted once
  };
  struct Client {
    std::size_t count = 0;
    std::map<WaitKey, Connection*> waiting;  // its waiting connections, first to close first
  };

  void stop_waiting_locked(Entry& entry);
  std::shared_ptr<Connection> evict_locked(Connection* c);

  mutable std::mutex mu_;
  ConnectionLimits limits_;                              // guarded by mu_
  std::unordered_map<Connection*, Entry> live_;          // guarded by mu_
  std::unordered_map<std::string, Client> clients_;      // guarded by mu_; only clients with a counted connection
  std::map<WaitKey, Connection*> waiting_;               // guarded by mu_; every waiting connection, first to close first
  std::size_t counted_ = 0;                              // guarded by mu_; live_ minus the evicted
  std::uint64_t next_wait_ = 1;                          // guarded by mu_
};

}  // namespace kinformer
