#include "runtime/leader_election.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace kinformer {

using std::chrono::milliseconds;
using TimePoint = std::chrono::system_clock::time_point;

namespace {

// A Lease's MicroTime: "2026-12-01T04:40:00.123456Z".
std::string micro_time(TimePoint t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[40];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06lldZ", static_cast<long long>(micros % 1000000));
  return std::string(out) + frac;
}

class SystemClock final : public ElectionClock {
 public:
  SystemClock() : thread_([this] { loop(); }) {}
  ~SystemClock() override {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  TimePoint now() const override { return std::chrono::system_clock::now(); }
  void after(milliseconds delay, std::function<void()> task) override {
    {
      std::lock_guard lock(mu_);
      tasks_.emplace(std::chrono::steady_clock::now() + delay, std::move(task));
    }
    cv_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (!done_) {
      if (tasks_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto due = tasks_.begin()->first;
      if (std::chrono::steady_clock::now() < due) {
        cv_.wait_until(lock, due);
        continue;
      }
      auto task = std::move(tasks_.begin()->second);
      tasks_.erase(tasks_.begin());
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::chrono::steady_clock::time_point, std::function<void()>> tasks_;  // guarded by mu_
  bool done_ = false;                                                                  // guarded by mu_
  std::thread thread_;
};

}  // namespace

std::shared_ptr<ElectionClock> system_election_clock() {
  static auto clock = std::make_shared<SystemClock>();
  return clock;
}

struct LeaderElector::State : std::enable_shared_from_this<LeaderElector::State> {
  enum class Phase { candidate, leading, stopped };

  explicit State(LeaderElectionConfig c) : config(std::move(c)) {}

  // -- tries --

  void schedule_try_locked(milliseconds delay) {
    std::weak_ptr<State> weak = shared_from_this();
    config.clock->after(delay, [weak] {
      if (auto self = weak.lock()) self->try_once();
    });
  }

  bool held_by_other_locked() const {
    return observed && !observed->holder_identity.empty() && observed->holder_identity != config.identity;
  }

  // A candidate's next try: the jittered retry, or the instant the lease it saw held
  // expires when that comes first, so a dead leader's lease is taken when it expires
  // rather than up to a retry period later.
  milliseconds next_candidate_try_locked() {
    auto delay = candidate_delay_locked();
    if (!held_by_other_locked()) return delay;
    auto until_expiry =
        std::chrono::ceil<milliseconds>(observed_time + config.lease_duration - config.clock->now());
    // Not yet expired: try exactly then. Already expired (the try failed for another
    // reason, e.g. the network): the jittered retry, never a tight loop.
    return until_expiry > milliseconds(0) && until_expiry < delay ? until_expiry : delay;
  }

  milliseconds candidate_delay_locked() {
    double r = config.random ? config.random() : std::uniform_real_distribution<double>(0, 1)(rng);
    return milliseconds(static_cast<std::int64_t>(static_cast<double>(config.retry_period.count()) *
                                                  (1 + r * config.jitter_factor)));
  }

  void try_once() {
    std::uint64_t try_epoch;
    TimePoint started;
    {
      std::lock_guard lock(mu);
      if (phase == Phase::stopped || in_flight) return;  // the running try schedules the next
      in_flight = true;
      try_epoch = epoch;
      started = config.clock->now();
    }
    auto self = shared_from_this();
    config.lock->get([self, try_epoch, started](Result<std::optional<LeaseRecord>> got) {
      self->on_got(try_epoch, started, std::move(got));
    });
  }

  void on_got(std::uint64_t try_epoch, TimePoint started, Result<std::optional<LeaseRecord>> got) {
    if (!got) return finish(try_epoch, started, false);
    auto self = shared_from_this();
    auto written = [self, try_epoch, started](Result<LeaseRecord> r) {
      self->on_written(try_epoch, started, std::move(r));
    };
    LeaseRecord next;
    bool refused = false;
    next.holder_identity = config.identity;
    next.lease_duration_seconds =
        std::chrono::duration_cast<std::chrono::seconds>(config.lease_duration).count();
    {
      std::lock_guard lock(mu);
      const auto now = config.clock->now();
      next.renew_time = micro_time(now);
      if (!got->has_value()) {
        next.acquire_time = next.renew_time;
      } else {
        const LeaseRecord& old = **got;
        if (!observed || !old.same_holding(*observed)) {
          // The change was written after the server answered our previous look at the
          // record, which we sent at seen_start: count from there while that look is
          // recent enough for the contract's inequality, else from now (client-go).
          const bool recent = observed && now - seen_start < config.lease_duration - config.renew_deadline;
          observed = old;
          observed_time = recent ? seen_start : now;
          note_leader_locked(old.holder_identity);
        }
        seen_start = started;
        refused = held_by_other_locked() && observed_time + config.lease_duration > now;
        const bool ours = old.holder_identity == config.identity;
        next.acquire_time = ours ? old.acquire_time : next.renew_time;
        next.lease_transitions = ours ? old.lease_transitions : old.lease_transitions + 1;
        next.resource_version = old.resource_version;
      }
    }
    if (refused) return finish(try_epoch, started, false);
    if (!got->has_value())
      config.lock->create(next, std::move(written));
    else
      config.lock->update(next, std::move(written));
  }

  void on_written(std::uint64_t try_epoch, TimePoint started, Result<LeaseRecord> r) {
    if (r) {
      std::lock_guard lock(mu);
      observed = r.value();
      observed_time = config.clock->now();
      seen_start = started;  // the server applied our write after this
      note_leader_locked(config.identity);
    }
    finish(try_epoch, started, static_cast<bool>(r));
  }

  void finish(std::uint64_t try_epoch, TimePoint started, bool ok) {
    {
      std::lock_guard lock(mu);
      in_flight = false;
      if (phase == Phase::stopped) {
        idle.notify_all();
        return;
      }
      if (try_epoch != epoch) {
        // leadership was lost while this try ran: its answer is stale
        schedule_try_locked(phase == Phase::leading ? config.retry_period : next_candidate_try_locked());
      } else if (phase == Phase::candidate) {
        if (ok) {
          phase = Phase::leading;
          last_renew_start = started;
          ++epoch;
          post_locked(config.on_started_leading);
          arm_deadline_locked();
          schedule_try_locked(config.retry_period);
        } else {
          schedule_try_locked(next_candidate_try_locked());
        }
      } else {
        if (ok) last_renew_start = started;
        schedule_try_locked(config.retry_period);
      }
    }
    drain();
  }

  // -- the renew deadline --

  void arm_deadline_locked() {
    std::weak_ptr<State> weak = shared_from_this();
    const std::uint64_t leading_epoch = epoch;
    auto wait = std::chrono::duration_cast<milliseconds>(last_renew_start + config.renew_deadline -
                                                         config.clock->now());
    config.clock->after(std::max(wait, milliseconds(0)), [weak, leading_epoch] {
      if (auto self = weak.lock()) self->deadline(leading_epoch);
    });
  }

  void deadline(std::uint64_t leading_epoch) {
    {
      std::lock_guard lock(mu);
      if (phase != Phase::leading || epoch != leading_epoch) return;
      if (config.clock->now() < last_renew_start + config.renew_deadline) {
        arm_deadline_locked();  // renewed since this timer was set
        return;
      }
      phase = Phase::candidate;
      ++epoch;
      post_locked(config.on_stopped_leading);
      if (!in_flight) schedule_try_locked(next_candidate_try_locked());
    }
    drain();
  }

  // -- callbacks, one at a time in order --

  void note_leader_locked(const std::string& holder) {
    if (holder == reported_leader) return;
    reported_leader = holder;
    if (holder.empty() || !config.on_new_leader) return;
    auto cb = config.on_new_leader;
    post_locked([cb, holder] { cb(holder); });
  }

  void post_locked(std::function<void()> cb) {
    if (cb) pending.push_back(std::move(cb));
  }

  void drain() {
    std::unique_lock lock(mu);
    if (draining) return;
    draining = true;
    while (!pending.empty() && phase != Phase::stopped) {
      auto cb = std::move(pending.front());
      pending.pop_front();
      lock.unlock();
      cb();
      lock.lock();
    }
    pending.clear();
    draining = false;
    idle.notify_all();
  }

  void stop() {
    bool was_leading;
    std::optional<LeaseRecord> held;
    {
      std::unique_lock lock(mu);
      if (phase == Phase::stopped) return;
      was_leading = phase == Phase::leading;
      phase = Phase::stopped;
      ++epoch;
      const auto deadline = std::chrono::steady_clock::now() + config.release_timeout;
      idle.wait_until(lock, deadline, [&] { return !draining && !in_flight; });
      if (observed && observed->holder_identity == config.identity) held = observed;
    }
    if (was_leading && config.on_stopped_leading) config.on_stopped_leading();
    if (!held) return;
    LeaseRecord release = *held;
    const auto now = micro_time(config.clock->now());
    release.holder_identity.clear();
    release.lease_duration_seconds = 1;
    release.acquire_time = now;
    release.renew_time = now;
    auto done = std::make_shared<std::promise<void>>();
    auto future = done->get_future();
    config.lock->update(release, [done](Result<LeaseRecord>) { done->set_value(); });
    future.wait_for(config.release_timeout);
  }

  LeaderElectionConfig config;
  mutable std::mutex mu;
  std::condition_variable idle;               // signalled when a try or the callback drain ends
  Phase phase = Phase::candidate;             // guarded by mu
  std::uint64_t epoch = 0;                    // guarded by mu; bumped on every phase change
  bool in_flight = false;                     // guarded by mu; at most one try at a time
  std::optional<LeaseRecord> observed;        // guarded by mu; the record last read or written
  TimePoint observed_time;                    // guarded by mu; whence `observed`'s lease counts (contract)
  TimePoint seen_start;                       // guarded by mu; start of the last try whose answer showed `observed`
  TimePoint last_renew_start;                 // guarded by mu; start of the last successful try while leading
  std::string reported_leader;                // guarded by mu
  std::deque<std::function<void()>> pending;  // guarded by mu; callbacks not yet run
  bool draining = false;                      // guarded by mu; one thread runs `pending`
  std::mt19937 rng{std::random_device{}()};   // guarded by mu
};

Result<std::shared_ptr<LeaderElector>> LeaderElector::start(LeaderElectionConfig config) {
  if (!config.lock) return {Errc::invalid_input, "leader election needs a lock"};
  if (config.identity.empty()) return {Errc::invalid_input, "leader election needs an identity"};
  if (config.lease_duration <= config.renew_deadline)
    return {Errc::invalid_input, "leaseDuration must be greater than renewDeadline"};
  if (config.renew_deadline <= config.retry_period)
    return {Errc::invalid_input, "renewDeadline must be greater than retryPeriod"};
  if (config.retry_period.count() < 1 || config.jitter_factor < 0)
    return {Errc::invalid_input, "retryPeriod must be positive and the jitter factor not negative"};
  if (!config.clock) config.clock = system_election_clock();
  auto state = std::make_shared<State>(std::move(config));
  state->try_once();
  return std::shared_ptr<LeaderElector>(new LeaderElector(std::move(state)));
}

LeaderElector::~LeaderElector() { stop(); }

bool LeaderElector::is_leader() const {
  std::lock_guard lock(state_->mu);
  return state_->phase == State::Phase::leading;
}

std::string LeaderElector::leader() const {
  std::lock_guard lock(state_->mu);
  return state_->observed ? state_->observed->holder_identity : std::string();
}

bool LeaderElector::busy() const {
  std::lock_guard lock(state_->mu);
  // pending: finish() and deadline() queue callbacks and release the lock before drain() runs
  // them; a stopped elector runs none.
  return state_->in_flight || state_->draining ||
         (!state_->pending.empty() && state_->phase != State::Phase::stopped);
}

void LeaderElector::stop() { state_->stop(); }

}  // namespace kinformer
