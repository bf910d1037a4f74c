#include "runtime/workqueue.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace kinformer {

WorkQueue::WorkQueue(WorkQueueOptions options) : options_(std::move(options)) {
  tokens_ = static_cast<double>(options_.burst);
  bucket_last_ = now();
  if (options_.name.empty()) return;
  auto& registry = options_.metrics ? *options_.metrics : default_registry();
  const std::vector<std::string> label{"name"};
  metrics_.depth = &registry.gauge("kinformer_workqueue_depth", "Keys ready to be handed out.", label)
                        .with({options_.name});
  metrics_.adds =
      &registry.counter("kinformer_workqueue_adds_total", "Keys queued (not deduplicated away).", label)
           .with({options_.name});
  metrics_.retries =
      &registry.counter("kinformer_workqueue_retries_total", "Keys re-queued with add_rate_limited().", label)
           .with({options_.name});
  metrics_.work_seconds = &registry
                               .histogram("kinformer_workqueue_work_duration_seconds",
                                          "Time from get() to done() of a key.", label)
                               .with({options_.name});
}

void WorkQueue::note_depth_locked() {
  if (metrics_.depth) metrics_.depth->set(static_cast<double>(queue_.size()));
}

WorkQueue::Clock::time_point WorkQueue::now() const { return options_.now ? options_.now() : Clock::now(); }

void WorkQueue::set_waker(std::function<void()> waker) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.waker = std::move(waker);
}

void WorkQueue::wake() {
  std::function<void()> waker;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waker = options_.waker;
  }
  if (waker) waker();
}

bool WorkQueue::add_locked(const std::string& key) {
  if (shutting_down_ || dirty_.count(key) > 0) return false;
  dirty_.insert(key);
  if (processing_.count(key) > 0) return false;  // queued again by done()
  queue_.push_back(key);
  if (metrics_.adds) metrics_.adds->inc();
  note_depth_locked();
  return true;
}

void WorkQueue::add(const std::string& key) {
  bool ready = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready = add_locked(key);
  }
  if (ready) {
    changed_.notify_one();
    wake();
  }
}

void WorkQueue::add_after(const std::string& key, Clock::duration delay) {
  if (delay <= Clock::duration::zero()) {
    add(key);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_) return;
    auto at = now() + delay;
    auto found = ready_at_.find(key);
    if (found != ready_at_.end()) {
      if (found->second <= at) return;  // the earlier ready time wins
      auto range = waiting_.equal_range(found->second);
      for (auto it = range.first; it != range.second; ++it) {
        if (it->second == key) {
          waiting_.erase(it);
          break;
        }
      }
    }
    waiting_.emplace(at, key);
    ready_at_[key] = at;
  }
  changed_.notify_all();  // a blocked get() must wait for the new earliest time
  wake();
}

WorkQueue::Clock::duration WorkQueue::limiter_delay_locked(const std::string& key, Clock::time_point t) {
  auto failures = failures_[key]++;
  // base × 2^failures, capped; computed in double so that many failures cannot overflow.
  double per_key =
      static_cast<double>(options_.base_delay.count()) * std::pow(2.0, static_cast<double>(failures));
  auto per_key_delay = per_key >= static_cast<double>(options_.max_delay.count())
                           ? options_.max_delay
                           : std::chrono::nanoseconds(static_cast<std::int64_t>(per_key));
  std::chrono::nanoseconds bucket_delay{0};
  if (options_.qps > 0) {
    auto elapsed = std::chrono::duration<double>(t - bucket_last_).count();
    bucket_last_ = t;
    tokens_ = std::min(static_cast<double>(options_.burst), tokens_ + elapsed * options_.qps);
    tokens_ -= 1.0;  // a reservation: tokens may go negative, later callers wait longer
    if (tokens_ < 0)
      bucket_delay = std::chrono::nanoseconds(static_cast<std::int64_t>(-tokens_ / options_.qps * 1e9));
  }
  return std::chrono::duration_cast<Clock::duration>(std::max(per_key_delay, bucket_delay));
}

void WorkQueue::add_rate_limited(const std::string& key) {
  Clock::duration delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutting_down_) return;
    if (metrics_.retries) metrics_.retries->inc();
    delay = limiter_delay_locked(key, now());
  }
  add_after(key, delay);
}

void WorkQueue::forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

std::size_t WorkQueue::num_requeues(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = failures_.find(key);
  return found == failures_.end() ? 0 : found->second;
}

void WorkQueue::promote_due_locked(Clock::time_point t) {
  while (!waiting_.empty() && waiting_.begin()->first <= t) {
    auto key = waiting_.begin()->second;
    waiting_.erase(waiting_.begin());
    ready_at_.erase(key);
    add_locked(key);
  }
}

std::optional<std::string> WorkQueue::take_locked() {
  if (queue_.empty()) return std::nullopt;
  auto key = std::move(queue_.front());
  queue_.pop_front();
  processing_.emplace(key, now());
  dirty_.erase(key);
  note_depth_locked();
  return key;
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    promote_due_locked(now());
    if (auto key = take_locked()) return key;
    if (shutting_down_) return std::nullopt;
    if (waiting_.empty())
      changed_.wait(lock);
    else {
      // A copy: wait_until reads its deadline again after waking, and add_after() may
      // erase that entry meanwhile (the same use after free ASan found in StoreListWatch).
      const auto deadline = waiting_.begin()->first;
      changed_.wait_until(lock, deadline);
    }
  }
}

std::optional<std::string> WorkQueue::try_get() {
  std::lock_guard<std::mutex> lock(mu_);
  promote_due_locked(now());
  return take_locked();
}

void WorkQueue::done(const std::string& key) {
  bool requeued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = processing_.find(key);
    if (found == processing_.end()) return;
    if (metrics_.work_seconds)
      metrics_.work_seconds->observe(std::chrono::duration<double>(now() - found->second).count());
    processing_.erase(found);
    if (dirty_.count(key) > 0) {
      queue_.push_back(key);
      if (metrics_.adds) metrics_.adds->inc();
      note_depth_locked();
      requeued = true;
    }
  }
  changed_.notify_all();  // a getter may take the requeued key; a drain may be over
  if (requeued) wake();
}

std::size_t WorkQueue::len() {
  std::lock_guard<std::mutex> lock(mu_);
  promote_due_locked(now());
  return queue_.size();
}

std::optional<WorkQueue::Clock::duration> WorkQueue::next_ready_in() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_.empty()) return std::nullopt;
  return std::max(Clock::duration::zero(), waiting_.begin()->first - now());
}

void WorkQueue::shut_down() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    waiting_.clear();
    ready_at_.clear();
  }
  changed_.notify_all();
  wake();
}

void WorkQueue::shut_down_with_drain() {
  shut_down();
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return processing_.empty(); });
}

bool WorkQueue::shutting_down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shutting_down_;
}

}  // namespace kinformer
