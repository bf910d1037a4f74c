#include "examples/forecasting/forecast_chain.hpp"

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "examples/forecasting/forecaster.hpp"
#include "examples/forecasting/window_board.hpp"

namespace kinformer::forecasting {
namespace {

const MetricSeries* series_of(const actors::Notification& n) {
  return static_cast<const MetricSeries*>(n.typed_object.get());
}

// The window builder's hop: runs in its own handler actor (the informer owns it).
actors::HopFunc window_builder(std::shared_ptr<WindowBoard> board, WindowShape shape, ChainStats stats,
                               std::function<void(const std::string&)> on_error) {
  return [=](const actors::Notification& n) {
    const MetricSeries* series = series_of(n);
    if (!series || !window_full(*series, shape)) return Verdict::next;  // later hops' predicates drop it
    if (series->forecast && series->forecast->based_on == series->points.back().time) {
      ++*stats.up_to_date;
      return Verdict::stop;
    }
    auto window = build_window(*series, shape);
    if (!window) {
      ++*stats.errors;
      if (on_error) on_error(window.error().message);
      return Verdict::stop;
    }
    // The entry shares the typed object the Controller decoded (no copy of the points).
    auto pinned = std::shared_ptr<const MetricSeries>(n.typed_object, series);
    if (!board->post({series->key, series->resource_version},
                     {pinned, std::move(window).value(), std::nullopt})) {
      ++*stats.errors;
      if (on_error) on_error(series->key + ": the window board is full");
      return Verdict::stop;
    }
    ++*stats.windows;
    return Verdict::next;
  };
}

actors::HandlerOptions hop(const ChainOptions& options, int priority, actors::Predicate predicate) {
  actors::HandlerOptions h;
  h.group = options.group;
  h.priority = priority;
  h.predicate = std::move(predicate);
  h.supervision.policy = actors::FailurePolicy::skip;
  h.supervision.hop_timeout = options.forecast_timeout + std::chrono::seconds(10);
  return h;
}

}  // namespace

actors::Predicate series_changed() {
  return actors::of_type({actors::NotificationType::added, actors::NotificationType::updated}) &&
         actors::generation_changed();
}

actors::Predicate window_is_full(const WindowShape& shape) {
  return [shape](const actors::Notification& n) {
    const MetricSeries* series = series_of(n);
    return series && window_full(*series, shape);
  };
}

Result<std::unique_ptr<ForecastChain>> ForecastChain::add_to(Informer<MetricSeries>& informer,
                                                             ChainOptions options) {
  std::unique_ptr<ForecastChain> chain(new ForecastChain());
  auto board = std::make_shared<WindowBoard>();
  SharedInformer& shared = informer.shared();
  auto& system = shared.system();
  auto ready = series_changed() && window_is_full(options.shape);

  auto builder = shared.add_hop_handler(window_builder(board, options.shape, chain->stats_, options.on_error),
                                        hop(options, 10, series_changed()));
  if (!builder) return builder.error();

  ForecasterOptions forecaster;
  forecaster.inference = options.inference;
  forecaster.board = board;
  forecaster.timeout = options.forecast_timeout;
  forecaster.on_error = options.on_error;
  forecaster.forecasts = chain->stats_.forecasts;
  forecaster.errors = chain->stats_.errors;
  auto spawned = chain->spawned_;
  auto forecasting =
      shared.add_handler(spawned->add(spawn_forecaster(system, forecaster)), hop(options, 20, ready),
                         [forecaster, spawned](caf::actor_system& sys) {
                           return spawned->add(spawn_forecaster(sys, forecaster));
                         });
  if (!forecasting) return forecasting.error();

  StatusWriterOptions writer;
  writer.client = options.client;
  writer.board = board;
  writer.shape = options.shape;
  writer.on_written = options.on_written;
  writer.on_error = options.on_error;
  writer.written = chain->stats_.written;
  writer.errors = chain->stats_.errors;
  auto writing = shared.add_handler(
      spawned->add(spawn_status_writer(system, writer)), hop(options, 30, ready),
      [writer, spawned](caf::actor_system& sys) { return spawned->add(spawn_status_writer(sys, writer)); });
  if (!writing) return writing.error();
  return chain;
}

ForecastChain::~ForecastChain() { stop(); }

actors::HandlerActor ForecastChain::Spawned::add(actors::HandlerActor actor) {
  std::lock_guard<std::mutex> lock(mu);
  actors.push_back(actor);
  return actor;
}

void ForecastChain::stop() {
  std::lock_guard<std::mutex> lock(spawned_->mu);
  for (auto& actor : spawned_->actors) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  spawned_->actors.clear();
}

}  // namespace kinformer::forecasting
