#include "examples/forecasting/status_writer.hpp"

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <map>
#include <vector>

namespace kinformer::forecasting::detail {

// A PATCH's outcome, sent from the HTTP client's I/O thread back to the writer.
struct PatchOutcome {
  std::uint64_t batch = 0;
  std::uint32_t position = 0;
  bool ok = false;
  std::string failure;  // when !ok: why
};

}  // namespace kinformer::forecasting::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::forecasting::detail::PatchOutcome)

namespace kinformer::forecasting {
namespace {

using detail::PatchOutcome;
using HopPromise =
    caf::typed_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>;
using WriterActor = actors::HandlerActor::extend<caf::reacts_to<PatchOutcome>>;

struct WriteBatch {
  HopPromise promise;
  actors::RegistrationId registration = 0;
  std::size_t remaining = 0;
  std::vector<std::uint32_t> stopped;
  std::map<std::uint32_t, WrittenForecast> writes;  // position -> what its PATCH carries
};

struct WriterState {
  StatusWriterOptions options;
  std::map<std::uint64_t, WriteBatch> batches;  // by batch number; one at a time in practice
  std::uint64_t next_batch = 1;

  using Self = WriterActor::stateful_pointer<WriterState>;

  caf::result<actors::handled_atom, actors::RegistrationId, actors::HopReport> notify(
      Self self, actors::RegistrationId id, const actors::NotificationBatchPtr& notifications) {
    const std::uint64_t number = next_batch++;
    WriteBatch& batch = batches[number];
    batch.registration = id;
    for (std::uint32_t i = 0; i < notifications->items.size(); ++i) {
      const auto& n = notifications->items[i];
      auto entry = options.board->take({std::string(n.key()), std::string(n.object->resource_version())});
      if (!entry || !entry->forecast) {
        batch.stopped.push_back(i);
        continue;
      }
      WrittenForecast written{entry->series, to_forecast(*entry->series, options.shape, *entry->forecast),
                              std::move(*entry->forecast)};
      patch(self, number, i, written);
      batch.writes.emplace(i, std::move(written));
      ++batch.remaining;
    }
    if (batch.remaining == 0) {
      actors::HopReport report;
      report.stopped = std::move(batch.stopped);
      batches.erase(number);
      return {actors::handled_atom::value, id, std::move(report)};
    }
    batch.promise =
        self->make_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>();
    return batch.promise;
  }

  void patch(Self self, std::uint64_t batch, std::uint32_t position, const WrittenForecast& written) {
    http::Request request;
    request.method = "PATCH";
    request.target = forecast_status_target(written.series->namespace_, written.series->name);
    request.body = forecast_status_patch(written.forecast);
    request.content_type = "application/merge-patch+json";
    auto me = caf::actor_cast<WriterActor>(self);
    options.client->request(std::move(request), [me, batch, position](Result<http::Response> response) {
      PatchOutcome outcome{batch, position, false, {}};
      if (!response)
        outcome.failure = response.error().to_string();
      else if (response->status / 100 != 2)
        outcome.failure = "HTTP " + std::to_string(response->status) + ": " + response->body.substr(0, 300);
      else
        outcome.ok = true;
      caf::anon_send(me, std::move(outcome));
    });
  }

  void finished(const PatchOutcome& outcome) {
    auto it = batches.find(outcome.batch);
    if (it == batches.end()) return;
    WriteBatch& batch = it->second;
    auto write = batch.writes.find(outcome.position);
    if (write == batch.writes.end()) return;
    if (outcome.ok) {
      if (options.written) ++*options.written;
      if (options.on_written) options.on_written(write->second);
    } else {
      if (options.errors) ++*options.errors;
      if (options.on_error)
        options.on_error(write->second.series->key + ": status PATCH failed: " + outcome.failure);
      batch.stopped.push_back(outcome.position);
    }
    batch.writes.erase(write);
    if (--batch.remaining > 0) return;
    actors::HopReport report;
    report.stopped = std::move(batch.stopped);
    std::sort(report.stopped.begin(), report.stopped.end());
    batch.promise.deliver(actors::handled_atom::value, batch.registration, std::move(report));
    batches.erase(it);
  }
};

WriterActor::behavior_type status_writer(WriterActor::stateful_pointer<WriterState> self,
                                         StatusWriterOptions options) {
  self->state.options = std::move(options);
  return {
      [=](actors::notify_atom, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
        return self->state.notify(self, id, batch);
      },
      [=](const PatchOutcome& outcome) { self->state.finished(outcome); },
  };
}

}  // namespace

actors::HandlerActor spawn_status_writer(caf::actor_system& system, StatusWriterOptions options) {
  return caf::actor_cast<actors::HandlerActor>(system.spawn(status_writer, std::move(options)));
}

}  // namespace kinformer::forecasting
