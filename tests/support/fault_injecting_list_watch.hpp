// tests/support/fault_injecting_list_watch.hpp
//
// FaultInjectingListWatch: a decorator around any ListWatch (the in-process
// apiserver::StoreListWatch, or the HTTP client) that injects the faults a Reflector
// must survive and records every request, so the same scripted faults drive every
// source's tests (informer-semantics.md §5, §12 items 30-46).
//
// Usage
//   testing::FaultInjectingListWatch source(inner);
//   source.fail_next_list(testing::fault::expired());   // 410 on the next list
//   source.fail_next_continue(testing::fault::expired()); // 410 on a page >= 2
//   source.fail_next_watch(too_many_requests(3s));      // 429 with retry-after
//   source.close_watches(testing::fault::reset());      // drop every open watch
//   auto lists = source.list_requests();                // every ListOptions, in order
//
// Contract
//   * Without faults it is transparent: requests go to the inner source unchanged
//     and its answers come back unchanged, through the executor.
//   * Each fail_next_* is used by the next matching request, in the order the faults
//     were added; a failed request never reaches the inner source. A watch failed so
//     closes at once with that error and no events.
//   * close_watches() stops the inner watches and closes every open watch with the
//     reason (a clean early close by default). emit() sends events verbatim to every
//     open watch. drop_events_at() makes every watch lose the inner events of one RV
//     (a change no watch was told of; a later list still sees it).
//   * With options.network partitioned, lists and new watches fail with
//     fault::refused(), and the partition's start closes the open watches with
//     fault::reset(), as close_watches() does (network_fault.hpp).
//   * refuse_watch_list answers send_initial_events as a server without the WatchList
//     feature does (Errc::server_error, HTTP 422), so the client falls back to a list.
//   * Callbacks run through the executor (default: at once, on the thread that caused
//     them). Per watch they never overlap and keep their order; a paused watch keeps
//     what reaches it and delivers it in order on resume(); after a Watch's stop()
//     returns none of its callbacks runs.
// Threading: every member may be called from any thread.
// Errors: exactly the scripted ones plus whatever the inner source reports.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"
#include "tests/support/network_fault.hpp"

namespace kinformer::testing {

/// Runs a task now or later, in the order tasks were given.
using Executor = std::function<void(std::function<void()>)>;

struct FaultInjectionOptions {
  /// Where callbacks run; empty = at once on the calling thread.
  Executor executor;
  /// Refuse watch-list (send_initial_events) as a server without the feature does.
  bool refuse_watch_list = false;
  /// The process's network (tests/support/network_fault.hpp); null = never partitioned.
  std::shared_ptr<NetworkFault> network;
};

class FaultInjectingListWatch final : public ListWatch {
 public:
  explicit FaultInjectingListWatch(std::shared_ptr<ListWatch> inner, FaultInjectionOptions options = {});
  ~FaultInjectingListWatch() override;
  FaultInjectingListWatch(const FaultInjectingListWatch&) = delete;
  FaultInjectingListWatch& operator=(const FaultInjectingListWatch&) = delete;

  // -- faults --

  /// The next list request fails with `error`.
  void fail_next_list(Error error);
  /// The next list request carrying a continue token (page 2 onwards) fails.
  void fail_next_continue(Error error);
  /// The next watch closes at once with `error`, without events.
  void fail_next_watch(Error error);
  /// Ends every open watch now: cleanly (the default) or with `reason`.
  void close_watches(Result<void> reason = {});
  /// Sends `events` verbatim to every open watch.
  void emit(std::vector<WatchEvent> events);
  /// Sends a malformed event (an error event with Errc::decode_failed) to every open watch.
  void emit_malformed();
  /// Every watch silently loses the inner source's events with this resourceVersion.
  void drop_events_at(std::string resource_version);
  /// Undoes drop_events_at() for an RV that was never used.
  void stop_dropping_at(const std::string& resource_version);

  // -- what happened --

  std::vector<ListOptions> list_requests() const;
  std::vector<WatchOptions> watch_requests() const;
  /// Watches neither stopped nor closed (a close still in the executor counts as closed).
  std::size_t open_watch_count() const;

  // -- ListWatch --

  void list(const ListOptions& options, ListCallback done) override;
  [[nodiscard]] std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) override;
  std::string resource() const override { return inner_->resource(); }

  struct Tap;    // one watch as the caller sees it; defined in the .cpp
  struct Drops;  // the RVs whose events are lost; shared with the taps, which may outlive this

 private:
  enum class ListTarget : std::uint8_t { any_list, continue_page };
  struct ListFault {
    ListTarget target;
    Error error;
  };

  std::vector<std::shared_ptr<Tap>> open_taps_locked() const;
  void run(std::function<void()> task) const;

  const std::shared_ptr<ListWatch> inner_;
  const FaultInjectionOptions options_;
  mutable std::mutex mu_;
  std::deque<ListFault> list_faults_;  // guarded by mu_
  std::deque<Error> watch_faults_;     // guarded by mu_
  const std::shared_ptr<Drops> drops_;
  std::vector<ListOptions> list_requests_;        // guarded by mu_
  std::vector<WatchOptions> watch_requests_;      // guarded by mu_
  mutable std::vector<std::weak_ptr<Tap>> taps_;  // guarded by mu_; finished ones pruned on read
  NetworkFault::CutHandle on_cut_;                  // closes the watches when options_.network is cut
};

}  // namespace kinformer::testing
