#include "actors/controller.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/errors.hpp"
#include "actors/every_actor.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors {

// -- DeltaApplier --------------------------------------------------------------

DeltaApplier::DeltaApplier(std::shared_ptr<Indexer> indexer, Decoder decoder)
    : indexer_(std::move(indexer)), decoder_(std::move(decoder)) {}

std::shared_ptr<const void> DeltaApplier::decode(const ObjectPtr& object) {
  if (!decoder_ || !object) return nullptr;
  return decoder_(*object);
}

void DeltaApplier::apply(const PoppedDeltas& popped, std::vector<Notification>& out) {
  for (const auto& delta : popped.deltas) {
    Notification n;
    std::string key(delta.key());
    if (delta.type == DeltaType::deleted) {
      n.type = NotificationType::deleted;
      n.object = delta.object;
      n.tombstone = delta.tombstone;
      indexer_->delete_key(key);
      if (decoder_) {
        auto cached = typed_.find(key);
        if (delta.is_tombstone() && cached != typed_.end()) {
          n.typed_object = cached->second;
        } else {
          n.typed_object = decode(delta.newest_object());
        }
        if (cached != typed_.end()) typed_.erase(cached);
      }
      out.push_back(std::move(n));
      continue;
    }
    auto old = indexer_->get_by_key(key);
    n.object = delta.object;
    if (old) {
      n.type = NotificationType::updated;
      n.old_object = old;
      indexer_->update(delta.object);
    } else {
      n.type = NotificationType::added;
      n.is_in_initial_list = popped.is_in_initial_list;
      indexer_->add(delta.object);
    }
    if (decoder_) {
      auto& slot = typed_[key];
      n.typed_old_object = slot;
      if (!old || old != delta.object || !slot) slot = decode(delta.object);
      n.typed_object = slot;
    }
    out.push_back(std::move(n));
  }
}

std::vector<Notification> DeltaApplier::snapshot() const {
  std::vector<Notification> out;
  for (auto& object : indexer_->list()) {
    Notification n;
    n.type = NotificationType::added;
    n.is_in_initial_list = true;
    if (decoder_) {
      auto cached = typed_.find(std::string(object->key()));
      if (cached != typed_.end()) n.typed_object = cached->second;
    }
    n.object = std::move(object);
    out.push_back(std::move(n));
  }
  return out;
}

// -- the actor -----------------------------------------------------------------

namespace {

struct ControllerState {
  ControllerOptions options;
  std::unique_ptr<DeltaApplier> applier;
  std::size_t credit = 0;  // keys the Processor still accepts
  bool popping = false;    // a pop is in flight
  bool synced = false;     // the FIFO said so after our last applied pop
  bool done = false;       // the FIFO is closed and drained

  using Self = ControllerActor::stateful_pointer<ControllerState>;

  /// Step 1: ask for as many keys as the credit allows (and, until synced, whether
  /// what we applied so far completes the initial list).
  void pull(Self self) {
    if (popping || done || credit == 0) return;
    popping = true;
    detail::handing_over();  // ThreadSanitizer annotations: actors/every_actor.hpp
    if (!synced) {
      self->request(options.fifo, caf::infinite, synced_atom::value)
          .then(handed_off([=](const bool& yes) { on_synced(self, yes); }),
                [=](caf::error&) { /* the pop below reports a dead FIFO */ });
    }
    self->request(options.fifo, caf::infinite, pop_atom::value, std::min(credit, options.max_batch))
        .then(handed_off([=](const PoppedBatchPtr& batch) { on_popped(self, *batch); }),
              handed_off([=](caf::error& err) { on_pop_failed(self, err); }));
  }

  /// Step 2: apply in pop order, hand on, pull again.
  void on_popped(Self self, const PoppedBatch& batch) {
    popping = false;
    if (!batch.empty()) {
      auto out = std::make_shared<NotificationBatch>();
      const auto started = std::chrono::steady_clock::now();
      for (const auto& popped : batch) applier->apply(popped, out->items);
      note_applied(started, out->items.size());
      credit -= std::min(credit, batch.size());
      options.status->notifications += out->items.size();
      send_over(self, options.downstream, notify_atom::value, NotificationBatchPtr{std::move(out)},
                batch.size());
    }
    pull(self);
  }

  void on_synced(Self self, bool yes) {
    if (!yes || synced) return;
    synced = true;
    options.status->indexer_synced = true;
    send_over(self, options.downstream, synced_atom::value);
  }

  /// Step 3: the FIFO is closed and drained (or gone): let the Processor finish.
  void on_pop_failed(Self self, const caf::error& err) {
    popping = false;
    done = true;
    if (err != Errc::fifo_closed && err != caf::sec::request_receiver_down)
      log::error("controller", "pop failed, draining",
                 {{"informer", options.metrics ? options.metrics->informer() : std::string()},
                  {"resource", options.metrics ? options.metrics->resource() : std::string()},
                  {"error", from_caf_error(err).to_string()}});
    send_over(self, options.downstream, drain_atom::value);
    self->quit();
  }

  void note_applied(std::chrono::steady_clock::time_point started, std::size_t notifications) const {
    if (!options.metrics) return;
    options.metrics->controller_batches.inc();
    options.metrics->apply_seconds.observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    options.metrics->notifications.inc(static_cast<double>(notifications));
  }

  void add_credit(Self self, std::size_t n) {
    credit += n;
    pull(self);
  }

  void attach(Self self, const RegistrationPtr& registration) {
    auto replay = std::make_shared<NotificationBatch>();
    replay->items = applier->snapshot();
    send_over(self, options.downstream, attach_atom::value, registration,
              NotificationBatchPtr{std::move(replay)});
  }

  void forward_detach(Self self, RegistrationId id) {
    send_over(self, options.downstream, detach_atom::value, id);
  }

  void forward_swap(Self self, const RegistrationPtr& registration) {
    send_over(self, options.downstream, swap_atom::value, registration);
  }

  void resync(Self self) {
    detail::handing_over();
    self->request(options.fifo, caf::infinite, resync_atom::value)
        .then([](std::size_t) { /* the depth is the Reflector's business */ },
              [](caf::error&) { /* a closed FIFO: shutting down */ });
  }
};

ControllerActor::behavior_type controller(ControllerActor::stateful_pointer<ControllerState> self,
                                          ControllerOptions options) {
  auto& st = self->state;
  st.applier = std::make_unique<DeltaApplier>(options.indexer, options.decoder);
  st.options = std::move(options);
  declare_brief(self);
  self->set_exit_handler(ignore_graceful_exits(self));
  send_over(self, st.options.downstream, upstream_atom::value, caf::actor_cast<ProcessorUpstream>(self));
  return {
      handed_off([=](credit_atom, const std::size_t& n) { self->state.add_credit(self, n); }),
      handed_off(
          [=](attach_atom, const RegistrationPtr& registration) { self->state.attach(self, registration); }),
      handed_off([=](resync_atom) { self->state.resync(self); }),
      handed_off([=](detach_atom, const RegistrationId& id) { self->state.forward_detach(self, id); }),
      handed_off([=](swap_atom, const RegistrationPtr& registration) {
        self->state.forward_swap(self, registration);
      }),
  };
}

}  // namespace

ControllerActor spawn_controller(caf::actor_system& system, ControllerOptions options) {
  return system.spawn(controller, std::move(options));
}

}  // namespace kinformer::actors
