#include "actors/delta_fifo.hpp"

#include <malloc.h>

#include <deque>
#include <vector>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/errors.hpp"
#include "actors/every_actor.hpp"

namespace kinformer::actors {
namespace {

using PopPromise = caf::typed_response_promise<PoppedBatchPtr>;

struct ParkedPop {
  PopPromise promise;
  std::size_t max_n = 1;
};

struct LowWaterWait {
  caf::typed_response_promise<std::size_t> promise;
  std::size_t mark = 0;
};

// Pops between two malloc_trim() calls while a large replace drains (see give_back()).
constexpr std::size_t trim_step = 16384;

struct FifoState {
  DeltaFIFO fifo;
  std::deque<ParkedPop> parked;    // pops that found the queue empty, oldest first
  std::vector<LowWaterWait> low_water;  // depth requests waiting for the queue to drain
  bool answered_synced = false;    // a pop has been answered since the FIFO became synced
  std::size_t trim_below = 0;      // trim once the queue is at or below this; 0 = none due
  std::size_t dropped_events = 0;  // watch events the transformer rejected
  InformerMetricsPtr metrics;      // null = none

  using Self = DeltaFIFOActor::stateful_pointer<FifoState>;

  caf::result<std::size_t> replace(Self self, const ListSnapshot& list) {
    auto done = fifo.replace(list.items, list.resource_version);
    trim_below = fifo.size() > trim_step ? fifo.size() - trim_step : 0;
    if (done && metrics) metrics->fifo_adds.inc(static_cast<double>(list.items.size()));
    wake(self);
    if (!done) return to_caf_error(done.error());
    return fifo.size();
  }

  std::size_t apply(Self self, const Deltas& deltas) {
    for (const auto& delta : deltas) {
      Result<void> done;
      switch (delta.type) {
        case DeltaType::added:
          done = fifo.add(delta.object);
          break;
        case DeltaType::deleted:
          done = fifo.delete_object(delta.object);
          break;
        default:
          done = fifo.update(delta.object);
          break;
      }
      if (!done) ++dropped_events;  // client-go logs and drops the event (§7.10)
      else if (metrics)
        metrics->fifo_adds.inc();
    }
    wake(self);
    return fifo.size();
  }

  std::size_t resync(Self self) {
    (void)fifo.resync();  // without a transformer resync cannot fail
    wake(self);
    return fifo.size();
  }

  caf::result<PoppedBatchPtr> pop(Self self, std::size_t max_n) {
    auto promise = self->make_response_promise<PoppedBatchPtr>();
    parked.push_back(ParkedPop{promise, max_n == 0 ? 1 : max_n});
    wake(self);
    return promise;
  }

  caf::result<std::size_t> wait_depth(Self self, std::size_t mark) {
    if (fifo.size() <= mark) return fifo.size();
    auto promise = self->make_response_promise<std::size_t>();
    low_water.push_back(LowWaterWait{promise, mark});
    return promise;
  }

  void shutdown(Self self) {
    fifo.close();
    wake(self);
  }

  /// While a replace of more than trim_step keys drains, returns freed memory to the
  /// OS every trim_step pops. The popped keys' entries (and the list's page buffers)
  /// are free, but glibc keeps them resident in the arenas they came from while the
  /// Controller's cache grows in other memory, so without this an informer's RSS
  /// peaks at the listed objects plus the whole queue: 6 MB of a 150k-pod list's
  /// peak (README, "A third pass"). malloc_trim is process-wide: it gives back the
  /// whole free pages of every arena (man 3 malloc_trim), so it runs ~9 times for
  /// such a list, not per pop.
  void give_back() {
    if (trim_below == 0 || fifo.size() > trim_below) return;
    ::malloc_trim(0);
    trim_below = fifo.size() > trim_step ? fifo.size() - trim_step : 0;
  }

  /// Answers the depth requests whose mark the queue is at or below (all once closed).
  void answer_low_water() {
    auto keep = low_water.begin();
    for (auto& wait : low_water) {
      if (fifo.size() <= wait.mark || fifo.is_closed()) {
        detail::handing_over();
        wait.promise.deliver(fifo.size());
      } else {
        *keep++ = std::move(wait);
      }
    }
    low_water.erase(keep, low_water.end());
  }

  /// Answers parked pops while something can be said: keys to hand out, the sync
  /// state flipped with an empty queue (an empty batch), or closed and drained.
  void wake(Self self) {
    while (!parked.empty()) {
      if (!fifo.empty()) {
        auto batch = fifo.pop_batch(parked.front().max_n);
        if (!batch) {
          detail::handing_over();
          parked.front().promise.deliver(to_caf_error(batch.error()));
        } else {
          give_back();
          auto popped = std::make_shared<PoppedBatch>(std::move(batch).value());
          if (metrics) metrics->fifo_pops.inc(static_cast<double>(popped->size()));
          detail::handing_over();
          parked.front().promise.deliver(PoppedBatchPtr{std::move(popped)});
        }
        answered_synced = fifo.has_synced();
      } else if (fifo.is_closed()) {
        detail::handing_over();
        parked.front().promise.deliver(to_caf_error(Error{Errc::fifo_closed, "the DeltaFIFO was shut down"}));
      } else if (fifo.has_synced() && !answered_synced) {
        answered_synced = true;  // e.g. an empty first list: tell the consumer
        detail::handing_over();
        parked.front().promise.deliver(PoppedBatchPtr{std::make_shared<PoppedBatch>()});
      } else {
        break;  // nothing to say to the parked pops yet
      }
      parked.pop_front();
    }
    if (!low_water.empty()) answer_low_water();
    if (metrics) metrics->fifo_depth.set(static_cast<double>(fifo.size()));
    if (fifo.is_closed() && fifo.empty()) self->quit();
  }
};

DeltaFIFOActor::behavior_type delta_fifo(DeltaFIFOActor::stateful_pointer<FifoState> self,
                                         DeltaFIFOOptions options, InformerMetricsPtr metrics) {
  self->state.fifo = DeltaFIFO(std::move(options));
  self->state.metrics = std::move(metrics);
  // Linked peers stopping on purpose do not end the FIFO: stop() drains it.
  declare_brief(self);
  self->set_exit_handler(ignore_graceful_exits(self));
  return {
      handed_off([=](replace_atom, const ListSnapshotPtr& list) { return self->state.replace(self, *list); }),
      handed_off([=](deltas_atom, const DeltasPtr& deltas) { return self->state.apply(self, *deltas); }),
      handed_off([=](resync_atom) { return self->state.resync(self); }),
      handed_off([=](pop_atom, const std::size_t& max_n) { return self->state.pop(self, max_n); }),
      handed_off([=](synced_atom) { return self->state.fifo.has_synced(); }),
      [=](depth_atom) { return self->state.fifo.size(); },
      handed_off([=](depth_atom, std::size_t mark) { return self->state.wait_depth(self, mark); }),
      handed_off([=](shutdown_atom) { self->state.shutdown(self); }),
  };
}

}  // namespace

DeltaFIFOActor spawn_delta_fifo(caf::actor_system& system, DeltaFIFOOptions options,
                                InformerMetricsPtr metrics) {
  return system.spawn(delta_fifo, std::move(options), std::move(metrics));
}

}  // namespace kinformer::actors
