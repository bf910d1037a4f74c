#include "tests/support/fault_injecting_lease_lock.hpp"

#include "tests/support/fault_injecting_list_watch.hpp"

namespace kinformer::testing {

void FaultInjectingLeaseLock::get(std::function<void(Result<std::optional<LeaseRecord>>)> done) {
  if (partitioned_) return done(fault::refused());
  ++passed_;
  inner_->get(std::move(done));
}

void FaultInjectingLeaseLock::create(const LeaseRecord& record, Done done) {
  if (partitioned_) return done(fault::refused());
  ++passed_;
  inner_->create(record, std::move(done));
}

void FaultInjectingLeaseLock::update(const LeaseRecord& record, Done done) {
  if (partitioned_) return done(fault::refused());
  ++passed_;
  inner_->update(record, std::move(done));
}

}  // namespace kinformer::testing
