#include "actors/job_queue.hpp"

namespace kinformer::actors {

JobQueue::JobQueue(Options options) : options_(options) {
  alarm_ = std::make_unique<WakeAlarm>([this] { on_alarm(Clock::now()); });
}

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
  if (!wake_one_if_backlog_locked(now)) arm_locked(queue_.front().since + options_.left_behind_wait);
}

caf::resumable* JobQueue::take() {
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.empty()) {
    disarm_locked();  // nothing is left behind
    ++sleeping_;
    cv_.wait(lock, [&] { return !queue_.empty(); });
    --sleeping_;
  }
  caf::resumable* job = queue_.front().job;
  queue_.pop_front();
  if (!queue_.empty() && sleeping_ > 0 && !wake_one_if_backlog_locked(Clock::now()))
    arm_locked(queue_.front().since + options_.left_behind_wait);
  return job;
}

void JobQueue::on_alarm(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!armed_until_ || now < *armed_until_) return;  // an expiry read before a disarm or a later arm
  armed_until_.reset();
  // Nothing queued, or nobody asleep to help: the next push or take that leaves a job
  // beside a sleeper arms again (a worker sleeps only on an empty queue).
  if (queue_.empty() || sleeping_ == 0) return;
  const auto due = queue_.front().since + options_.left_behind_wait;
  if (now < due) {
    arm_locked(due);  // armed for an older job that has been taken since
    return;
  }
  ++wakeups_;
  cv_.notify_one();
  arm_locked(now + options_.left_behind_wait);  // for the jobs behind the one it takes
}

bool JobQueue::wake_one_if_backlog_locked(Clock::time_point now) {
  if (queue_.size() <= options_.backlog_jobs && now - queue_.front().since <= options_.backlog_wait) return false;
  ++wakeups_;
  cv_.notify_one();
  return true;
}

void JobQueue::arm_locked(Clock::time_point deadline) {
  if (armed_until_) return;  // armed for an older job: it fires no later than this one's
  armed_until_ = deadline;
  if (alarm_) alarm_->arm(deadline);
}

void JobQueue::disarm_locked() {
  if (!armed_until_) return;
  armed_until_.reset();
  if (alarm_) alarm_->disarm();
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

std::optional<JobQueue::Clock::time_point> JobQueue::armed_until() const {
  std::lock_guard<std::mutex> lock(mu_);
  return armed_until_;
}

}  // namespace kinformer::actors
