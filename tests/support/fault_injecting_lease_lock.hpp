// tests/support/fault_injecting_lease_lock.hpp
//
// FaultInjectingLeaseLock: the fault decorator of the HTTP ListWatch tests
// (fault_injecting_list_watch.hpp) for a leader election's LeaseLock: it cuts one
// candidate off the API server (a network partition) or lets it through, and
// counts the requests that reached the server.
//
// Contract
//   * Transparent until partition(true): from then on every get/create/update fails
//     at once with testing::fault::refused() and never reaches the inner lock, until
//     partition(false). A request already sent when the partition starts completes.
// Threading: any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "runtime/leader_election.hpp"

namespace kinformer::testing {

class FaultInjectingLeaseLock final : public LeaseLock {
 public:
  explicit FaultInjectingLeaseLock(std::shared_ptr<LeaseLock> inner) : inner_(std::move(inner)) {}

  void partition(bool cut) { partitioned_ = cut; }
  /// Requests that reached the inner lock.
  std::uint64_t passed() const { return passed_; }

  void get(std::function<void(Result<std::optional<LeaseRecord>>)> done) override;
  void create(const LeaseRecord& record, Done done) override;
  void update(const LeaseRecord& record, Done done) override;
  std::string describe() const override { return inner_->describe(); }

 private:
  const std::shared_ptr<LeaseLock> inner_;
  std::atomic<bool> partitioned_{false};
  std::atomic<std::uint64_t> passed_{0};
};

}  // namespace kinformer::testing
