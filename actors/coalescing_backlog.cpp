#include "actors/coalescing_backlog.hpp"

#include <utility>

namespace kinformer::actors {
namespace {

int initial(const Notification& n) {
  return n.type == NotificationType::added && n.is_in_initial_list ? 1 : 0;
}

}  // namespace

int CoalescingBacklog::push(const Notification& n) {
  auto it = pending_.find(n.key());
  if (it == pending_.end()) {
    order_.emplace_back(n.key());
    it = pending_.emplace(std::string_view(order_.back()), Pending{}).first;
  }
  auto& p = it->second;
  switch (n.type) {
    case NotificationType::deleted: {
      if (p.current && p.current->type == NotificationType::added) {
        // The group never took in this object: the add and the delete cancel out.
        int change = -initial(*p.current);
        p.current.reset();
        --size_;
        return change;
      }
      if (p.current) {  // an update: the group had seen its old state
        p.current.reset();
        --size_;
      }
      if (!p.deleted) ++size_;
      p.deleted = n;
      return 0;
    }
    case NotificationType::added: {
      if (!p.current) ++size_;
      int change = initial(n) - (p.current ? initial(*p.current) : 0);
      p.current = n;
      return change;
    }
    case NotificationType::updated: {
      if (!p.current) {
        p.current = n;
        ++size_;
        return 0;
      }
      // Keep the pending type (an add stays an add, an update keeps its old side)
      // and take the newest state.
      p.current->object = n.object;
      p.current->typed_object = n.typed_object;
      return 0;
    }
  }
  return 0;
}

std::optional<Notification> CoalescingBacklog::pop() {
  while (!order_.empty()) {
    auto it = pending_.find(order_.front());
    auto& p = it->second;
    std::optional<Notification> out;
    if (p.deleted) {
      out = std::move(p.deleted);
      p.deleted.reset();
    } else if (p.current) {
      out = std::move(p.current);
      p.current.reset();
    }
    if (!p.deleted && !p.current) {
      pending_.erase(it);
      order_.pop_front();  // after the erase: the map's key views this string
    }
    if (out) {
      --size_;
      return out;
    }
  }
  return std::nullopt;
}

void CoalescingBacklog::clear() {
  pending_.clear();
  order_.clear();
  size_ = 0;
}

}  // namespace kinformer::actors
