#include "tests/support/network_fault.hpp"

namespace kinformer::testing {

namespace fault {
Error expired() { return Error{Errc::gone, "too old resource version"}; }
Error too_large_rv() { return Error{Errc::too_large_rv, "Too large resource version"}; }
Error refused() { return Error{Errc::connection_failed, "connection refused"}; }
Error reset() { return Error{Errc::connection_failed, "connection reset by peer"}; }
Error internal() { return Error{Errc::server_error, "500 InternalError: internal error"}; }
}  // namespace fault

void NetworkFault::partition(bool cut) {
  if (partitioned_.exchange(cut) || !cut) return;
  std::vector<CutHandle> tasks;
  {
    std::lock_guard lock(mu_);
    std::vector<std::weak_ptr<std::function<void()>>> live;
    for (auto& weak : on_cut_)
      if (auto task = weak.lock()) {
        tasks.push_back(task);
        live.push_back(weak);
      }
    on_cut_.swap(live);
  }
  for (auto& task : tasks) (*task)();  // outside mu_: a task may reach back into the decorator
}

NetworkFault::CutHandle NetworkFault::on_cut(std::function<void()> task) {
  auto handle = std::make_shared<std::function<void()>>(std::move(task));
  std::lock_guard lock(mu_);
  on_cut_.push_back(handle);
  return handle;
}

}  // namespace kinformer::testing
