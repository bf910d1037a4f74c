#include "actors/processor_state.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "actors/every_actor.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors::detail {

void ProcessorState::set_upstream(ProcessorUpstream sink) {
  upstream = std::move(sink);
  send_over(self, upstream, credit_atom::value, options.max_buffered_keys);
}

void ProcessorState::distribute(const NotificationBatchPtr& batch, std::size_t credit) {
  const auto id = ++next_ticket;
  tickets[id] = Ticket{credit, 1, self->clock().now(), std::nullopt};  // held while distributed
  for (auto& [key, group] : groups)
    for (std::uint32_t i = 0; i < batch->items.size(); ++i) enter(group, key, batch, i, id);
  for (auto& [key, group] : groups) pump_group(group);
  drop_holder(id, false);
}

void ProcessorState::enter(Group& group, const std::string& key, const NotificationBatchPtr& batch, std::uint32_t index,
           TicketId ticket) {
  const auto& n = batch->items[index];
  if (!group.loose && group.interior >= options.group_window) cut_loose(group, key, "its window is full");
  if (group.loose) {
    const auto before = group.backlog.size();
    group.initial_pending += group.backlog.push(n);
    if (group.metrics.coalesced && group.backlog.size() <= before)
      group.metrics.coalesced->inc(static_cast<double>(before + 1 - group.backlog.size()));
    note_backlog(group);
    publish_initial(group);
    return;
  }
  auto hop = entry_hop(*group.route, n);
  if (hop == no_hop) return;
  Item item{batch, index, group.route, hop, 0, ticket};
  ++group.interior;
  hold(group, key, ticket);
  if (item.initial()) {
    ++group.initial_pending;
    publish_initial(group);
  }
  members.at((*group.route)[hop]).queue.push_back(std::move(item));
}

void ProcessorState::hold(Group& group, const std::string& key, TicketId id) {
  if (group.held[id]++ > 0) return;
  auto& ticket = tickets.at(id);
  ++ticket.holders;
  arm_lag(group, key, ticket.entered + options.stall_timeout);
}

void ProcessorState::release(Group& group, const Item& item) {
  auto found = group.held.find(item.ticket);
  if (found == group.held.end() || --found->second > 0) return;  // none held: cut loose since
  group.held.erase(found);
  drop_holder(item.ticket, true);
}

void ProcessorState::drop_holder(TicketId id, bool finished) {
  auto found = tickets.find(id);
  auto& ticket = found->second;
  if (--ticket.holders == 0) {
    if (upstream && ticket.credit > 0) send_over(self, upstream, credit_atom::value, ticket.credit);
    tickets.erase(found);
    return;
  }
  if (!finished || ticket.waited_since) return;
  ticket.waited_since = self->clock().now();
  for (auto& [key, group] : groups)
    if (group.held.count(id) > 0) arm_lag(group, key, *ticket.waited_since + options.lag_timeout);
}

void ProcessorState::cut_loose(Group& group, const std::string& key, const std::string& why) {
  group.loose = true;
  ++options.status->groups_cut_loose;
  auto held = std::move(group.held);
  group.held.clear();
  for (const auto& [id, count] : held) drop_holder(id, false);
  log::debug("processor", "group cut loose: " + why,
             {{"informer", options.metrics ? options.metrics->informer() : std::string()},
              {"resource", options.metrics ? options.metrics->resource() : std::string()},
              {"group", key}});
}

void ProcessorState::arm_lag(Group& group, const std::string& key, TimePoint deadline) {
  if (group.lag_deadline && *group.lag_deadline <= deadline) return;
  group.lag_deadline = deadline;
  auto delay = std::max(deadline - self->clock().now(), TimePoint::duration::zero());
  self->delayed_send(self, delay, lag_atom::value, key, ++group.lag_gen);
}

void ProcessorState::on_lag(const std::string& key, std::uint64_t gen) {
  auto found = groups.find(key);
  if (found == groups.end() || found->second.lag_gen != gen) return;
  auto& group = found->second;
  group.lag_deadline.reset();
  if (group.held.empty()) return;
  const auto now = self->clock().now();
  std::optional<TimePoint> next;
  for (const auto& [id, count] : group.held) {
    const auto& ticket = tickets.at(id);
    auto deadline = ticket.entered + options.stall_timeout;
    if (ticket.waited_since) deadline = std::min(deadline, *ticket.waited_since + options.lag_timeout);
    if (deadline <= now) {
      cut_loose(group, key, deadline == ticket.entered + options.stall_timeout ? "stalled" : "others wait for it");
      return;
    }
    next = next ? std::min(*next, deadline) : deadline;
  }
  arm_lag(group, key, *next);
}

void ProcessorState::note_backlog(const Group& group) {
  auto size = static_cast<std::uint64_t>(group.backlog.size());
  if (size > options.status->backlog_max) options.status->backlog_max = size;
  if (group.metrics.backlog) group.metrics.backlog->set(static_cast<double>(size));
}

}  // namespace kinformer::actors::detail
