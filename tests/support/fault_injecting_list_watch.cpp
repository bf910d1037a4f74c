#include "tests/support/fault_injecting_list_watch.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <utility>

namespace kinformer::testing {

struct FaultInjectingListWatch::Drops {
  bool has(const std::string& rv) {
    std::lock_guard lock(mu);
    return rvs.count(rv) != 0;
  }
  std::mutex mu;
  std::set<std::string> rvs;  // guarded by mu
};

// -- one watch ---------------------------------------------------------------------------

struct FaultInjectingListWatch::Tap {
  struct Item {
    std::vector<WatchEvent> events;
    std::optional<Result<void>> close;  // set: this item ends the watch
  };

  Tap(EventsCallback e, ClosedCallback c) : on_events(std::move(e)), on_closed(std::move(c)) {}

  /// Delivers `item` now, or keeps it while paused; drops it after stop or close.
  void post(Item item) {
    std::lock_guard lock(mu);
    if (stopped || ended) return;
    if (item.close) ended = true;
    if (paused) {
      kept.push_back(std::move(item));
      return;
    }
    invoke_locked(item);
  }

  void invoke_locked(Item& item) {
    if (item.close) {
      on_closed(std::move(*item.close));
    } else if (!item.events.empty()) {
      on_events(std::move(item.events));
    }
  }

  /// Takes the inner watch handle once the inner source returned it.
  void attach(std::unique_ptr<Watch> watch) {
    {
      std::lock_guard lock(mu);
      if (!stopped && !inner_closed) {
        inner = std::move(watch);
        return;
      }
    }
    if (watch) watch->stop();
  }

  /// Stops the inner watch (outside mu: its delivery may be waiting for mu).
  void stop_inner() {
    std::unique_ptr<Watch> watch;
    {
      std::lock_guard lock(mu);
      inner_closed = true;
      watch.swap(inner);
    }
    if (watch) watch->stop();
  }

  void stop() {
    {
      std::lock_guard lock(mu);
      stopped = true;
      kept.clear();
    }
    finished = true;
    stop_inner();
  }

  void pause() {
    Watch* watch = nullptr;
    {
      std::lock_guard lock(mu);
      paused = true;
      watch = inner.get();
    }
    if (watch) watch->pause();
  }

  void resume() {
    Watch* watch = nullptr;
    {
      std::lock_guard lock(mu);
      paused = false;
      // a callback may pause or stop again: check before each item
      while (!paused && !stopped && !kept.empty()) {
        Item item = std::move(kept.front());
        kept.pop_front();
        invoke_locked(item);
      }
      if (!paused && !stopped) watch = inner.get();
    }
    if (watch) watch->resume();
  }

  const EventsCallback on_events;
  const ClosedCallback on_closed;
  std::recursive_mutex mu;            // held while a callback of this watch runs
  std::unique_ptr<Watch> inner;       // guarded by mu; null before attach() and after stop_inner()
  bool stopped = false;               // guarded by mu
  bool ended = false;                 // guarded by mu: the close was delivered or kept
  bool paused = false;                // guarded by mu
  bool inner_closed = false;          // guarded by mu: the inner watch ended or was stopped
  std::deque<Item> kept;              // guarded by mu: what arrived while paused
  std::atomic<bool> finished{false};  // stopped, or a close is on its way: no longer open
};

namespace {

class TapWatch final : public Watch {
 public:
  explicit TapWatch(std::shared_ptr<FaultInjectingListWatch::Tap> tap) : tap_(std::move(tap)) {}
  ~TapWatch() override { tap_->stop(); }
  void stop() override { tap_->stop(); }
  void pause() override { tap_->pause(); }
  void resume() override { tap_->resume(); }

 private:
  std::shared_ptr<FaultInjectingListWatch::Tap> tap_;
};

void run_on(const Executor& executor, std::function<void()> task) {
  if (executor) {
    executor(std::move(task));
  } else {
    task();
  }
}

}  // namespace

// -- FaultInjectingListWatch ----------------------------------------------------------------

FaultInjectingListWatch::FaultInjectingListWatch(std::shared_ptr<ListWatch> inner,
                                                 FaultInjectionOptions options)
    : inner_(std::move(inner)), options_(std::move(options)), drops_(std::make_shared<Drops>()) {
  if (options_.network) on_cut_ = options_.network->on_cut([this] { close_watches(fault::reset()); });
}

FaultInjectingListWatch::~FaultInjectingListWatch() {
  on_cut_.reset();
  std::vector<std::weak_ptr<Tap>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(taps_);
  }
  for (auto& weak : left)
    if (auto tap = weak.lock()) tap->stop();
}

void FaultInjectingListWatch::run(std::function<void()> task) const {
  run_on(options_.executor, std::move(task));
}

std::vector<std::shared_ptr<FaultInjectingListWatch::Tap>> FaultInjectingListWatch::open_taps_locked() const {
  std::vector<std::shared_ptr<Tap>> open;
  std::vector<std::weak_ptr<Tap>> kept;
  for (auto& weak : taps_) {
    if (auto tap = weak.lock(); tap && !tap->finished) {
      open.push_back(tap);
      kept.push_back(weak);
    }
  }
  taps_.swap(kept);
  return open;
}

// -- faults --

void FaultInjectingListWatch::fail_next_list(Error error) {
  std::lock_guard lock(mu_);
  list_faults_.push_back(ListFault{ListTarget::any_list, std::move(error)});
}

void FaultInjectingListWatch::fail_next_continue(Error error) {
  std::lock_guard lock(mu_);
  list_faults_.push_back(ListFault{ListTarget::continue_page, std::move(error)});
}

void FaultInjectingListWatch::fail_next_watch(Error error) {
  std::lock_guard lock(mu_);
  watch_faults_.push_back(std::move(error));
}

void FaultInjectingListWatch::close_watches(Result<void> reason) {
  std::vector<std::shared_ptr<Tap>> taps;
  {
    std::lock_guard lock(mu_);
    taps = open_taps_locked();
  }
  for (const auto& tap : taps) {
    tap->finished = true;
    tap->stop_inner();
    run([tap, reason] { tap->post(Tap::Item{{}, reason}); });
  }
}

void FaultInjectingListWatch::emit(std::vector<WatchEvent> events) {
  std::vector<std::shared_ptr<Tap>> taps;
  {
    std::lock_guard lock(mu_);
    taps = open_taps_locked();
  }
  for (const auto& tap : taps) run([tap, events] { tap->post(Tap::Item{events, std::nullopt}); });
}

void FaultInjectingListWatch::emit_malformed() {
  emit({WatchEvent{WatchEventType::error, nullptr, "",
                   Error{Errc::decode_failed, "malformed watch event at byte 0: expected a JSON object"}}});
}

void FaultInjectingListWatch::drop_events_at(std::string resource_version) {
  std::lock_guard lock(drops_->mu);
  drops_->rvs.insert(std::move(resource_version));
}

void FaultInjectingListWatch::stop_dropping_at(const std::string& resource_version) {
  std::lock_guard lock(drops_->mu);
  drops_->rvs.erase(resource_version);
}

// -- what happened --

std::vector<ListOptions> FaultInjectingListWatch::list_requests() const {
  std::lock_guard lock(mu_);
  return list_requests_;
}

std::vector<WatchOptions> FaultInjectingListWatch::watch_requests() const {
  std::lock_guard lock(mu_);
  return watch_requests_;
}

std::size_t FaultInjectingListWatch::open_watch_count() const {
  std::lock_guard lock(mu_);
  return open_taps_locked().size();
}

// -- ListWatch --

void FaultInjectingListWatch::list(const ListOptions& options, ListCallback done) {
  std::optional<Error> fault;
  {
    std::lock_guard lock(mu_);
    list_requests_.push_back(options);
    const bool is_continue = !options.continue_token.empty();
    if (options_.network && options_.network->partitioned()) fault = fault::refused();
    for (auto it = list_faults_.begin(); !fault && it != list_faults_.end(); ++it) {
      if (it->target == ListTarget::any_list || is_continue) {
        fault = std::move(it->error);
        list_faults_.erase(it);
        break;
      }
    }
  }
  if (fault) {
    run([done = std::move(done), error = std::move(*fault)]() mutable { done(std::move(error)); });
    return;
  }
  inner_->list(options,
               [executor = options_.executor, done = std::move(done)](Result<ObjectList> answer) mutable {
                 auto shared = std::make_shared<Result<ObjectList>>(std::move(answer));
                 run_on(executor, [done = std::move(done), shared] { done(std::move(*shared)); });
               });
}

std::unique_ptr<Watch> FaultInjectingListWatch::watch(const WatchOptions& options, EventsCallback on_events,
                                                      ClosedCallback on_closed) {
  auto tap = std::make_shared<Tap>(std::move(on_events), std::move(on_closed));
  std::optional<Error> fault;
  {
    std::lock_guard lock(mu_);
    watch_requests_.push_back(options);
    if (options_.network && options_.network->partitioned()) {
      fault = fault::refused();
    } else if (!watch_faults_.empty()) {
      fault = std::move(watch_faults_.front());
      watch_faults_.pop_front();
    } else if (options.send_initial_events && options_.refuse_watch_list) {
      fault = Error{Errc::server_error,
                    "422 Invalid: sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                    "is enabled"};
    } else {
      (void)open_taps_locked();  // forgets the finished ones
      taps_.push_back(tap);
    }
  }
  if (fault) {
    tap->finished = true;
    run([tap, error = std::move(*fault)] { tap->post(Tap::Item{{}, Result<void>(error)}); });
    return std::make_unique<TapWatch>(tap);
  }
  std::weak_ptr<Tap> weak = tap;
  auto on_inner_events = [weak, drops = drops_,
                          executor = options_.executor](std::vector<WatchEvent> events) {
    auto tap = weak.lock();
    if (!tap) return;
    events.erase(std::remove_if(events.begin(), events.end(),
                                [&](const WatchEvent& e) {
                                  return e.type != WatchEventType::error && drops->has(e.resource_version);
                                }),
                 events.end());
    if (events.empty()) return;
    run_on(executor, [tap, events = std::move(events)]() mutable {
      tap->post(Tap::Item{std::move(events), std::nullopt});
    });
  };
  auto on_inner_closed = [weak, executor = options_.executor](Result<void> reason) {
    auto tap = weak.lock();
    if (!tap) return;
    tap->finished = true;
    {
      std::lock_guard lock(tap->mu);
      tap->inner_closed = true;
    }
    run_on(executor, [tap, reason = std::move(reason)] { tap->post(Tap::Item{{}, reason}); });
  };
  tap->attach(inner_->watch(options, std::move(on_inner_events), std::move(on_inner_closed)));
  return std::make_unique<TapWatch>(tap);
}

}  // namespace kinformer::testing
