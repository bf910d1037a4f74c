#include "actors/processor.hpp"

#include <string>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "actors/every_actor.hpp"
#include "actors/processor_state.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors {
namespace detail {

void ProcessorState::drain() {
  draining = true;
  ++check_gen;
  finish_drain();
}

void ProcessorState::finish_drain() {
  if (!draining) return;
  for (const auto& [key, group] : groups)
    if (!group.backlog.empty() || group.interior > 0) return;
  for (const auto& [id, member] : members)
    if (member.in_flight || !member.queue.empty()) return;
  std::vector<RegistrationId> ids;
  for (const auto& [id, member] : members) ids.push_back(id);
  for (auto id : ids) {
    members.at(id).registration->status->removed = true;
    erase(id);
  }
  self->quit();
}

void ProcessorState::log(const Member& member, const std::string& line, std::string_view key) const {
  log::warn("processor", line,
            {{"informer", options.metrics ? options.metrics->informer() : std::string()},
             {"resource", options.metrics ? options.metrics->resource() : std::string()},
             {"handler", handler_name(*member.registration)},
             {"group", member.options().group},
             {"key", key}});
}

std::string ProcessorState::describe(const Notification& n) {
  switch (n.type) {
    case NotificationType::added:
      return "add " + std::string(n.key());
    case NotificationType::updated:
      return "update " + std::string(n.key());
    case NotificationType::deleted:
      return "delete " + std::string(n.key());
  }
  return std::string(n.key());
}

}  // namespace detail

namespace {

using detail::ProcessorImpl;
using detail::ProcessorState;

ProcessorImpl::behavior_type processor(ProcessorImpl::stateful_pointer<ProcessorState> self,
                                       ProcessorOptions options) {
  auto& st = self->state;
  st.self = self;
  st.options = std::move(options);
  if (st.options.max_batch == 0) st.options.max_batch = 1;
  if (st.options.group_window == 0) st.options.group_window = 1;
  declare_brief(self);
  self->set_exit_handler(ignore_graceful_exits(self));
  self->set_down_handler(handed_off([=](caf::down_msg& msg) { self->state.handler_down(msg); }));
  self->attach_functor([owned = st.owned](const caf::error&) {
    for (const auto& [id, actor] : *owned) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  });
  return {
      handed_off([=](upstream_atom, const ProcessorUpstream& sink) { self->state.set_upstream(sink); }),
      handed_off([=](notify_atom, const NotificationBatchPtr& batch, std::size_t credit) {
        self->state.distribute(batch, credit);
      }),
      handed_off([=](synced_atom) { self->state.options.status->distributed_synced = true; }),
      handed_off([=](attach_atom, const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
        self->state.attach(registration, replay);
      }),
      handed_off([=](detach_atom, RegistrationId id) { self->state.detach(id); }),
      handed_off([=](swap_atom, const RegistrationPtr& registration) { self->state.swap(registration); }),
      handed_off([=](drain_atom) { self->state.drain(); }),
      handed_off([=](check_atom, std::uint64_t gen) { self->state.on_check(gen); }),
      handed_off([=](revive_atom, RegistrationId id, std::uint64_t gen) { self->state.revive(id, gen); }),
      handed_off([=](lag_atom, const std::string& key, std::uint64_t gen) { self->state.on_lag(key, gen); }),
  };
}

}  // namespace

ProcessorActor spawn_processor(caf::actor_system& system, ProcessorOptions options) {
  return caf::actor_cast<ProcessorActor>(system.spawn(processor, std::move(options)));
}

}  // namespace kinformer::actors
