// tests/actors/pipeline_fixture.hpp
//
// The informer's actors without the Reflector, on the deterministic scheduler:
// the test feeds the DeltaFIFO actor directly, the Controller applies to a real
// Indexer, the Processor hands on to recording handler actors.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/controller.hpp"
#include "actors/delta_fifo.hpp"
#include "actors/handler.hpp"
#include "actors/processor.hpp"
#include "actors/registration.hpp"
#include "runtime/indexer.hpp"
#include "tests/actors/informer_fixture.hpp"

namespace kinformer::testing {

/// One line per notification a recording handler saw, e.g. "add default/a 1 initial",
/// "update default/a 1->2", "delete default/a 2", "delete default/a tombstone".
inline std::string describe(const actors::Notification& n) {
  using actors::NotificationType;
  switch (n.type) {
    case NotificationType::added:
      return "add " + std::string(n.key()) + " " + std::string(n.object->resource_version()) +
             (n.is_in_initial_list ? " initial" : "");
    case NotificationType::updated:
      return "update " + std::string(n.key()) + " " + std::string(n.old_object->resource_version()) + "->" +
             std::string(n.object->resource_version());
    case NotificationType::deleted:
      return "delete " + std::string(n.key()) + " " +
             (n.tombstone ? std::string("tombstone") : std::string(n.object->resource_version()));
  }
  return "?";
}

/// A handler registered by PipelineFixture and what it saw.
struct Recorder {
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
  actors::RegistrationPtr registration;
};

struct PipelineFixture : DeterministicFixture {
  std::shared_ptr<Indexer> indexer = std::make_shared<Indexer>();
  std::shared_ptr<actors::InformerStatus> status = std::make_shared<actors::InformerStatus>();
  actors::DeltaFIFOActor fifo;
  actors::ProcessorActor processor;
  actors::ControllerActor controller;
  actors::RegistrationId next_id = 1;

  /// Resyncs are on (1 s checks) unless `p` says otherwise; virtual time moves only when a test advances it.
  explicit PipelineFixture(actors::ProcessorOptions p = with_resync(), std::size_t max_batch = 256) {
    fifo = track(actors::spawn_delta_fifo(sys, {}));
    p.status = status;
    processor = track(actors::spawn_processor(sys, p));
    actors::ControllerOptions c;
    c.fifo = fifo;
    c.downstream = processor;
    c.indexer = indexer;
    c.max_batch = max_batch;
    c.status = status;
    controller = track(actors::spawn_controller(sys, c));
    run();
  }

  static actors::ProcessorOptions with_resync() {
    actors::ProcessorOptions p;
    p.resync_period = std::chrono::seconds(1);
    return p;
  }

  static actors::ProcessorOptions credit(std::size_t max_buffered_keys) {
    auto p = with_resync();
    p.max_buffered_keys = max_buffered_keys;
    return p;
  }

  /// Registers a handler that appends describe(n) to the returned log.
  Recorder attach(actors::HandlerOptions options = {}) {
    Recorder r;
    auto log = r.log;
    return attach_func([log](const actors::Notification& n) { log->push_back(describe(n)); }, options, r);
  }

  Recorder attach_func(actors::NotificationFunc func, actors::HandlerOptions options = {},
                       Recorder r = Recorder()) {
    return attach_hop(actors::always_next(std::move(func)), std::move(options), std::move(r));
  }

  /// Registers a function handler (restartable: it has a factory).
  Recorder attach_hop(actors::HopFunc func, actors::HandlerOptions options = {}, Recorder r = Recorder()) {
    auto registration = std::make_shared<actors::Registration>();
    registration->id = next_id++;
    registration->factory = [this, func](caf::actor_system& system) {
      return track(actors::spawn_handler(system, func));
    };
    registration->handler = registration->factory(sys);
    registration->options = std::move(options);
    registration->owned = true;
    r.registration = registration;
    self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
    run();
    return r;
  }

  /// A recording HopFunc: logs "<tag>: describe(n)" to `log`, then answers `verdict(n)`.
  static actors::HopFunc recording(std::shared_ptr<std::vector<std::string>> log, std::string tag,
                                   std::function<actors::Verdict(const actors::Notification&)> verdict = {}) {
    return [log, tag, verdict](const actors::Notification& n) {
      log->push_back(tag + ": " + describe(n));
      return verdict ? verdict(n) : actors::Verdict::next;
    };
  }

  void detach(const Recorder& recorder) {
    self->send(controller, actors::detach_atom::value, recorder.registration->id);
    run();
  }

  void replace(std::vector<ObjectPtr> items, std::string rv = "1") {
    auto list = std::make_shared<actors::ListSnapshot>(actors::ListSnapshot{std::move(items), std::move(rv)});
    self->send(fifo, actors::replace_atom::value, actors::ListSnapshotPtr{std::move(list)});
    run();
  }

  void watch(kinformer::Deltas items) {
    self->send(fifo, actors::deltas_atom::value, deltas(std::move(items)));
    run();
  }

  /// Sends to the FIFO and runs only the FIFO: what it answers (a parked pop) stays
  /// in flight to the Controller.
  template <class... Ts>
  void fifo_only(Ts... xs) {
    self->send(fifo, xs...);
    sched.prioritize(fifo);
    sched.run_once();
  }

  static actors::DeltasPtr deltas(kinformer::Deltas items) {
    return std::make_shared<kinformer::Deltas>(std::move(items));
  }

  void resync() {
    self->send(fifo, actors::resync_atom::value);
    run();
  }

  /// Keys in the Indexer, sorted.
  std::vector<std::string> cached_keys() const {
    auto keys = indexer->list_keys();
    std::sort(keys.begin(), keys.end());
    return keys;
  }
};

}  // namespace kinformer::testing
