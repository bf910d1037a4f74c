#include "apiserver/watch_window.hpp"

#include <algorithm>

namespace kinformer::apiserver {

WatchWindow::WatchWindow(std::uint64_t start, std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)), start_(start), progress_(start), newest_(start) {}

WatchWindow::Wakes WatchWindow::append(std::vector<EventPtr> events, std::uint64_t progress) {
  Wakes wake;
  std::lock_guard lock(mu_);
  for (auto& event : events) {
    if (event->resource_version <= newest_) continue;
    newest_ = event->resource_version;
    events_.push_back(std::move(event));
  }
  while (events_.size() > capacity_) {
    start_ = std::max(start_, events_.front()->resource_version);
    events_.pop_front();
  }
  progress_ = std::max({progress_, newest_, progress});
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->second.first < newest_) {
      wake.push_back(std::move(it->second.second));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  return wake;
}

bool WatchWindow::events_after(std::uint64_t after, std::size_t max, std::vector<EventPtr>& out) const {
  std::lock_guard lock(mu_);
  if (closed_ || after < start_) return false;
  auto it = std::upper_bound(events_.begin(), events_.end(), after,
                             [](std::uint64_t rv, const EventPtr& e) { return rv < e->resource_version; });
  for (std::size_t n = 0; it != events_.end() && n < max; ++it, ++n) out.push_back(*it);
  return true;
}

std::uint64_t WatchWindow::notify_after(std::uint64_t rv, std::function<void()> wake) {
  {
    std::lock_guard lock(mu_);
    if (!closed_ && newest_ <= rv && rv >= start_) {
      auto ticket = next_ticket_++;
      waiters_.emplace(ticket, std::make_pair(rv, std::move(wake)));
      return ticket;
    }
  }
  wake();
  return 0;
}

void WatchWindow::cancel_wait(std::uint64_t ticket) {
  std::lock_guard lock(mu_);
  waiters_.erase(ticket);
}

std::uint64_t WatchWindow::start() const {
  std::lock_guard lock(mu_);
  return start_;
}

std::uint64_t WatchWindow::progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

WatchWindow::Wakes WatchWindow::forget_locked() {
  events_.clear();
  Wakes wake;
  for (auto& [ticket, waiter] : waiters_) wake.push_back(std::move(waiter.second));
  waiters_.clear();
  return wake;
}

WatchWindow::Wakes WatchWindow::restart_at(std::uint64_t revision) {
  std::lock_guard lock(mu_);
  auto wake = forget_locked();
  start_ = std::max(start_, revision);
  progress_ = std::max(progress_, revision);
  newest_ = std::max(newest_, revision);
  return wake;
}

WatchWindow::Wakes WatchWindow::expire_through(std::uint64_t revision) {
  std::lock_guard lock(mu_);
  auto wake = forget_locked();
  start_ = std::max(start_, revision);
  return wake;
}

WatchWindow::Wakes WatchWindow::close() {
  std::lock_guard lock(mu_);
  auto wake = forget_locked();
  closed_ = true;
  return wake;
}

void WatchWindow::reopen(std::uint64_t start) {
  std::lock_guard lock(mu_);
  events_.clear();
  closed_ = false;
  start_ = progress_ = newest_ = start;
}

}  // namespace kinformer::apiserver
