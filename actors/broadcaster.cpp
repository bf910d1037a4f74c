#include "actors/broadcaster.hpp"

#include "actors/every_actor.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/system_messages.hpp>
#include <caf/exit_reason.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace kinformer::actors {
namespace {

constexpr std::uint64_t replay_seq = 0;  // replays are not upstream batches: no credit held

/// One batch on its way to one handler.
struct Queued {
  NotificationBatchPtr batch;
  std::uint64_t seq = replay_seq;  // upstream batch number
  std::size_t initial = 0;         // initial-list adds in it
};

struct Listener {
  RegistrationPtr registration;
  std::deque<Queued> pending;    // waiting here
  std::deque<Queued> in_flight;  // in the handler's mailbox; answered in order

  /// The oldest upstream batch this listener still holds, or max.
  std::uint64_t oldest_held() const {
    for (const auto* queue : {&in_flight, &pending})
      for (const auto& q : *queue)
        if (q.seq != replay_seq) return q.seq;
    return std::numeric_limits<std::uint64_t>::max();
  }
  bool idle() const { return pending.empty() && in_flight.empty(); }
};

struct BroadcasterState {
  BroadcasterOptions options;
  CreditSinkActor upstream;
  std::map<RegistrationId, Listener> listeners;
  std::deque<std::pair<std::uint64_t, std::size_t>> unreleased;  // (seq, credit), seq ascending
  std::uint64_t next_seq = 1;
  bool draining = false;

  using Self = BroadcasterActor::stateful_pointer<BroadcasterState>;

  void set_upstream(Self self, CreditSinkActor sink) {
    upstream = std::move(sink);
    detail::handing_over();  // ThreadSanitizer annotations: actors/tsan.hpp
    self->send(upstream, credit_atom::value, options.max_buffered_keys);
  }

  void distribute(Self self, const NotificationBatchPtr& batch, std::size_t credit) {
    auto seq = next_seq++;
    unreleased.emplace_back(seq, credit);
    for (auto& [id, listener] : listeners) {
      enqueue(listener, batch, seq);
      pump(self, listener);
    }
    release(self);
  }

  /// Queues `batch` for one listener, without the resync notifications it did not ask for.
  static void enqueue(Listener& listener, NotificationBatchPtr batch, std::uint64_t seq) {
    const auto& registration = *listener.registration;
    if (registration.options.resync_period.count() == 0) {
      auto is_sync = [](const Notification& n) { return n.is_sync(); };
      if (std::any_of(batch->items.begin(), batch->items.end(), is_sync)) {
        auto filtered = std::make_shared<NotificationBatch>();
        std::copy_if(batch->items.begin(), batch->items.end(), std::back_inserter(filtered->items),
                     [&](const Notification& n) { return !is_sync(n); });
        if (filtered->items.empty()) return;
        batch = std::move(filtered);
      }
    }
    if (batch->items.empty()) return;
    auto initial = static_cast<std::size_t>(std::count_if(
        batch->items.begin(), batch->items.end(), [](const Notification& n) { return n.is_in_initial_list; }));
    registration.status->pending_initial += static_cast<std::int64_t>(initial);
    listener.pending.push_back(Queued{std::move(batch), seq, initial});
  }

  void pump(Self self, Listener& listener) {
    while (listener.in_flight.size() < options.handler_window && !listener.pending.empty()) {
      auto& next = listener.pending.front();
      detail::handing_over();
      self->send(listener.registration->handler, notify_atom::value, listener.registration->id, next.batch);
      listener.in_flight.push_back(std::move(next));
      listener.pending.pop_front();
    }
  }

  /// Grants back the credit of every upstream batch no listener holds any more.
  void release(Self self) {
    auto oldest = std::numeric_limits<std::uint64_t>::max();
    for (const auto& [id, listener] : listeners) oldest = std::min(oldest, listener.oldest_held());
    std::size_t grant = 0;
    while (!unreleased.empty() && unreleased.front().first < oldest) {
      grant += unreleased.front().second;
      unreleased.pop_front();
    }
    if (grant > 0 && upstream) {
      detail::handing_over();
      self->send(upstream, credit_atom::value, grant);
    }
    finish_drain(self);
  }

  void handled(Self self, RegistrationId id) {
    auto found = listeners.find(id);
    if (found == listeners.end() || found->second.in_flight.empty()) return;  // removed meanwhile
    auto& listener = found->second;
    auto& status = *listener.registration->status;
    status.pending_initial -= static_cast<std::int64_t>(listener.in_flight.front().initial);
    ++status.handled_batches;
    listener.in_flight.pop_front();
    pump(self, listener);
    release(self);
  }

  void attach(Self self, const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
    auto& listener = listeners[registration->id];
    listener.registration = registration;
    self->monitor(registration->handler);
    enqueue(listener, replay, replay_seq);
    registration->status->attached = true;
    pump(self, listener);
  }

  void detach(Self self, RegistrationId id) {
    auto found = listeners.find(id);
    if (found == listeners.end()) return;
    end_listener(self, found->second);
    listeners.erase(found);
    release(self);
  }

  void end_listener(Self self, Listener& listener) {
    const auto& registration = *listener.registration;
    registration.status->removed = true;
    registration.status->pending_initial = 0;
    if (registration.owned) self->send_exit(registration.handler, caf::exit_reason::user_shutdown);
  }

  void handler_down(Self self, const caf::down_msg& msg) {
    bool removed = false;
    for (auto it = listeners.begin(); it != listeners.end();) {
      if (it->second.registration->handler.address() == msg.source) {
        ++options.status->handler_failures;
        it->second.registration->status->removed = true;
        it = listeners.erase(it);
        removed = true;
      } else {
        ++it;
      }
    }
    if (removed) release(self);
  }

  void finish_drain(Self self) {
    if (!draining) return;
    for (const auto& [id, listener] : listeners)
      if (!listener.idle()) return;
    for (auto& [id, listener] : listeners) end_listener(self, listener);
    listeners.clear();
    self->quit();
  }
};

BroadcasterActor::behavior_type broadcaster(BroadcasterActor::stateful_pointer<BroadcasterState> self,
                                            BroadcasterOptions options) {
  self->state.options = std::move(options);
  if (self->state.options.handler_window == 0) self->state.options.handler_window = 1;
  self->set_down_handler([=](caf::down_msg& msg) { self->state.handler_down(self, msg); });
  self->set_exit_handler(ignore_graceful_exits(self));
  return {
      [=](upstream_atom, const CreditSinkActor& sink) {
        const detail::HandlerScope handoff;
        self->state.set_upstream(self, sink);
      },
      [=](notify_atom, const NotificationBatchPtr& batch, const std::size_t& credit) {
        const detail::HandlerScope handoff;
        self->state.distribute(self, batch, credit);
      },
      [=](synced_atom) {
        const detail::HandlerScope handoff;
        self->state.options.status->distributed_synced = true;
      },
      [=](attach_atom, const RegistrationPtr& registration, const NotificationBatchPtr& replay) {
        const detail::HandlerScope handoff;
        self->state.attach(self, registration, replay);
      },
      [=](detach_atom, const RegistrationId& id) {
        const detail::HandlerScope handoff;
        self->state.detach(self, id);
      },
      [=](handled_atom, const RegistrationId& id) {
        const detail::HandlerScope handoff;
        self->state.handled(self, id);
      },
      [=](drain_atom) {
        const detail::HandlerScope handoff;
        self->state.draining = true;
        self->state.finish_drain(self);
      },
  };
}

}  // namespace

BroadcasterActor spawn_broadcaster(caf::actor_system& system, BroadcasterOptions options) {
  return system.spawn(broadcaster, std::move(options));
}

}  // namespace kinformer::actors
