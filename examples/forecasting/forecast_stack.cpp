#include "examples/forecasting/forecast_stack.hpp"

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "examples/forecasting/series_api.hpp"
#include "models/ett_dataset.hpp"
#include "models/informer_config.hpp"
#include "runtime/http/http_list_watch.hpp"

namespace kinformer::forecasting {

Result<std::unique_ptr<ForecastStack>> ForecastStack::start(StackOptions options) {
  std::unique_ptr<ForecastStack> stack(new ForecastStack());
  try {  // models/ throws ModelError naming the file
    auto shape = window_shape(options.model, models::load_config(options.config_path),
                              models::read_ett_scaler(options.scaler_path));
    if (!shape) return shape.error();
    stack->shape_ = shape.value();
  } catch (const std::exception& e) {
    return Error{Errc::invalid_input, e.what()};
  }
  http::ClientConfig client_config;
  client_config.server = options.server;
  auto client = http::Client::create(client_config);
  if (!client) return client.error();
  stack->client_ = client.value();
  if (auto made = ensure_namespace(*stack->client_, options.namespace_); !made) return made.error();
  if (auto listed = call(*stack->client_, "GET", series_collection_path(options.namespace_)); !listed)
    return Error{Errc::server_error, options.server +
                                         " does not serve MetricSeries (start it with --resource " +
                                         std::string(metric_series_spec) + "): " + listed.error().message};

  stack->config_ = std::make_unique<caf::actor_system_config>();
  actors::configure_scheduler(*stack->config_);
  actors::register_errors(*stack->config_);
  stack->system_ = std::make_unique<caf::actor_system>(*stack->config_);
  actors::InferenceOptions inference;
  inference.models = {{options.model, options.config_path, options.weights_path}};
  inference.backend = options.backend;
  inference.batching.max_batch = options.max_batch;
  inference.quiet = options.quiet;
  auto spawned = actors::spawn_inference(*stack->system_, inference);
  if (!spawned) return spawned.error();
  stack->inference_ = spawned.value();

  SharedInformerOptions informer;
  informer.source = std::make_shared<http::HttpListWatch>(
      stack->client_,
      http::collection_path("metrics.kinformer.io", "v1", "metricseries", options.namespace_));
  stack->informer_ = std::make_unique<Informer<MetricSeries>>(*stack->system_, informer);
  ChainOptions chain;
  chain.shape = stack->shape_;
  chain.inference = stack->inference_;
  chain.client = stack->client_;
  chain.on_written = std::move(options.on_written);
  chain.on_error = std::move(options.on_error);
  auto added = ForecastChain::add_to(*stack->informer_, chain);
  if (!added) return added.error();
  stack->chain_ = std::move(added).value();
  stack->informer_->run();
  if (!stack->informer_->wait_for_sync(std::chrono::seconds(30)))
    return Error{Errc::connection_failed,
                 "the MetricSeries informer did not sync with " + options.server + " in 30 s"};
  return stack;
}

ForecastStack::~ForecastStack() { stop(); }

void ForecastStack::stop() {
  if (stopped_ || !system_) return;
  stopped_ = true;
  if (informer_) informer_->stop();
  if (chain_) chain_->stop();
  if (inference_) caf::anon_send_exit(inference_, caf::exit_reason::user_shutdown);
}

Result<actors::InferenceMetrics> ForecastStack::inference_metrics() {
  Result<actors::InferenceMetrics> result = Error{Errc::stopped, "the inference actor did not answer"};
  caf::scoped_actor self{*system_};
  self->request(inference_, std::chrono::seconds(10), actors::metrics_atom::value)
      .receive([&](const actors::InferenceMetrics& metrics) { result = metrics; },
               [&](caf::error& error) {
                 result = Error{Errc::stopped, system_->render(error)};
               });
  return result;
}

bool parse_flags(int argc, char** argv, const std::vector<std::string>& known,
                 std::map<std::string, std::string>& out) {
  for (int i = 1; i < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || std::find(known.begin(), known.end(), arg.substr(2)) == known.end() ||
        i + 1 >= argc)
      return false;
    out[arg.substr(2)] = argv[i + 1];
  }
  return true;
}

}  // namespace kinformer::forecasting
