#include "actors/job_queue.hpp"

namespace kinformer::actors {

void JobQueue::push(caf::resumable* job, bool from_worker) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  queue_.push_back(Queued{job, now});
  if (sleeping_ == 0) return;  // every worker runs; one of them takes it next
  if (!from_worker) {
    ++wakeups_;
    cv_.notify_one();
    return;
  }
  wake_one_if_backlog_locked(now);
}

caf::resumable* JobQueue::take() {
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.empty()) {
    ++sleeping_;
    cv_.wait(lock, [&] { return !queue_.empty(); });
    --sleeping_;
  }
  caf::resumable* job = queue_.front().job;
  queue_.pop_front();
  if (!queue_.empty() && sleeping_ > 0) wake_one_if_backlog_locked(Clock::now());
  return job;
}

void JobQueue::wake_one_if_backlog_locked(Clock::time_point now) {
  if (queue_.size() <= options_.backlog_jobs && now - queue_.front().since <= options_.backlog_wait) return;
  ++wakeups_;
  cv_.notify_one();
}

void JobQueue::drain(const std::function<void(caf::resumable*)>& f) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& queued : queue_) f(queued.job);
  queue_.clear();
}

std::size_t JobQueue::sleeping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sleeping_;
}

std::uint64_t JobQueue::wakeups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wakeups_;
}

}  // namespace kinformer::actors
