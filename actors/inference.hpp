// actors/inference.hpp
//
// InferenceActor: forecasts for any actor (architecture.md §4 "Inference"). A
// requester sends one window for a named model; the actor batches windows of the
// same (model, seq_len, label_len, pred_len) (actors/inference_batcher.hpp), runs
// each batch as one model call on a backend worker, and answers every requester
// with its own slice of the output.
//
// Contract
//   * forecast answers with ForecastReply [pred_len, c_out], or an error for that
//     requester alone: Errc::unknown_model, Errc::invalid_input (shape, NaN/Inf),
//     Errc::overloaded (max_queue windows waiting: bounded memory, retry later),
//     Errc::model_failed (the backend threw on the batch: every window of that
//     batch gets it), Errc::stopped (the actor was shut down while it waited).
//   * A batch is dispatched when its bucket holds max_batch windows or its oldest
//     window is due: at its arrival + max_delay, less the actor's own overhead
//     (timer wake-up, hand-overs, answers going out) and the model call's excess
//     over its typical time (learned from deadline batches on an idle worker,
//     InferenceBatcher::close_margin), so that 99% of lone windows' answers leave
//     by arrival + max_delay + the typical model time. The timer is armed for
//     that absolute time. Dispatch happens only while fewer than max_in_flight
//     batches are with the worker: other windows wait and join a later batch.
//   * A window's answer does not depend on the other windows of its batch beyond
//     floating-point reassociation in the backend (ProbSparse samples are drawn per
//     forward pass and shared by the batch, top-u is chosen per window); a near-tie
//     in top-u can turn such a rounding difference into a visible one
//     (informer-model.md §3.4).
//   * The backend worker is a detached actor (own thread) that owns the backends:
//     a model call never blocks a scheduler thread. Run the process with
//     OMP_WAIT_POLICY=PASSIVE (models/openmp_env.hpp). spawn_inference logs the
//     backend it chose (runtime/log.hpp, unless quiet) and warns when it is not set.
//   * metrics answers InferenceMetrics at once (batch-size histogram, queue delay,
//     model time, counters). The same go to options.metrics, label inference:
//       kinformer_inference_requests_total             counter   forecast requests
//       kinformer_inference_rejected_total{reason}     counter   unknown_model, invalid_input, overloaded
//       kinformer_inference_failed_total               counter   windows of batches the backend failed
//       kinformer_inference_queue_depth                gauge     windows waiting for a batch
//       kinformer_inference_batch_size                 histogram windows per model call
//       kinformer_inference_queue_delay_seconds        histogram from a window's arrival to its batch's
//       dispatch kinformer_inference_model_duration_seconds     histogram one model call (one batch)
//   * An exit message (e.g. user_shutdown) fails every waiting request with
//     Errc::stopped, then the actor and its worker quit.
// Threading: actor. Errors: caf::error of category "kinformer" (actors/errors.hpp).
// Not here: across processes (serve-inference publishes this interface; actors/inference_client.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/inference_batcher.hpp"
#include "actors/inference_messages.hpp"
#include "models/backend.hpp"
#include "runtime/metrics.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

using InferenceActor = caf::typed_actor<caf::replies_to<forecast_atom, ForecastRequest>::with<ForecastReply>,
                                        caf::replies_to<metrics_atom>::with<InferenceMetrics>>;

/// One model to load: its name in requests, its config JSON and safetensors files.
struct InferenceModel {
  std::string name;
  std::string config_path;
  std::string weights_path;
  models::Precision precision = models::Precision::fp32;  // bf16: onednn only
};

/// What spawn_inference needs; all but `models` optional.
struct InferenceOptions {
  std::vector<InferenceModel> models;
  std::string backend = "auto";  // "auto": models::preferred_backend() (cuda when present, else onednn)
  BatcherOptions batching;
  // Batches handed to the worker before the first is answered. 2: the next batch
  // waits in the worker's mailbox, so the worker does not idle while the answers
  // of the last one go out; 1: batches form until the worker is free (larger
  // batches under moderate load, a gap between batches at saturation).
  std::size_t max_in_flight = 2;
  // Batches of at most this many windows run on the worker's thread alone (onednn;
  // models::BackendOptions::serial_max_batch): a lone window's model call then
  // takes no OpenMP wake-ups, which under light load are most of its time and all
  // of its tail. Larger batches, as at saturation, use every OpenMP thread.
  int64_t serial_max_batch = 1;
  bool detached_worker = true;  // false only for deterministic tests (the worker then runs on the scheduler)
  bool quiet = false;           // true: no log line on stderr
  /// Where the actor's metrics go (label inference=name; must outlive the actor);
  /// null = none. See the contract.
  MetricsRegistry* metrics = &default_registry();
  std::string name = "inference";
};

/// Loads every model (config + weights) and makes its backend on the calling
/// thread, then spawns the actor and its worker. Fails with
/// Errc::backend_unavailable or Errc::invalid_input naming the model and cause.
Result<InferenceActor> spawn_inference(caf::actor_system& system, const InferenceOptions& options);

/// The same with models already in memory (tests, benches): name -> config, weights.
struct LoadedModel {
  std::string name;
  models::InformerConfig config;
  std::shared_ptr<const models::InformerWeights> weights;
  models::Precision precision = models::Precision::fp32;
  std::shared_ptr<models::Backend> backend =
      nullptr;  // optional: run on this one instead of making one (test fakes)
};
Result<InferenceActor> spawn_inference(caf::actor_system& system, std::vector<LoadedModel> models,
                                       const InferenceOptions& options);

/// Names the message types for the io middleman; call on both sides of a remote
/// connection (serve-inference and its clients) before the actor_system starts.
void register_inference_types(caf::actor_system_config& config);

}  // namespace kinformer::actors
