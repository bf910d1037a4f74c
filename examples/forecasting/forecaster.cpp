#include "examples/forecasting/forecaster.hpp"

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <vector>

#include "actors/errors.hpp"

namespace kinformer::forecasting {
namespace {

using HopPromise =
    caf::typed_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>;

// One batch on its way through the inference actor.
struct PendingBatch {
  HopPromise promise;
  actors::RegistrationId registration = 0;
  std::size_t remaining = 0;
  std::vector<std::uint32_t> stopped;
};

struct ForecasterState {
  ForecasterOptions options;
  std::shared_ptr<PendingBatch> pending;  // the batch in flight, if any

  using Self = actors::HandlerActor::stateful_pointer<ForecasterState>;

  caf::result<actors::handled_atom, actors::RegistrationId, actors::HopReport> notify(
      Self self, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
    auto pending = std::make_shared<PendingBatch>();
    pending->registration = id;
    pending->remaining = batch->items.size();
    if (pending->remaining == 0) return {actors::handled_atom::value, id, actors::HopReport{}};
    pending->promise =
        self->make_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>();
    this->pending = pending;
    for (std::uint32_t i = 0; i < batch->items.size(); ++i) ask(self, pending, i, batch->items[i]);
    return pending->promise;
  }

  void ask(Self self, const std::shared_ptr<PendingBatch>& pending, std::uint32_t position,
           const actors::Notification& n) {
    WindowBoard::Key key{std::string(n.key()), std::string(n.object->resource_version())};
    auto window = options.board->window(key);
    if (!window) return failed(pending, position, key, key.first + ": no window on the board");
    window->mark_sent();
    self->request(options.inference, options.timeout, actors::forecast_atom::value, std::move(*window))
        .then([=](actors::ForecastReply& reply) { answered(pending, position, key, std::move(reply)); },
              [=](caf::error& error) {
                failed(pending, position, key,
                       key.first + ": forecast failed: " + self->system().render(error));
              });
  }

  void answered(const std::shared_ptr<PendingBatch>& pending, std::uint32_t position,
                const WindowBoard::Key& key, actors::ForecastReply reply) {
    if (!options.board->attach(key, std::move(reply)))
      return failed(pending, position, key, key.first + ": entry gone");
    if (options.forecasts) ++*options.forecasts;
    done(pending);
  }

  void failed(const std::shared_ptr<PendingBatch>& pending, std::uint32_t position,
              const WindowBoard::Key& key, const std::string& why) {
    options.board->erase(key);
    if (options.errors) ++*options.errors;
    if (options.on_error) options.on_error(why);
    pending->stopped.push_back(position);
    done(pending);
  }

  void done(const std::shared_ptr<PendingBatch>& pending) {
    if (--pending->remaining > 0) return;
    actors::HopReport report;
    report.stopped = std::move(pending->stopped);
    std::sort(report.stopped.begin(), report.stopped.end());  // answers come back in any order
    pending->promise.deliver(actors::handled_atom::value, pending->registration, std::move(report));
    if (this->pending == pending) this->pending.reset();
  }
};

actors::HandlerActor::behavior_type forecaster(actors::HandlerActor::stateful_pointer<ForecasterState> self,
                                               ForecasterOptions options) {
  self->state.options = std::move(options);
  return {
      [=](actors::notify_atom, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
        return self->state.notify(self, id, batch);
      },
  };
}

}  // namespace

actors::HandlerActor spawn_forecaster(caf::actor_system& system, ForecasterOptions options) {
  return system.spawn(forecaster, std::move(options));
}

}  // namespace kinformer::forecasting
