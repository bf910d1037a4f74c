// runtime/list_watch.hpp
//
// ListWatch: where a Reflector gets its objects — one list call (a page) and one
// watch stream at a time (client-go ListerWatcher; informer-semantics.md §5, §8;
// kube-api-protocol.md A4–A5). Implementations: the in-process source over the
// embedded API server's store (apiserver/store_list_watch.hpp, which tests reach
// through tests/support/fake_source.hpp) and the HTTP client of a real cluster or the
// embedded server (runtime/http/http_list_watch.hpp).
// tests/support/fault_injecting_list_watch.hpp wraps any of them to inject faults.
//
// Contract
//   * Calls return at once; results arrive through the callbacks, possibly on
//     another thread (an I/O thread). The Reflector actor turns each callback into a
//     message to itself, so callbacks must be cheap and must not block.
//   * list() answers exactly once. A watch delivers events in order in batches,
//     then on_closed exactly once (Result<void>{} for a clean end such as the
//     server's timeout; an Error otherwise), unless stop() came first: after stop()
//     returns, no callback of that watch runs any more.
//   * Callbacks may run before list()/watch() returns (a source that answers
//     synchronously, like the in-process one), so they must not expect the returned
//     Watch to exist yet.
//   * A watch started at a too-old resource version closes with Errc::gone (the
//     server's ERROR event with code 410); a list at one fails with Errc::gone, and
//     at a version the server has not reached with Errc::too_large_rv. A 429 is
//     Errc::too_many_requests (make it with too_many_requests(); retry_after()
//     reads the wait back); a refused connection is Errc::connection_failed. A
//     watch that cannot be established closes at once with that error and no events.
//   * pause()/resume() are flow control: a paused watch delivers nothing and keeps
//     what arrives (a socket that is not read), resume() delivers it in order. A
//     source that cannot pause ignores them.
//   * A malformed event is reported as a WatchEvent of type error with
//     Errc::decode_failed; the stream goes on. A byte-stream source that cannot
//     trust what follows a bad line (the HTTP client) instead delivers the events
//     before it and closes the watch with that Errc::decode_failed error, so the
//     Reflector relists rather than missing the event for good.
// Threading: list() and watch() may be called from any thread; one Reflector uses
//   one ListWatch at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer {

struct ListOptions {
  std::string resource_version;        // "" = consistent latest; "0" = any
  std::string resource_version_match;  // "", "NotOlderThan" or "Exact"
  std::int64_t limit = 0;              // 0 = no limit
  std::string continue_token;
  std::string label_selector;
  std::string field_selector;
};

struct ObjectList {
  std::vector<ObjectPtr> items;
  std::string resource_version;  // the RV the list represents
  std::string continue_token;    // "" on the last page
};

struct WatchOptions {
  std::string resource_version;
  bool allow_watch_bookmarks = true;
  /// Watch-list (streaming list, informer-semantics.md §5.6): ADDED for the state
  /// not older than resource_version, then a bookmark with initial_events_end.
  /// Needs resource_version_match "NotOlderThan".
  bool send_initial_events = false;
  std::string resource_version_match;
  std::int64_t timeout_seconds = 0;  // 0 = the server's default
  std::string label_selector;
  std::string field_selector;
};

enum class WatchEventType : std::uint8_t { added, modified, deleted, bookmark, error };

struct WatchEvent {
  WatchEventType type = WatchEventType::added;
  ObjectPtr object;              // null for error
  std::string resource_version;  // the event object's RV (bookmarks carry only this)
  std::optional<Error> error;    // set iff type == error
  bool initial_events_end = false;  // a bookmark annotated k8s.io/initial-events-end: "true"
};

/// A 429 answer asking the client to wait `retry_after`: "too many requests, retry after 3s".
Error too_many_requests(std::chrono::seconds retry_after);
/// The wait a too_many_requests() error asks for; nullopt for other errors.
std::optional<std::chrono::seconds> retry_after(const Error& error);

/// A running watch; destroying it stops it.
class Watch {
 public:
  virtual ~Watch() = default;
  /// Stops delivery; after it returns no callback of this watch runs again.
  virtual void stop() = 0;
  /// Stops delivery until resume(); arriving events are kept, not dropped.
  virtual void pause() {}
  /// Delivers what was kept while paused, then goes on as before.
  virtual void resume() {}
};

class ListWatch {
 public:
  using ListCallback = std::function<void(Result<ObjectList>)>;
  using EventsCallback = std::function<void(std::vector<WatchEvent>)>;
  using ClosedCallback = std::function<void(Result<void>)>;

  virtual ~ListWatch() = default;
  virtual void list(const ListOptions& options, ListCallback done) = 0;
  [[nodiscard]] virtual std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                                     ClosedCallback on_closed) = 0;
  /// The resource it serves ("pods"), for the informer's metric labels and log
  /// lines; "" when it cannot say.
  virtual std::string resource() const { return {}; }
};

}  // namespace kinformer
