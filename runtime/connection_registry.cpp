#include "runtime/connection_registry.hpp"

#include <algorithm>
#include <vector>

namespace kinformer {

void ConnectionRegistry::set_limits(ConnectionLimits limits) {
  std::lock_guard lock(mu_);
  limits_ = limits;
}

bool ConnectionRegistry::admit(const std::string& client) {
  std::shared_ptr<Connection> victim;
  {
    std::lock_guard lock(mu_);
    const auto per_client = std::min(limits_.max_per_client, limits_.max_total);
    auto it = clients_.find(client);
    if (it != clients_.end() && it->second.count >= per_client) {
      // The client's own waiting connections make room, never another client's.
      if (it->second.waiting.empty()) return false;
      victim = evict_locked(it->second.waiting.begin()->second);
    } else if (counted_ >= limits_.max_total) {
      if (waiting_.empty()) return false;
      victim = evict_locked(waiting_.begin()->second);
    }
  }
  if (victim) victim->close();
  return true;
}

void ConnectionRegistry::add(Connection* c, std::weak_ptr<Connection> w, const std::string& client) {
  std::lock_guard lock(mu_);
  auto& entry = live_[c];
  entry.weak = std::move(w);
  entry.client = client;
  ++clients_[client].count;
  ++counted_;
}

void ConnectionRegistry::stop_waiting_locked(Entry& entry) {
  if (entry.waiting == 0) return;
  waiting_.erase(entry.waiting);
  if (auto it = clients_.find(entry.client); it != clients_.end()) it->second.waiting.erase(entry.waiting);
  entry.waiting = 0;
}

// Uncounts `c` at once, so a flood evicts one connection per newcomer, not the same one again.
std::shared_ptr<Connection> ConnectionRegistry::evict_locked(Connection* c) {
  auto& entry = live_.at(c);
  stop_waiting_locked(entry);
  entry.evicted = true;
  --counted_;
  auto client = clients_.find(entry.client);
  if (--client->second.count == 0) clients_.erase(client);
  return entry.weak.lock();  // null: it is being destroyed, which closes it anyway
}

void ConnectionRegistry::remove(Connection* c) {
  std::lock_guard lock(mu_);
  auto it = live_.find(c);
  if (it == live_.end()) return;
  if (!it->second.evicted) {
    stop_waiting_locked(it->second);
    --counted_;
    auto client = clients_.find(it->second.client);
    if (--client->second.count == 0) clients_.erase(client);
  }
  live_.erase(it);
}

void ConnectionRegistry::set_phase(Connection* c, Phase phase) {
  std::lock_guard lock(mu_);
  auto it = live_.find(c);
  if (it == live_.end() || it->second.evicted) return;
  auto& entry = it->second;
  if (phase == Phase::busy) return stop_waiting_locked(entry);
  if (entry.waiting != 0) return;  // idle to partial: still the same wait
  entry.waiting = next_wait_++;
  waiting_.emplace(entry.waiting, c);
  clients_[entry.client].waiting.emplace(entry.waiting, c);
}

bool ConnectionRegistry::evict_one() {
  std::shared_ptr<Connection> victim;
  {
    std::lock_guard lock(mu_);
    while (!victim && !waiting_.empty()) victim = evict_locked(waiting_.begin()->second);
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
  return counted_;
}

}  // namespace kinformer
