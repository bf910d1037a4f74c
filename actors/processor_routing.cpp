#include "actors/processor_state.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <caf/duration.hpp>

#include "actors/every_actor.hpp"
#include "actors/tsan.hpp"

namespace kinformer::actors::detail {

void ProcessorState::pump_group(Group& group) {
  if (!group.backlog.empty() && group.interior < options.group_window) {
    auto taken = std::make_shared<NotificationBatch>();  // one batch: a handler takes it whole
    while (!group.backlog.empty() && group.interior + taken->items.size() < options.group_window)
      taken->items.push_back(*group.backlog.pop());
    NotificationBatchPtr batch = std::move(taken);
    for (std::uint32_t i = 0; i < batch->items.size(); ++i) {
      Item item{batch, i, group.route, 0, 0, 0};
      item.hop = entry_hop(*group.route, item.get());
      if (item.hop == no_hop) {
        if (item.initial()) --group.initial_pending;
        continue;
      }
      ++group.interior;
      members.at((*group.route)[item.hop]).queue.push_back(std::move(item));
    }
  }
  // Caught up: it holds credit again (earlier, a stuck group would hold back each batch in turn).
  if (group.loose && group.backlog.empty() && group.interior == 0) group.loose = false;
  publish_initial(group);
  if (group.metrics.backlog) group.metrics.backlog->set(static_cast<double>(group.backlog.size()));
  // A forward may reach a hop pumped earlier in this round (an older route's order).
  for (bool progress = true; progress;) {
    progress = false;
    for (auto id : *group.route) progress = pump(members.at(id)) || progress;
  }
}

std::uint32_t ProcessorState::entry_hop(const Route& route, const Notification& n) {
  auto hop = next_hop(route, 0);
  if (hop != no_hop && route.size() == 1 && !takes(members.at(route[hop]), n)) return no_hop;
  return hop;
}

std::uint32_t ProcessorState::next_hop(const Route& route, std::uint32_t from) {
  for (auto p = from; p < route.size(); ++p) {
    auto found = members.find(route[p]);
    if (found != members.end() && !found->second.leaving()) return p;
  }
  return no_hop;
}

bool ProcessorState::takes(Member& member, const Notification& n) {
  if (n.is_sync() && !syncing(member)) return false;
  try {
    return member.options().predicate(n);
  } catch (const std::exception& e) {
    log(member, "predicate threw on " + std::string(n.key()) + ": " + e.what() + " (not matched)", n.key());
  } catch (...) {
    log(member, "predicate threw on " + std::string(n.key()) + " (not matched)", n.key());
  }
  return false;
}

void ProcessorState::forward(Member& from, Item item) {
  if (!item.route) {  // a replay: for this handler only
    --from.replay_pending;
    publish_initial(groups.at(from.group));
    return;
  }
  auto hop = next_hop(*item.route, item.hop + 1);
  if (hop == no_hop) {
    leave(groups.at(from.group), item);
    return;
  }
  item.hop = hop;
  item.attempts = 0;
  members.at((*item.route)[hop]).queue.push_back(std::move(item));
}

void ProcessorState::finish(Member& member, const Item& item) {
  if (!item.route) {
    --member.replay_pending;
    publish_initial(groups.at(member.group));
    return;
  }
  leave(groups.at(member.group), item);
}

void ProcessorState::leave(Group& group, const Item& item) {
  --group.interior;
  if (item.ticket != 0) release(group, item);
  if (item.initial()) {
    --group.initial_pending;
    publish_initial(group);
  }
}

void ProcessorState::publish_initial(Group& group) {
  for (auto id : *group.route) {
    auto& member = members.at(id);
    member.registration->status->pending_initial = group.initial_pending + member.replay_pending;
  }
}

bool ProcessorState::pump(Member& member) {
  bool progress = false;
  while (!member.in_flight && !member.backing_off() && !member.queue.empty() && member.actor) {
    progress = true;
    InFlight flight;
    std::size_t taken = 0;
    while (!member.queue.empty() && taken < options.max_batch) {
      bool take = !member.queue.front().route || takes(member, member.queue.front().get());
      flight.items.push_back(std::move(member.queue.front()));
      flight.sent.push_back(take);
      member.queue.pop_front();
      if (take) ++taken;
    }
    if (taken == 0) {  // all pass by: on to the next hop, in order
      for (auto& item : flight.items) forward(member, std::move(item));
      continue;
    }
    send(member, std::move(flight));
  }
  return progress;
}

void ProcessorState::send(Member& member, InFlight flight) {
  flight.seq = ++next_seq;
  flight.actor = member.actor;
  auto batch = batch_of(flight);
  flight.sent_at = std::chrono::steady_clock::now();
  if (member.metrics.deliveries) member.metrics.deliveries->inc(static_cast<double>(batch->items.size()));
  auto id = member.id();
  auto seq = flight.seq;
  auto timeout = member.supervision().hop_timeout;
  member.in_flight = std::move(flight);
  detail::handing_over();
  self->request(member.actor, timeout.count() > 0 ? caf::duration{timeout} : caf::duration{caf::infinite},
                notify_atom::value, id, std::move(batch))
      .then(handed_off(
                [=](handled_atom, RegistrationId, const HopReport& report) { answered(id, seq, report); }),
            handed_off([=](caf::error& err) { request_failed(id, seq, err); }));
}

NotificationBatchPtr ProcessorState::batch_of(const InFlight& flight) {
  const auto& items = flight.items;
  const auto& first = items.front().batch;
  bool whole = first->items.size() == items.size();
  for (std::size_t i = 0; whole && i < items.size(); ++i)
    whole = flight.sent[i] && items[i].batch == first && items[i].index == i;
  if (whole) return first;
  auto batch = std::make_shared<NotificationBatch>();
  for (std::size_t i = 0; i < items.size(); ++i)
    if (flight.sent[i]) batch->items.push_back(items[i].get());
  return batch;
}

void ProcessorState::answered(RegistrationId id, std::uint64_t seq, const HopReport& report) {
  detail::taking_over(report.failure.data());  // the handler's handing_over(): handler.cpp
  detail::taking_over(report.stopped.data());
  auto found = members.find(id);
  if (found == members.end() || !found->second.in_flight || found->second.in_flight->seq != seq) return;
  auto& member = found->second;
  auto flight = std::move(*member.in_flight);
  member.in_flight.reset();
  ++member.registration->status->handled_batches;
  if (member.metrics.batch_seconds)
    member.metrics.batch_seconds->observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - flight.sent_at).count());
  end_retiring(member);
  // Items before the failed position are done; from it on they go to on_failure.
  std::size_t first_unhandled = flight.items.size();
  std::uint32_t position = 0;  // in the batch sent
  auto stopped = report.stopped.begin();
  for (std::size_t i = 0; i < flight.items.size(); ++i) {
    if (!flight.sent[i]) {
      forward(member, std::move(flight.items[i]));
      continue;
    }
    if (position == report.failed_at) {
      first_unhandled = i;
      break;
    }
    while (stopped != report.stopped.end() && *stopped < position) ++stopped;
    if (stopped != report.stopped.end() && *stopped == position)
      finish(member, flight.items[i]);
    else
      forward(member, std::move(flight.items[i]));
    ++position;
  }
  if (first_unhandled < flight.items.size()) {
    std::vector<Item> items(
        std::make_move_iterator(flight.items.begin() + static_cast<std::ptrdiff_t>(first_unhandled)),
        std::make_move_iterator(flight.items.end()));
    std::vector<bool> failed(items.size(), false);
    failed.front() = true;
    on_failure(member, std::move(items), std::move(failed), report.failure, false);
  } else {
    member.supervisor.handled();
  }
  after_change(id);
}

}  // namespace kinformer::actors::detail
