// examples/forecasting/forecast_stack.hpp
//
// ForecastStack: everything a forecasting program runs beside its own code, wired
// once: an HTTP client of the API server, an actor system, the batched inference
// actor with one model, an Informer<MetricSeries> over HTTP on one namespace and
// the forecast chain on it (forecast_chain.hpp). forecast_pipeline, ett_replay
// and the chain's tests start it the same way.
//
// Contract
//   * start() creates the namespace if needed, checks that the server serves
//     MetricSeries (a list of the namespace's), loads the model (config, weights,
//     scaler; univariate only), starts the informer and waits up to 30 s for its
//     sync; it fails with the first error (naming the file, the server or the step).
//   * stop() (also from the destructor): the informer drains and stops, then the
//     chain's actors and the inference actor end. Idempotent.
//   * inference_metrics() asks the inference actor (at most 10 s).
// Threading: start()/stop() from one owning thread, never from inside an actor.
// Errors: Result.
#pragma once

#include <caf/fwd.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/inference.hpp"
#include "examples/forecasting/forecast_chain.hpp"
#include "runtime/http/client.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

struct StackOptions {
  std::string server;      // the API server's URL
  std::string namespace_;  // where the MetricSeries live
  std::string model;       // its name in the inference actor and in status.forecast.model
  std::string
      config_path;  // the model's config JSON, weights (safetensors) and scaler (tools/train_informer.py)
  std::string weights_path;
  std::string scaler_path;
  std::string backend = "auto";
  std::size_t max_batch = 32;  // the inference actor's batch limit
  bool quiet = false;          // no log line from the inference actor
  std::function<void(const WrittenForecast&)> on_written;
  std::function<void(const std::string&)> on_error;
};

class ForecastStack {
 public:
  static Result<std::unique_ptr<ForecastStack>> start(StackOptions options);
  ~ForecastStack();
  ForecastStack(const ForecastStack&) = delete;
  ForecastStack& operator=(const ForecastStack&) = delete;

  void stop();
  http::Client& client() { return *client_; }
  const WindowShape& shape() const { return shape_; }
  const ChainStats& stats() const { return chain_->stats(); }
  Result<actors::InferenceMetrics> inference_metrics();

 private:
  ForecastStack() = default;
  std::shared_ptr<http::Client> client_;
  WindowShape shape_;
  std::unique_ptr<caf::actor_system_config> config_;
  std::unique_ptr<caf::actor_system> system_;
  actors::InferenceActor inference_;
  std::unique_ptr<Informer<MetricSeries>> informer_;
  std::unique_ptr<ForecastChain> chain_;
  bool stopped_ = false;
};

/// "--name value" pairs of argv[1..]: false on an unknown name or a name without value.
bool parse_flags(int argc, char** argv, const std::vector<std::string>& known,
                 std::map<std::string, std::string>& out);

}  // namespace kinformer::forecasting
