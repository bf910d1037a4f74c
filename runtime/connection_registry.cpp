#include "apiserver/connection_registry.hpp"

#include <vector>

namespace kinformer::apiserver {

void ConnectionRegistry::add(Connection* c, std::weak_ptr<Connection> w) {
  std::lock_guard lock(mu_);
  live_[c] = Entry{std::move(w), 0};
}

void ConnectionRegistry::remove(Connection* c) {
  std::lock_guard lock(mu_);
  auto it = live_.find(c);
  if (it == live_.end()) return;
  if (it->second.idle_since) idle_.erase(it->second.idle_since);
  live_.erase(it);
}

void ConnectionRegistry::set_idle(Connection* c, bool idle) {
  std::lock_guard lock(mu_);
  auto it = live_.find(c);
  if (it == live_.end() || (it->second.idle_since != 0) == idle) return;
  if (idle) {
    it->second.idle_since = next_idle_++;
    idle_[it->second.idle_since] = c;
  } else {
    idle_.erase(it->second.idle_since);
    it->second.idle_since = 0;
  }
}

bool ConnectionRegistry::evict_oldest_idle() {
  std::shared_ptr<Connection> victim;
  {
    std::lock_guard lock(mu_);
    while (!victim && !idle_.empty()) {
      auto oldest = idle_.begin();
      auto& entry = live_[oldest->second];
      victim = entry.weak.lock();
      entry.idle_since = 0;  // not evicted twice while its close is pending
      idle_.erase(oldest);
    }
  }
  if (!victim) return false;
  victim->close();
  return true;
}

void ConnectionRegistry::close_all() {
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [ptr, entry] : live_)
      if (auto c = entry.weak.lock()) all.push_back(std::move(c));
  }
  for (auto& c : all) c->close();
}

std::size_t ConnectionRegistry::size() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

}  // namespace kinformer::apiserver
