#include "actors/processor_state.hpp"

#include <string>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/sec.hpp>

#include "actors/job_queue.hpp"

namespace kinformer::actors::detail {

void ProcessorState::request_failed(RegistrationId id, std::uint64_t seq, const caf::error& err) {
  auto found = members.find(id);
  if (found == members.end() || !found->second.in_flight || found->second.in_flight->seq != seq) return;
  auto& member = found->second;
  auto flight = std::move(*member.in_flight);
  member.in_flight.reset();
  bool timed_out = err == caf::sec::request_timeout;
  bool current = flight.actor == member.actor;
  end_retiring(member);
  if (!current) {
    // A swapped-out actor failed its last batch: the new actor gets it.
    for (auto it = flight.items.rbegin(); it != flight.items.rend(); ++it)
      member.queue.push_front(std::move(*it));
    after_change(id);
    return;
  }
  auto why = timed_out ? std::string("no answer within the hop timeout") : self->system().render(err);
  // Anything but a timeout means the actor died (an exception, a kill): restart it.
  on_failure(member, std::move(flight.items), std::move(flight.sent), why, !timed_out);
  after_change(id);
}

void ProcessorState::handler_down(const caf::down_msg& msg) {
  std::vector<RegistrationId> hit;
  for (auto& [id, member] : members)
    if (member.actor && member.actor.address() == msg.source) hit.push_back(id);
  for (auto id : hit) {
    auto& member = members.at(id);
    std::vector<Item> items;
    std::vector<bool> failed;
    if (member.in_flight) {
      items = std::move(member.in_flight->items);
      failed = std::move(member.in_flight->sent);
      member.in_flight.reset();
    }
    on_failure(member, std::move(items), std::move(failed),
               "handler actor went down: " + self->system().render(msg.reason), true);
    after_change(id);
  }
}

void ProcessorState::on_failure(Member& member, std::vector<Item> items, std::vector<bool> failed, const std::string& why,
                bool actor_dead) {
  ++options.status->handler_failures;
  if (member.metrics.failures) member.metrics.failures->inc();
  if (member.leaving()) {  // going anyway: what failed is dropped, as buffered notifications are
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (failed[i])
        finish(member, items[i]);
      else
        forward(member, std::move(items[i]));
    }
    return;
  }
  const auto& policy = member.supervision();
  std::vector<Item> again;
  bool retrying = false;
  bool any_failed = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto& item = items[i];
    if (!failed[i]) {
      again.push_back(std::move(item));
      continue;
    }
    any_failed = true;
    if (policy.policy == FailurePolicy::retry && item.attempts < policy.retries) {
      ++item.attempts;
      again.push_back(std::move(item));
      retrying = true;
    } else {
      dead_letter(member, item, why);
    }
  }
  for (auto it = again.rbegin(); it != again.rend(); ++it) member.queue.push_front(std::move(*it));
  if (actor_dead || (policy.policy == FailurePolicy::restart && any_failed)) {
    restart(member, why);
  } else if (retrying) {
    log(member, why + "; retrying");
    back_off(member, false, member.supervisor.next_backoff(self->clock().now()));
  }
}

void ProcessorState::dead_letter(Member& member, const Item& item, const std::string& why) {
  ++member.registration->status->dead_letters;
  ++options.status->dead_letters;
  if (member.metrics.dead_letters) member.metrics.dead_letters->inc();
  log(member, "dead letter: " + describe(item.get()) + " (" + why + ")", item.get().key());
  finish(member, item);
}

void ProcessorState::restart(Member& member, const std::string& why) {
  if (!member.registration->factory) {
    fail(member, "handler failed (" + why + ") and the registration has no factory to restart it");
    return;
  }
  auto now = self->clock().now();
  if (auto refused = member.supervisor.refuse_restart(now)) {
    fail(member, *refused + " (last: " + why + ")");
    return;
  }
  end_actor(member);
  auto delay = member.supervisor.next_backoff(now);
  log(member, why + "; restarting in " + std::to_string(delay.count()) + " ms");
  back_off(member, true, delay);
}

void ProcessorState::back_off(Member& member, bool then_restart, std::chrono::milliseconds delay) {
  if (const auto* running = std::get_if<BackingOff>(&member.lifecycle))
    then_restart = then_restart || running->then_restart;
  member.lifecycle = BackingOff{++last_backoff, then_restart};
  self->delayed_send(self, delay, revive_atom::value, member.id(), last_backoff);
}

void ProcessorState::revive(RegistrationId id, std::uint64_t gen) {
  auto found = members.find(id);
  if (found == members.end()) return;
  auto& member = found->second;
  const auto* backing_off = std::get_if<BackingOff>(&member.lifecycle);
  if (!backing_off || backing_off->generation != gen) return;
  const bool then_restart = backing_off->then_restart;
  member.lifecycle = Serving{};
  if (then_restart) {
    {
      // A user's factory, and the start of the actor it spawns, run here, inside the
      // brief Processor (actors/job_queue.hpp).
      const JobQueue::MayBlock user_code;
      member.actor = member.registration->factory(self->system());
    }
    member.owned = true;
    (*owned)[id] = caf::actor_cast<caf::actor>(member.actor);
    self->monitor(member.actor);
    ++member.registration->status->restarts;
    if (member.metrics.restarts) member.metrics.restarts->inc();
    log(member, "restarted");
  }
  after_change(id);
}

void ProcessorState::fail(Member& member, const std::string& why) {
  member.registration->status->fail(why);
  log(member, "registration failed and removed: " + why);
  remove(member.id());
}

}  // namespace kinformer::actors::detail
