// apiserver/http/session_context.hpp
//
// SessionContext: what every HTTP session of one server shares, set up by the listener
// (http/listener.hpp) at start and read-only while it serves; ServerCounters: the
// counters behind Server::stats().
//
// Contract
//   * Every pointer but persistence and handlers is set while the listener runs;
//     persistence is null without a data file, handlers without etcd.
// Threading: SessionContext is read-only while serving; the counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace boost::asio {
class thread_pool;
}  // namespace boost::asio

namespace kinformer::apiserver {

class Api;
class Authenticator;
class Storage;
class WatchAdmission;
struct ServerOptions;
namespace storage {
class Persistence;
}  // namespace storage

struct ServerCounters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> watches_started{0};
  std::atomic<std::uint64_t> watches_active{0};
  std::atomic<std::uint64_t> slow_watchers_closed{0};
};

struct SessionContext {
  const ServerOptions* options = nullptr;
  Api* api = nullptr;
  Storage* store = nullptr;
  ServerCounters* counters = nullptr;
  const Authenticator* auth = nullptr;
  std::string address;                           // "127.0.0.1:PORT", for /api
  storage::Persistence* persistence = nullptr;   // nullptr without a data file
  boost::asio::thread_pool* handlers = nullptr;  // etcd: where API handlers wait for it; else nullptr
  WatchAdmission* full_state_watches = nullptr;
};

}  // namespace kinformer::apiserver
