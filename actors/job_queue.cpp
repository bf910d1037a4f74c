#include "actors/job_queue.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <caf/resumable.hpp>

namespace kinformer::actors {
namespace {

// Append-only, so that take() reads it without a lock.
constexpr std::size_t max_brief_types = 64;
std::array<std::atomic<const std::type_info*>, max_brief_types> brief_types{};
std::atomic<std::size_t> brief_type_count{0};
std::mutex brief_types_writer;

// The worker's state: whether its current job is brief now, and whose worker it is.
thread_local bool running_brief_job = false;
thread_local JobQueue* worker_queue = nullptr;

}  // namespace

void JobQueue::declare_brief_type(const std::type_info& type) {
  std::lock_guard<std::mutex> lock(brief_types_writer);
  if (is_brief_type(type)) return;
  const std::size_t n = brief_type_count.load(std::memory_order_relaxed);
  if (n == max_brief_types) throw std::length_error("JobQueue: more than 64 brief actor types");
  brief_types[n].store(&type, std::memory_order_relaxed);
  brief_type_count.store(n + 1, std::memory_order_release);
}

bool JobQueue::is_brief_type(const std::type_info& type) noexcept {
  const std::size_t n = brief_type_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) {
    const std::type_info* known = brief_types[i].load(std::memory_order_relaxed);
    if (known == &type || *known == type) return true;  // the pointers first: == may compare names
  }
  return false;
}

JobQueue::MayBlock::MayBlock() : was_brief_(running_brief_job) {
  running_brief_job = false;
  if (!was_brief_ || !worker_queue) return;  // a non-brief job protected its jobs already
  JobQueue& queue = *worker_queue;
  bool wake = false;
  Wakeup* woken = nullptr;
  {
    std::lock_guard<std::mutex> lock(queue.mu_);
    if (!queue.queue_.empty() && queue.sleeping_ > 0) wake = queue.protect_left_behind_locked(Clock::now());
    if (wake) woken = queue.wake_one_locked(Prefer::other);
  }
  if (woken) woken->post();
}

JobQueue::MayBlock::~MayBlock() { running_brief_job = was_brief_; }

JobQueue::JobQueue(Options options) : options_(options) {
  alarm_ = std::make_unique<WakeAlarm>([this] { on_alarm(Clock::now()); });
}

JobQueue::~JobQueue() {
  if (worker_queue != this) return;
  worker_queue = nullptr;
  running_brief_job = false;
}

void JobQueue::push(caf::resumable* job, bool from_worker) {
  bool wake = false;
  Wakeup* woken = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    queue_.push_back(Queued{job, now});
    if (sleeping_ == 0) return;  // every worker runs; one of them takes it next
    if (!from_worker) {
      wake = true;
    } else if (running_brief_job) {
      wake = backlog_locked(now);  // the pusher takes it within microseconds otherwise
    } else {
      wake = protect_left_behind_locked(now);
    }
    // From outside the workers (the I/O thread): the home worker, beside it; a helper
    // for a worker's backlog: one on another CPU.
    if (wake) woken = wake_one_locked(from_worker ? Prefer::other : Prefer::home);
  }
  if (woken) woken->post();
}

caf::resumable* JobQueue::take(bool home) {
  caf::resumable* job = nullptr;
  bool wake = false;
  Wakeup* woken = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (queue_.empty()) {
      disarm_locked();  // nothing is left behind
      ++sleeping_;      // the waker takes it back (wake_one_locked)
      home_sleeping_ = home_sleeping_ || home;
      lock.unlock();
      (home ? home_wakeup_ : wakeup_).wait();
      lock.lock();
    }
    job = queue_.front().job;
    queue_.pop_front();
    running_brief_job = is_brief_type(typeid(*job));
    worker_queue = this;
    if (!queue_.empty() && sleeping_ > 0) {
      const auto now = Clock::now();
      wake = running_brief_job ? backlog_locked(now) : protect_left_behind_locked(now);
      if (wake) woken = wake_one_locked(Prefer::other);
    }
  }
  if (woken) woken->post();
  return job;
}

void JobQueue::on_alarm(Clock::time_point now) {
  Wakeup* woken = nullptr;
  {
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
    arm_locked(now + options_.left_behind_wait);  // for the jobs behind the one it takes
    woken = wake_one_locked(Prefer::other);
  }
  woken->post();
}

bool JobQueue::backlog_locked(Clock::time_point now) {
  return queue_.size() > options_.backlog_jobs || now - queue_.front().since > options_.backlog_wait;
}

bool JobQueue::protect_left_behind_locked(Clock::time_point now) {
  if (backlog_locked(now)) return true;
  arm_locked(queue_.front().since + options_.left_behind_wait);
  return false;
}

JobQueue::Wakeup* JobQueue::wake_one_locked(Prefer prefer) {
  const bool others_sleep = sleeping_ > (home_sleeping_ ? 1U : 0U);
  const bool home = home_sleeping_ && (prefer == Prefer::home || !others_sleep);
  --sleeping_;  // so that the next push does not wake it again before it runs
  if (home) home_sleeping_ = false;
  wakeups_.fetch_add(1, std::memory_order_relaxed);
  return home ? &home_wakeup_ : &wakeup_;
}

JobQueue::Wakeup::Wakeup() {
  if (::sem_init(&sem_, 0, 0) != 0) throw std::system_error(errno, std::generic_category(), "sem_init");
}

JobQueue::Wakeup::~Wakeup() { ::sem_destroy(&sem_); }

void JobQueue::Wakeup::post() { ::sem_post(&sem_); }

void JobQueue::Wakeup::wait() {
  while (::sem_wait(&sem_) != 0) {
  }  // EINTR: a signal handler ran
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

std::uint64_t JobQueue::wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

std::optional<JobQueue::Clock::time_point> JobQueue::armed_until() const {
  std::lock_guard<std::mutex> lock(mu_);
  return armed_until_;
}

}  // namespace kinformer::actors
