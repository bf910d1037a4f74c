#include "actors/processor_state.hpp"

#include <algorithm>

#include "actors/every_actor.hpp"

namespace kinformer::actors::detail {

bool ProcessorState::syncing(const Member& member) const {
  return options.resync_period.count() == 0 || (member.period.count() > 0 && member.due);
}

void ProcessorState::set_period(Member& member) {
  auto requested = member.options().resync_period;
  auto period = options.resync_period.count() == 0 || requested.count() <= 0
                    ? std::chrono::milliseconds(0)
                    : std::max(requested, min_resync_period);
  if (period != member.period) member.next_resync = self->clock().now() + period;
  member.period = period;
}

void ProcessorState::arm_check() {
  std::chrono::milliseconds period{0};
  if (options.resync_period.count() > 0) {
    period = std::max(options.resync_period, min_resync_period);
    for (const auto& [id, member] : members)
      if (member.period.count() > 0) period = std::min(period, member.period);
  }
  bool anyone = std::any_of(members.begin(), members.end(),
                            [](const auto& m) { return m.second.period.count() > 0; });
  if (!anyone) period = std::chrono::milliseconds(0);
  if (period == check_period) return;
  check_period = period;
  ++check_gen;
  if (period.count() > 0) self->delayed_send(self, period, check_atom::value, check_gen);
}

void ProcessorState::on_check(std::uint64_t gen) {
  if (gen != check_gen || draining) return;
  auto now = self->clock().now();
  bool any = false;
  for (auto& [id, member] : members) {
    member.due = member.period.count() > 0 && now >= member.next_resync;
    if (member.due) {
      member.next_resync = now + member.period;
      any = true;
    }
  }
  if (any && upstream) send_over(self, upstream, resync_atom::value);
  self->delayed_send(self, check_period, check_atom::value, gen);
}

}  // namespace kinformer::actors::detail
