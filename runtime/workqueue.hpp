// runtime/workqueue.hpp
//
// WorkQueue: a deduplicating, rate-limited queue of keys for controllers that
// reconcile by key (client-go util/workqueue; informer-semantics.md §9,
// checklist 61–65). Handlers only add keys; workers get a key, look it up in the
// informer's Indexer, reconcile, then forget() on success or
// add_rate_limited() on failure, and always done().
//
// Contract
//   * add(): ignored while shutting down; a key already waiting is not added
//     twice; a key being processed is only marked dirty and waits again when
//     done() is called (so one key is never processed twice at once).
//   * get() blocks until a key is ready (it moves to "processing") or the queue
//     is shut down and has nothing ready (nullopt). try_get() never blocks.
//   * add_after(key, d): d <= 0 is add(); otherwise the key becomes ready after d;
//     a key already scheduled keeps the earlier ready time. Delayed keys are
//     dropped by shut_down().
//   * add_rate_limited(key) = add_after(key, limiter delay): per key
//     base_delay × 2^failures capped at max_delay, and a shared token bucket (qps,
//     burst); the larger delay wins (client-go's default controller limiter).
//     forget() resets the key's failures; num_requeues() reads them.
//   * shut_down(): new adds are ignored, get() hands out what is ready, then
//     nullopt. shut_down_with_drain() also blocks until every key being
//     processed is done().
//   * waker (optional): called, outside the lock, whenever a key may have become
//     ready by an add (the actor adaptor's wake-up; actors/workqueue_worker.hpp).
//   * Metrics (when options.name is set; client-go's workqueue metrics), label name:
//       kinformer_workqueue_depth                  gauge     keys ready to be handed out
//       kinformer_workqueue_adds_total             counter   keys queued (not deduplicated away)
//       kinformer_workqueue_retries_total          counter   add_rate_limited() calls
//       kinformer_workqueue_work_duration_seconds  histogram from get() to done() of a key
//     They are updated under the queue's lock, as atomics.
// Threading: every member function is thread-safe; get() and
//   shut_down_with_drain() block the calling thread (never call them from an actor).
// Errors: none; misuse (done() of a key not processing) is ignored.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "runtime/metrics.hpp"

namespace kinformer {

struct WorkQueueOptions {
  using Clock = std::chrono::steady_clock;
  /// Per-key exponential back-off: base × 2^failures, capped (client-go: 5 ms, 1000 s).
  std::chrono::nanoseconds base_delay = std::chrono::milliseconds(5);
  std::chrono::nanoseconds max_delay = std::chrono::seconds(1000);
  /// Shared token bucket for add_rate_limited (client-go: 10 qps, burst 100); qps 0 = off.
  double qps = 10.0;
  std::size_t burst = 100;
  /// The clock; tests inject a fake one (then use try_get(), which never waits).
  std::function<Clock::time_point()> now;
  /// Called outside the lock when an add may have made a key ready (set_waker() replaces it).
  std::function<void()> waker;
  /// "" = no metrics; else the "name" label of the queue's metrics (see the contract).
  std::string name;
  /// Where those go (it must outlive the queue); null = default_registry().
  MetricsRegistry* metrics = nullptr;
};

class WorkQueue {
 public:
  using Clock = WorkQueueOptions::Clock;

  explicit WorkQueue(WorkQueueOptions options = {});
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& key);
  void add_after(const std::string& key, Clock::duration delay);
  void add_rate_limited(const std::string& key);
  void forget(const std::string& key);
  std::size_t num_requeues(const std::string& key) const;

  /// Blocks until a key is ready, or shut down with nothing ready (nullopt).
  std::optional<std::string> get();
  /// A ready key now, or nullopt.
  std::optional<std::string> try_get();
  void done(const std::string& key);

  /// Keys ready to be handed out (delayed keys whose time came included).
  std::size_t len();
  /// Time until the earliest delayed key is ready; nullopt if none is scheduled.
  std::optional<Clock::duration> next_ready_in() const;

  /// Replaces the waker (see WorkQueueOptions); thread-safe.
  void set_waker(std::function<void()> waker);

  void shut_down();
  /// shut_down(), then blocks until every key being processed is done().
  void shut_down_with_drain();
  bool shutting_down() const;

 private:
  Clock::time_point now() const;
  bool add_locked(const std::string& key);
  void wake();
  void promote_due_locked(Clock::time_point now);
  std::optional<std::string> take_locked();
  Clock::duration limiter_delay_locked(const std::string& key, Clock::time_point now);
  void note_depth_locked();

  struct Instruments {
    Gauge* depth = nullptr;  // all null when the queue has no name
    Counter* adds = nullptr;
    Counter* retries = nullptr;
    Histogram* work_seconds = nullptr;
  };
  Instruments metrics_;

  WorkQueueOptions options_;  // waker guarded by mu_ (called on a copy, outside the lock)
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;               // guarded by mu_; ready keys in order, no dups
  std::unordered_set<std::string> dirty_;       // guarded by mu_; need processing (queued or to requeue)
  std::unordered_map<std::string, Clock::time_point>
      processing_;  // guarded by mu_; handed out (when), not done
  std::multimap<Clock::time_point, std::string> waiting_;        // guarded by mu_; delayed keys by ready time
  std::unordered_map<std::string, Clock::time_point> ready_at_;  // guarded by mu_; key → its entry's time
  std::unordered_map<std::string, std::size_t> failures_;        // guarded by mu_
  double tokens_ = 0;                                            // guarded by mu_; the bucket
  Clock::time_point bucket_last_{};                              // guarded by mu_
  bool shutting_down_ = false;                                   // guarded by mu_
};

}  // namespace kinformer
