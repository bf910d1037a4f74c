#include "apiserver/watch_admission.hpp"

namespace kinformer::apiserver {

bool WatchAdmission::try_acquire(const std::string& client) {
  std::lock_guard lock(mu_);
  if (total_ >= limits_.max_total) return false;
  auto& mine = per_client_[client];
  if (mine >= limits_.max_per_client) {
    if (mine == 0) per_client_.erase(client);
    return false;
  }
  ++mine;
  ++total_;
  return true;
}

void WatchAdmission::release(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = per_client_.find(client);
  if (it == per_client_.end()) return;
  --total_;
  if (--it->second == 0) per_client_.erase(it);
}

}  // namespace kinformer::apiserver
