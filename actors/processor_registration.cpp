#include "actors/processor_state.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>

namespace kinformer::actors::detail {

void ProcessorState::attach(const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
  if (members.count(registration->id) > 0) return;
  auto& member = members[registration->id];
  member.registration = registration;
  member.supervisor = HandlerSupervisor(registration->options.supervision);
  member.order = ++next_order;
  member.group = group_key(*registration);
  member.actor = registration->handler;
  member.owned = registration->owned;
  if (member.owned) (*owned)[registration->id] = caf::actor_cast<caf::actor>(member.actor);
  if (member.actor) self->monitor(member.actor);
  if (options.metrics) member.metrics = options.metrics->handler(handler_name(*registration));
  set_period(member);
  for (std::uint32_t i = 0; replay && i < replay->items.size(); ++i) {
    Item item{replay, i, nullptr, 0, 0};
    if (!takes(member, item.get())) continue;
    ++member.replay_pending;
    member.queue.push_back(std::move(item));
  }
  auto& group = groups[member.group];
  if (options.metrics && !group.metrics.backlog)
    group.metrics = options.metrics->group(group_name(*registration));
  rebuild_route(group, member.group);
  registration->status->attached = true;
  publish_initial(group);
  arm_check();
  pump(member);
}

void ProcessorState::detach(RegistrationId id) {
  auto found = members.find(id);
  if (found == members.end() || found->second.leaving()) return;
  found->second.registration->status->removed = true;
  remove(id);
}

void ProcessorState::remove(RegistrationId id) {
  auto& member = members.at(id);
  member.lifecycle = Leaving{};  // a pending back-off ends nothing
  rebuild_route(groups.at(member.group), member.group);
  auto queued = std::move(member.queue);
  member.queue.clear();
  for (auto& item : queued) {  // in a chain they go on; alone, they are dropped
    if (!item.route) {
      --member.replay_pending;
      continue;
    }
    forward(member, std::move(item));
  }
  member.registration->status->pending_initial = 0;
  auto key = member.group;
  if (!member.in_flight) erase(id);
  if (groups.count(key) > 0) pump_group(groups.at(key));
  arm_check();
  finish_drain();
}

void ProcessorState::erase(RegistrationId id) {
  auto& member = members.at(id);
  end_retiring(member);
  end_actor(member);
  auto key = member.group;
  members.erase(id);
  auto& group = groups.at(key);
  bool empty =
      std::none_of(members.begin(), members.end(), [&](const auto& m) { return m.second.group == key; });
  if (empty && group.interior == 0) groups.erase(key);
}

void ProcessorState::swap(const RegistrationPtr& registration) {
  auto found = members.find(registration->id);
  if (found == members.end() || found->second.leaving()) return;
  auto& member = found->second;
  bool new_actor = registration->handler != member.actor;
  if (new_actor) {
    if (member.in_flight && member.in_flight->actor == member.actor) {
      end_retiring(member);
      member.retiring = member.actor;  // answers its batch first
      member.retiring_owned = member.owned;
    } else {
      end_actor(member);
    }
    if (member.actor) self->demonitor(member.actor.address());
    member.actor = registration->handler;
    member.owned = registration->owned;
    owned->erase(registration->id);
    if (member.owned) (*owned)[registration->id] = caf::actor_cast<caf::actor>(member.actor);
    self->monitor(member.actor);
    member.lifecycle = Serving{};  // a pending restart is superseded by the new actor
  }
  member.registration = registration;  // group stays as it was (see the header)
  member.supervisor.update(registration->options.supervision);
  set_period(member);
  rebuild_route(groups.at(member.group), member.group);
  arm_check();
  after_change(registration->id);
}

void ProcessorState::rebuild_route(Group& group, const std::string& key) {
  std::vector<const Member*> chain;
  for (const auto& [id, member] : members)
    if (member.group == key && !member.leaving()) chain.push_back(&member);
  std::sort(chain.begin(), chain.end(), [](const Member* a, const Member* b) {
    if (a->options().priority != b->options().priority)
      return a->options().priority < b->options().priority;
    return a->order < b->order;
  });
  auto route = std::make_shared<Route>();
  for (const auto* member : chain) route->push_back(member->id());
  group.route = std::move(route);
}

std::string ProcessorState::group_key(const Registration& registration) {
  if (registration.options.group.empty()) return "#" + std::to_string(registration.id);
  return "g:" + registration.options.group;
}

void ProcessorState::after_change(RegistrationId id) {
  auto found = members.find(id);
  if (found != members.end()) {
    auto& member = found->second;
    if (member.leaving() && !member.in_flight) {
      auto key = member.group;
      erase(id);
      if (groups.count(key) > 0) pump_group(groups.at(key));
    } else {
      pump_group(groups.at(member.group));
    }
  }
  finish_drain();
}

void ProcessorState::end_actor(Member& member) {
  if (!member.actor) return;
  self->demonitor(member.actor.address());
  if (member.owned) self->send_exit(member.actor, caf::exit_reason::user_shutdown);
  owned->erase(member.id());
  member.actor = nullptr;
  member.owned = false;
}

void ProcessorState::end_retiring(Member& member) {
  if (!member.retiring) return;
  if (member.retiring_owned) self->send_exit(member.retiring, caf::exit_reason::user_shutdown);
  member.retiring = nullptr;
  member.retiring_owned = false;
}

}  // namespace kinformer::actors::detail
