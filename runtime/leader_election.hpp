// runtime/leader_election.hpp
//
// LeaderElector: exactly one of several replicas acts, by holding a
// coordination.k8s.io/v1 Lease (client-go tools/leaderelection, issue 17).
//
// Usage
//   LeaderElectionConfig config;
//   config.identity = hostname;
//   config.lock = http::lease_lock(client, "kube-system", "my-controller");  // runtime/http/lease_lock.hpp
//   config.on_started_leading = [&] { informer.run(); };
//   config.on_stopped_leading = [&] { /* stop acting at once */ };
//   auto elector = LeaderElector::start(std::move(config));
//   ...
//   elector->stop();  // releases the lease when leading
//
// Contract (client-go's algorithm, with a tighter count of another's lease)
//   * A candidate tries to acquire every retry_period, stretched by up to
//     jitter_factor (client-go: 1.2); a leader renews every retry_period.
//   * One try: get the Lease; absent → create it held by us. Present and held by
//     another candidate whose lease has not expired by our count (below) → fail.
//     Otherwise update it with our holderIdentity, renewTime = now, acquireTime kept
//     when we already held it (else now and leaseTransitions + 1), sent with the
//     resourceVersion we read: a concurrent writer makes it fail (409), never
//     overwrite.
//   * Counting another's lease, on our own clock (never the server's renewTime): a
//     read that shows the record changed was answered at N; the change was applied
//     after the server answered our previous look at the record (a read, or our own
//     successful write), which we sent at S. The lease counts from T = S when
//     N - S < lease_duration - renew_deadline, else from T = N (client-go's count);
//     it expires at T + lease_duration. A candidate that saw the lease held tries
//     again at the sooner of its jittered retry and that expiry, so it takes a dead
//     leader's lease at the expiry, not up to a retry later.
//   * A leader whose last successful renewal STARTED renew_deadline ago stops
//     leading at that instant, even with a renewal still in flight. After stopping
//     it goes back to trying to acquire.
//   * No two leaders at once. Say F takes the lease at t_F >= T + lease_duration
//     (its update succeeded) after reading the record of L's last renewal before
//     it, which L began at R; L stops leading at R + renew_deadline. The server
//     applied that renewal after L began it and before it answered F's read:
//     R < N. F's update carried that record's resourceVersion, so L renewed no
//     more in between. If T = S: N - S < lease_duration - renew_deadline, so
//       R + renew_deadline < N + renew_deadline < S + lease_duration <= t_F;
//     if T = N: R + renew_deadline < N + lease_duration <= t_F.
//     Either way L stopped strictly before F started. (As in client-go, the
//     processes' clocks may be offset but must run at the same rate.)
//   * Handover after a leader dies (its last renewal applied at W, before the
//     death): a follower whose previous look S came before W and whose next
//     answer came within lease_duration - renew_deadline of S (always at the
//     defaults: tries at most 2 s x 2.2 = 4.4 s apart, plus one request, < 5 s)
//     counts from S < W, so it takes the lease by S + lease_duration, i.e. less
//     than lease_duration (15 s) plus one request after the death: within the
//     issue's bound of lease_duration + retry_period (17 s).
//   * Callbacks: on_started_leading, on_stopped_leading (exactly once after each
//     start), on_new_leader(identity) whenever the observed holder changes. They run
//     one at a time in order, on a thread of the lock or the clock; they must be
//     prompt and must not call stop().
//   * stop(): no callback starts after it returns; a leader calls
//     on_stopped_leading and then releases the lease (holderIdentity "",
//     leaseDurationSeconds 1) so that another candidate takes over at its next try.
//     stop() waits up to release_timeout for the release.
// Threading: every member may be called from any thread (one mutex).
// Errors: lock failures only delay; config errors are Errc::invalid_input from start().
// Not here: the HTTP Lease access (runtime/http/lease_lock.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/result.hpp"

namespace kinformer {

/// The holder fields of a Lease's spec, plus its resourceVersion.
struct LeaseRecord {
  std::string holder_identity;  // "" = released
  std::int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // RFC 3339 with microseconds (MicroTime)
  std::string renew_time;
  std::int64_t lease_transitions = 0;
  std::string resource_version;  // the version read; sent back on update

  bool same_holding(const LeaseRecord& o) const {
    return holder_identity == o.holder_identity && lease_duration_seconds == o.lease_duration_seconds &&
           acquire_time == o.acquire_time && renew_time == o.renew_time &&
           lease_transitions == o.lease_transitions;
  }
};

/// Where the Lease lives. Callbacks run exactly once, on any thread.
class LeaseLock {
 public:
  using Done = std::function<void(Result<LeaseRecord>)>;
  virtual ~LeaseLock() = default;
  /// The current record; nullopt when the Lease does not exist.
  virtual void get(std::function<void(Result<std::optional<LeaseRecord>>)> done) = 0;
  virtual void create(const LeaseRecord& record, Done done) = 0;
  /// Replaces the record if the Lease is still at record.resource_version (else an error).
  virtual void update(const LeaseRecord& record, Done done) = 0;
  /// "namespace/name", for messages.
  virtual std::string describe() const = 0;
};

/// Time as the elector sees it; tests substitute a manual clock.
class ElectionClock {
 public:
  virtual ~ElectionClock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  /// Runs `task` once, `delay` from now, on a thread of the clock.
  virtual void after(std::chrono::milliseconds delay, std::function<void()> task) = 0;
};

/// The wall clock with one timer thread (shared by every elector that uses it).
std::shared_ptr<ElectionClock> system_election_clock();

struct LeaderElectionConfig {
  std::shared_ptr<LeaseLock> lock;                  // required
  std::string identity;                             // required: unique per candidate
  std::chrono::milliseconds lease_duration{15000};  // client-go LeaseDuration
  std::chrono::milliseconds renew_deadline{10000};  // client-go RenewDeadline; < lease_duration
  std::chrono::milliseconds retry_period{2000};     // client-go RetryPeriod; < renew_deadline
  double jitter_factor = 1.2;                       // client-go JitterFactor for acquire tries
  std::chrono::milliseconds release_timeout{5000};  // stop() waits this long for the release
  std::shared_ptr<ElectionClock> clock;             // null = system_election_clock()
  std::function<double()> random;                   // uniform [0,1) for the jitter; null = std::mt19937
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string&)> on_new_leader;
};

class LeaderElector {
 public:
  /// Validates the config and starts trying at once.
  [[nodiscard]] static Result<std::shared_ptr<LeaderElector>> start(LeaderElectionConfig config);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  bool is_leader() const;
  /// The holder this candidate last observed ("" before the first read or when released).
  std::string leader() const;
  /// True while a request to the lock is outstanding or its callbacks have not all run (tests
  /// step a manual clock only when idle, and read what the callbacks recorded).
  bool busy() const;
  /// See the contract: stop leading, release, no callbacks afterwards.
  void stop();

  struct State;

 private:
  explicit LeaderElector(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace kinformer
