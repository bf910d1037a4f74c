// actors/leader_gated_handler.hpp
//
// LeaderGatedHandler: runs an informer's handler only while this replica leads
// (controller-runtime's leader-election switch; issue 17). The informer itself runs
// on every replica, so a new leader starts with a warm cache.
//
// Usage
//   kinformer::LeaderGatedHandler gate(informer, funcs);
//   LeaderElectionConfig config;  // runtime/leader_election.hpp
//   gate.attach(config);          // before LeaderElector::start(config)
//   auto elector = LeaderElector::start(std::move(config));
//
// Contract
//   * open() registers the handler (add_handler): like any handler added late it
//     first gets the current cache replayed as adds (initial-list flag set), then
//     every change; close() removes it, so nothing is delivered after close()
//     returns except the batch already in flight (SharedInformer::remove_handler).
//   * open() while open and close() while closed do nothing.
//   * attach() chains open()/close() before the config's own started/stopped
//     callbacks; the gate must outlive the elector started from that config.
//   * The destructor closes.
// Threading: any thread (one mutex).
// Errors: open() reports add_handler's error (Errc::stopped after the informer stopped).
#pragma once

#include <mutex>

#include "actors/shared_informer.hpp"
#include "runtime/leader_election.hpp"

namespace kinformer {

class LeaderGatedHandler {
 public:
  LeaderGatedHandler(SharedInformer& informer, HandlerFuncs funcs, HandlerOptions options = {});
  ~LeaderGatedHandler();
  LeaderGatedHandler(const LeaderGatedHandler&) = delete;
  LeaderGatedHandler& operator=(const LeaderGatedHandler&) = delete;

  [[nodiscard]] Result<void> open();
  void close();
  bool is_open() const;

  /// Makes `config`'s started-leading open the gate and stopped-leading close it.
  void attach(LeaderElectionConfig& config);

 private:
  SharedInformer& informer_;
  const HandlerFuncs funcs_;
  const HandlerOptions options_;
  mutable std::mutex mu_;
  HandlerRegistration registration_;  // guarded by mu_; valid() iff open
};

}  // namespace kinformer
