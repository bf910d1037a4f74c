// tests/support/network_fault.hpp
//
// NetworkFault: the network between one simulated process and the API server, as
// one switch that every fault decorator of that process holds
// (FaultInjectingListWatch for its informers, FaultInjectingLeaseLock for its
// leader election), so that one partition() cuts all its traffic together; and
// the errors a real API server or network produces, by name (testing::fault).
//
// Usage
//   auto network = std::make_shared<testing::NetworkFault>();
//   FaultInjectingListWatch pods(inner, {.network = network});
//   auto lock = std::make_shared<FaultInjectingLeaseLock>(lease_lock, network);
//   network->partition(true);   // lists, watches and lease requests all fail
//
// Contract
//   * While partitioned, every request through a decorator holding the switch fails
//     at once with fault::refused() and never reaches the server; a request already
//     sent completes. partition(true) also closes every open watch through those
//     decorators with fault::reset() (on_cut()). partition(false) heals: requests
//     pass again; a closed watch stays closed (the client opens a new one).
//   * on_cut(task): `task` runs on the thread that calls partition(true), each time
//     a partition starts, until the returned handle is dropped. A decorator drops its
//     handle in its destructor, which must not overlap a partition() call.
// Threading: any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/result.hpp"

namespace kinformer::testing {

/// The errors a real API server or network produces, by name.
namespace fault {
Error expired();       // 410 Expired: "too old resource version"
Error too_large_rv();  // 504 with a ResourceVersionTooLarge cause
Error refused();       // the TCP connection was refused
Error reset();         // the connection was reset mid-stream
Error internal();      // 500 InternalError
}  // namespace fault

class NetworkFault {
 public:
  using CutHandle = std::shared_ptr<std::function<void()>>;

  void partition(bool cut);
  bool partitioned() const { return partitioned_; }
  [[nodiscard]] CutHandle on_cut(std::function<void()> task);

  /// While partitioned: answers `done` with fault::refused() and returns true (the
  /// request must not go on); else false.
  template <class Done>
  bool refuse(Done& done) const {
    if (!partitioned_) return false;
    done(fault::refused());
    return true;
  }

 private:
  std::atomic<bool> partitioned_{false};
  std::mutex mu_;
  std::vector<std::weak_ptr<std::function<void()>>> on_cut_;  // guarded by mu_; expired ones pruned
};

}  // namespace kinformer::testing
