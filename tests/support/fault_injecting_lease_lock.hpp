// tests/support/fault_injecting_lease_lock.hpp
//
// FaultInjectingLeaseLock: a leader election's LeaseLock behind a process's
// NetworkFault (network_fault.hpp), the switch its FaultInjectingListWatch
// decorators hold too, so one partition cuts the process's informers and its
// lease traffic together.
//
// Contract
//   * Transparent while the network is whole; while it is partitioned every
//     get/create/update fails at once with fault::refused() and never reaches the
//     inner lock. A request already sent when the partition starts completes.
// Threading: any thread.
#pragma once

#include <memory>
#include <string>

#include "runtime/leader_election.hpp"
#include "tests/support/network_fault.hpp"

namespace kinformer::testing {

class FaultInjectingLeaseLock final : public LeaseLock {
 public:
  FaultInjectingLeaseLock(std::shared_ptr<LeaseLock> inner, std::shared_ptr<NetworkFault> network)
      : inner_(std::move(inner)), network_(std::move(network)) {}

  void get(std::function<void(Result<std::optional<LeaseRecord>>)> done) override {
    if (!network_->refuse(done)) inner_->get(std::move(done));
  }
  void create(const LeaseRecord& record, Done done) override {
    if (!network_->refuse(done)) inner_->create(record, std::move(done));
  }
  void update(const LeaseRecord& record, Done done) override {
    if (!network_->refuse(done)) inner_->update(record, std::move(done));
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  const std::shared_ptr<LeaseLock> inner_;
  const std::shared_ptr<NetworkFault> network_;
};

}  // namespace kinformer::testing
