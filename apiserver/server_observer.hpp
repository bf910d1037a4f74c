// apiserver/server_observer.hpp
//
// ServerObserver: what apiserver::Server reports about its traffic, for metrics
// (apiserver/server_metrics.hpp) or any other sink a service plugs in through
// ServerOptions::observer. The server calls it from one place per event, on its
// I/O threads, so an observer must be cheap and must not block.
//
// Contract
//   * on_request(): once per answered request, when its response is handed to the
//     socket (a watch: when its stream starts, with status 200); `latency` runs from
//     the request's last byte read to then, including any wait for durability.
//     Requests the server could not parse are reported with method "" and their status.
//   * on_watch_started() once per watch stream; the returned WatchObserver lives as
//     long as the stream: events_sent() after each batch reaches the socket,
//     dropped() when the server closes a watcher for being slow (then destroyed with
//     the stream), destruction when the stream ends for any reason.
// Threading: called concurrently from the server's I/O threads; one WatchObserver is
//   only ever called from its own connection's strand.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>

namespace kinformer::apiserver {

/// Why the server closed a watcher on its own.
enum class WatchDrop { fell_behind, write_timeout };

class WatchObserver {
 public:
  virtual ~WatchObserver() = default;
  virtual void events_sent(std::size_t count) = 0;
  virtual void dropped(WatchDrop why) = 0;
};

class ServerObserver {
 public:
  virtual ~ServerObserver() = default;
  virtual void on_request(std::string_view method, std::string_view target, int status,
                          std::chrono::steady_clock::duration latency) = 0;
  /// `resource` is the watched resource's plural ("pods").
  virtual std::unique_ptr<WatchObserver> on_watch_started(std::string_view resource) = 0;
};

}  // namespace kinformer::apiserver
