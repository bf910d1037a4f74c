#include "actors/inference.hpp"

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/exit_reason.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/errors.hpp"
#include "actors/every_actor.hpp"
#include "actors/tsan.hpp"
#include "models/informer_weights.hpp"
#include "models/model_error.hpp"
#include "models/openmp_env.hpp"
#include "runtime/home_cpu.hpp"
#include "runtime/log.hpp"

namespace kinformer::actors::detail {

// What the front actor and its worker exchange: local only (shared, never copied).
struct BatchOutput {
  models::Tensor out;  // [n, pred_len, c_out]
  double model_ms = 0;
  // The model call's start and end on the actor system's clock (virtual in tests),
  // comparable with the front's timestamps; model_ms is always real time.
  BatchClock::time_point started, ended;
  std::string error;  // the backend's exception text; empty on success
};
using BatchPtr = std::shared_ptr<const Batch>;
using BatchOutputPtr = std::shared_ptr<const BatchOutput>;
using Backends = std::map<std::string, std::shared_ptr<models::Backend>>;

}  // namespace kinformer::actors::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::detail::BatchPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::actors::detail::BatchOutputPtr)

namespace kinformer::actors {
namespace {

using detail::Backends;
using detail::BatchOutput;
using detail::BatchOutputPtr;
using detail::BatchPtr;

using WorkerActor = caf::typed_actor<caf::replies_to<run_batch_atom, BatchPtr>::with<BatchOutputPtr>>;
// The front's own timer message stays off the public interface (caf-0.17.md §3).
using Impl = InferenceActor::extend<caf::reacts_to<batch_due_atom, uint64_t>>;
using ReplyPromise = caf::typed_response_promise<ForecastReply>;

/// The actor's instruments in InferenceOptions::metrics (see the header), looked up once.
struct Instruments {
  Instruments(MetricsRegistry& registry, const std::string& name)
      : requests(
            registry
                .counter("kinformer_inference_requests_total", "Forecast requests received.", {"inference"})
                .with({name})),
        rejected(registry.counter("kinformer_inference_rejected_total",
                                  "Forecast requests refused, by reason.", {"inference", "reason"})),
        failed(registry
                   .counter("kinformer_inference_failed_total", "Windows of batches the backend failed.",
                            {"inference"})
                   .with({name})),
        queue_depth(
            registry.gauge("kinformer_inference_queue_depth", "Windows waiting for a batch.", {"inference"})
                .with({name})),
        batch_size(registry
                       .histogram("kinformer_inference_batch_size", "Windows per model call.", {"inference"},
                                  exponential_buckets(1, 2, 9))  // 1 .. 256: one family for every actor
                       .with({name})),
        queue_delay(registry
                        .histogram("kinformer_inference_queue_delay_seconds",
                                   "Time from a window's arrival to its batch's dispatch.", {"inference"})
                        .with({name})),
        model_seconds(registry
                          .histogram("kinformer_inference_model_duration_seconds",
                                     "Time of one model call (a batch).", {"inference"})
                          .with({name})),
        name_(name) {}

  void reject(Errc code) {
    rejected
        .with({name_, code == Errc::unknown_model ? "unknown_model"
                      : code == Errc::overloaded  ? "overloaded"
                                                  : "invalid_input"})
        .inc();
  }

  Counter& requests;
  Family<Counter>& rejected;
  Counter& failed;
  Gauge& queue_depth;
  Histogram& batch_size;
  Histogram& queue_delay;
  Histogram& model_seconds;

 private:
  std::string name_;
};
using InstrumentsPtr = std::shared_ptr<Instruments>;

double ms_between(BatchClock::time_point from, BatchClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// The worker owns the backends; a model call blocks only its own thread.
struct WorkerState {
  Backends backends;

  BatchOutputPtr run(const Batch& batch, caf::actor_clock& clock) {
    auto output = std::make_shared<BatchOutput>();
    auto backend = backends.find(batch.key.model);
    if (backend == backends.end()) {
      output->error = "no backend for model '" + batch.key.model + "'";
      return output;
    }
    output->started = clock.now();
    const auto start = BatchClock::now();
    try {  // models/ may throw (ModelError, dnnl::error): this batch fails, the worker lives on
      backend->second->forecast({batch.x_enc, batch.x_mark_enc, batch.x_dec, batch.x_mark_dec}, output->out);
    } catch (const std::exception& e) {
      output->error = e.what();
    }
    output->model_ms = ms_between(start, BatchClock::now());
    output->ended = clock.now();
    return output;
  }
};

WorkerActor::behavior_type worker(WorkerActor::stateful_pointer<WorkerState> self,
                                  std::shared_ptr<Backends> backends, bool own_thread) {
  // Spawned from a scheduler worker, its thread may carry the home CPU's pin, and the
  // model's OpenMP threads would inherit it: one CPU for the whole model.
  if (own_thread) home_cpu::leave();
  self->state.backends = std::move(*backends);
  return {
      handed_off([=](run_batch_atom, const BatchPtr& batch) { return self->state.run(*batch, self->clock()); }),
  };
}

struct FrontState {
  InferenceBatcher batcher;
  std::unordered_map<Ticket, ReplyPromise> waiting;  // every admitted ticket until it is answered
  Ticket next_ticket = 1;
  WorkerActor worker;
  std::size_t in_flight = 0;  // batches with the worker, at most max_in_flight
  std::size_t max_in_flight = 2;
  uint64_t timer_generation = 0;                    // a batch_due with another generation is stale
  std::optional<BatchClock::time_point> timer_due;  // when the live timer fires; none armed if empty
  InferenceMetrics metrics;
  InstrumentsPtr instruments;  // null = none

  using Self = Impl::stateful_pointer<FrontState>;

  caf::result<ForecastReply> forecast(Self self, ForecastRequest& request) {
    ++metrics.requests;
    if (instruments) instruments->requests.inc();
    const Ticket ticket = next_ticket++;
    auto admitted = batcher.admit(ticket, std::move(request), self->clock().now());
    if (!admitted) {
      count_rejection(admitted.error().code);
      return to_caf_error(admitted.error());
    }
    auto promise = self->make_response_promise<ForecastReply>();
    waiting.emplace(ticket, promise);
    dispatch(self);
    return promise;
  }

  void timer_fired(Self self, uint64_t generation) {
    if (generation != timer_generation) return;
    timer_due.reset();
    dispatch(self);
  }

  // `idle`: the worker had nothing else when the batch was handed over.
  void finished(Self self, const Batch& batch, const BatchOutput& output, bool idle) {
    --in_flight;
    metrics.model_time.add(output.model_ms);
    if (instruments) instruments->model_seconds.observe(output.model_ms / 1000.0);
    if (!output.error.empty()) {
      fail(batch.tickets,
           Error{Errc::model_failed, "batch of " + std::to_string(batch.tickets.size()) + " for model '" +
                                         batch.key.model + "' failed: " + output.error});
    } else {
      for (std::size_t i = 0; i < batch.tickets.size(); ++i)
        answer(batch.tickets[i], InferenceBatcher::slice(output.out, i));
      // Only a deadline batch on an idle worker shows pure overhead (no queueing in it).
      if (batch.by_deadline && idle) learn_overhead(self, batch, output);
    }
    dispatch(self);
  }

  void worker_failed(Self self, const Batch& batch, const caf::error& error) {
    --in_flight;
    fail(batch.tickets,
         Error{Errc::model_failed, "the backend worker failed: " + self->system().render(error)});
    dispatch(self);
  }

  void shutdown(Self self, const caf::exit_msg& msg) {
    std::vector<Ticket> all;
    for (const auto& [ticket, promise] : waiting) all.push_back(ticket);
    fail(all, Error{Errc::stopped, "the inference actor stopped: " + self->system().render(msg.reason)});
    batcher.drain();
    self->quit(msg.reason);
  }

  InferenceMetrics snapshot() {
    metrics.queued = batcher.queued();
    return metrics;
  }

 private:
  // Hands ready batches to the worker while it has fewer than max_in_flight, then
  // keeps one timer armed for the next deadline (none while the worker is full:
  // its next answer dispatches again).
  void dispatch(Self self) {
    const auto now = self->clock().now();
    while (in_flight < max_in_flight) {
      auto batch = batcher.take_ready(now);
      if (!batch) break;
      send_to_worker(self, std::move(*batch), now);
    }
    metrics.queued = batcher.queued();
    if (instruments) instruments->queue_depth.set(static_cast<double>(metrics.queued));
    if (in_flight >= max_in_flight) return;
    auto due = batcher.next_deadline();
    if (!due || (timer_due && *timer_due <= *due)) return;
    timer_due = due;  // absolute: anchored to the oldest window's arrival, not to now
    self->scheduled_send(self, *due, batch_due_atom::value, ++timer_generation);
  }

  // Timer wake-up and hand-over up to the model call, and the answers going out
  // after it, with the model call's own time: the batcher closes later batches early
  // by how late answers reach their requesters against due + the typical model time.
  // The answers' way back is not seen here; it is taken to cost what the oldest
  // window's way in cost (both are one message and one wake-up of the receiver).
  void learn_overhead(Self self, const Batch& batch, const BatchOutput& output) {
    const auto overhead = (output.started - batch.due) + (self->clock().now() - output.ended);
    batcher.observe_lateness(batch.tickets.size(), overhead + batch.way_in, output.ended - output.started);
    metrics.overhead.add(std::chrono::duration<double, std::milli>(overhead).count());
    metrics.close_margin_ms = std::chrono::duration<double, std::milli>(batcher.close_margin()).count();
  }

  void send_to_worker(Self self, Batch batch, BatchClock::time_point now) {
    const bool idle = in_flight == 0;
    ++in_flight;
    for (auto arrived : batch.arrived) {
      metrics.queue_delay.add(ms_between(arrived, now));
      if (instruments) instruments->queue_delay.observe(ms_between(arrived, now) / 1000.0);
    }
    const auto n = batch.tickets.size();
    if (instruments) instruments->batch_size.observe(static_cast<double>(n));
    if (metrics.batch_sizes.size() <= n) metrics.batch_sizes.resize(n + 1, 0);
    ++metrics.batch_sizes[n];
    auto shared = std::make_shared<const Batch>(std::move(batch));
    detail::handing_over();
    self->request(worker, caf::infinite, run_batch_atom::value, BatchPtr{shared})
        .then(handed_off([=](const BatchOutputPtr& out) { self->state.finished(self, *shared, *out, idle); }),
              handed_off([=](caf::error& err) { self->state.worker_failed(self, *shared, err); }));
  }

  void answer(Ticket ticket, ForecastReply reply) {
    auto it = waiting.find(ticket);
    if (it == waiting.end()) return;
    ++metrics.answered;
    detail::handing_over();
    it->second.deliver(std::move(reply));
    waiting.erase(it);
  }

  void fail(const std::vector<Ticket>& tickets, const Error& error) {
    for (auto ticket : tickets) {
      auto it = waiting.find(ticket);
      if (it == waiting.end()) continue;
      if (error.code == Errc::model_failed) {
        ++metrics.failed;
        if (instruments) instruments->failed.inc();
      }
      detail::handing_over();
      it->second.deliver(to_caf_error(error));
      waiting.erase(it);
    }
  }

  void count_rejection(Errc code) {
    if (instruments) instruments->reject(code);
    if (code == Errc::unknown_model)
      ++metrics.rejected_unknown;
    else if (code == Errc::overloaded)
      ++metrics.rejected_overload;
    else
      ++metrics.rejected_invalid;
  }
};

Impl::behavior_type front(Impl::stateful_pointer<FrontState> self, InferenceBatcher batcher,
                          std::shared_ptr<Backends> backends, bool detached_worker, std::size_t max_in_flight,
                          InstrumentsPtr instruments) {
  auto& st = self->state;
  st.instruments = std::move(instruments);
  st.batcher = std::move(batcher);
  st.max_in_flight = std::max<std::size_t>(max_in_flight, 1);
  st.metrics.batch_sizes.assign(st.batcher.options().max_batch + 1, 0);
  st.worker = detached_worker ? self->spawn<caf::detached + caf::linked>(worker, backends, true)
                              : self->spawn<caf::linked>(worker, backends, false);
  // Any exit (a shutdown request, the linked worker dying) answers every waiting requester first.
  self->set_exit_handler(handed_off([=](caf::exit_msg& msg) { self->state.shutdown(self, msg); }));
  return {
      handed_off([=](forecast_atom, ForecastRequest& request) { return self->state.forecast(self, request); }),
      handed_off([=](metrics_atom) { return self->state.snapshot(); }),
      handed_off([=](batch_due_atom, uint64_t generation) { self->state.timer_fired(self, generation); }),
  };
}

}  // namespace

Result<InferenceActor> spawn_inference(caf::actor_system& system, std::vector<LoadedModel> loaded,
                                       const InferenceOptions& options) {
  if (loaded.empty()) return Error{Errc::invalid_input, "inference: no model given"};
  std::string why;
  const std::string backend = options.backend == "auto" ? models::preferred_backend(&why) : options.backend;
  if (!options.quiet) {
    log::info("inference", "backend chosen",
              {{"inference", options.name}, {"backend", why.empty() ? backend : "auto -> " + why}});
    if (!models::passive_wait_policy())
      log::warn("inference", "OMP_WAIT_POLICY is not PASSIVE: OpenMP threads will spin between batches",
                {{"inference", options.name}});
  }
  InferenceBatcher batcher(options.batching);
  auto backends = std::make_shared<Backends>();
  for (auto& model : loaded) {
    if (backends->count(model.name))
      return Error{Errc::invalid_input, "inference: model '" + model.name + "' given twice"};
    try {
      models::BackendOptions backend_options;
      backend_options.precision = model.precision;
      backend_options.serial_max_batch = options.serial_max_batch;
      (*backends)[model.name] =
          model.backend ? model.backend
                        : models::make_backend(backend, model.config, model.weights, backend_options);
    } catch (const models::ModelError& e) {
      return Error{Errc::backend_unavailable, "inference: model '" + model.name + "': " + e.what()};
    }
    batcher.add_model(model.name, model.config);
  }
  auto instruments =
      options.metrics ? std::make_shared<Instruments>(*options.metrics, options.name) : nullptr;
  Impl impl = system.spawn(front, std::move(batcher), backends, options.detached_worker,
                           options.max_in_flight, std::move(instruments));
  return InferenceActor{impl};
}

Result<InferenceActor> spawn_inference(caf::actor_system& system, const InferenceOptions& options) {
  std::vector<LoadedModel> loaded;
  for (const auto& m : options.models) {
    try {
      auto config = models::load_config(m.config_path);
      auto weights = models::load_weights(m.weights_path, config);
      loaded.push_back(LoadedModel{m.name, config, std::move(weights), m.precision});
    } catch (const std::exception& e) {
      return Error{Errc::invalid_input, "inference: model '" + m.name + "': " + e.what()};
    }
  }
  return spawn_inference(system, std::move(loaded), options);
}

void register_inference_types(caf::actor_system_config& config) {
  config.add_message_type<ForecastRequest>("kinformer.ForecastRequest");
  config.add_message_type<ForecastReply>("kinformer.ForecastReply");
  config.add_message_type<InferenceMetrics>("kinformer.InferenceMetrics");
}

}  // namespace kinformer::actors
