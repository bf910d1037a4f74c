// actors/shared_informer.hpp
//
// SharedInformer: the facade that spawns and wires one informer's actors —
// Reflector → DeltaFIFO → Controller (→ Indexer) → Processor → handler actors —
// and exposes what client-go's SharedIndexInformer does (architecture.md §4;
// informer-semantics.md §7).
//
// Usage
//   actors::configure_scheduler(cfg);              // actors/scheduler.hpp
//   caf::actor_system system{cfg};
//   kinformer::SharedInformerOptions options;
//   options.source = source;                       // a std::shared_ptr<ListWatch>
//   kinformer::SharedInformer informer(system, options);
//   kinformer::HandlerFuncs funcs;
//   funcs.on_add = [](const kinformer::ObjectPtr& o, bool initial) { ... };
//   auto handle = informer.add_handler(funcs);   // Result<HandlerRegistration>
//   informer.run();
//   informer.wait_for_sync(5s);
//   auto pod = informer.indexer().get_by_key("default/web-0");
//   informer.stop();
//
// Contract
//   * run() starts the actors once; later calls (also after stop()) do nothing.
//   * set_transform(), set_watch_error_handler(): before run() only, else
//     Errc::already_started. The transform runs in the DeltaFIFO actor on every
//     object entering it (never on resyncs or tombstones).
//   * add_handler(): every registration gets its own handler actor (the lambda,
//     chain and class forms spawn one, with a factory so that supervision can
//     restart it; any HandlerActor works too, restartable when given a factory)
//     and returns a handle. HandlerOptions say its group, priority, predicate,
//     resync period and failure policy (actors/processor.hpp). Before run() the
//     handler gets the initial list as adds with the initial-list flag; later it
//     first gets the current cache replayed that way, then the changes after it.
//     After stop(): Errc::stopped ("...because it has stopped already").
//   * replace_handler(): swaps a registration's actor, predicate, priority,
//     resync period or policy atomically (the group stays): nothing is lost or
//     delivered to both. Errc::stopped after stop(); an unknown or foreign
//     handle: Errc::invalid_key.
//   * remove_handler(): stops further notifications (queued ones are dropped,
//     the batch in flight is answered); idempotent; handles of another informer
//     are ignored; safe after stop().
//   * indexer(): readable from any thread at any time; written only by the
//     Controller. has_synced(): the first list is in the Indexer.
//   * Metrics: from construction every stage counts into options.metrics under
//     labels informer=name(), resource=<the source's resource>, and the registry's
//     readiness check "informer <name> (<resource>) has not synced" holds until
//     has_synced() (so /readyz means every informer has synced); the destructor
//     removes it.
//   * stop(): the Reflector ends, the FIFO closes and drains, the Controller
//     applies what was popped, handlers get what was handed on, then every actor
//     this informer spawned (handler actors of the lambda form included) has
//     ended when stop() returns — or is killed after options.stop_timeout.
//     The destructor stops.
// Threading: every member function may be called from any thread except from
//   inside an actor of this informer (stop() and wait_for_sync() block).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/controller.hpp"
#include "actors/delta_fifo.hpp"
#include "actors/handler.hpp"
#include "actors/informer_metrics.hpp"
#include "actors/notification.hpp"
#include "actors/predicates.hpp"
#include "actors/processor.hpp"
#include "actors/reflector.hpp"
#include "actors/registration.hpp"
#include "runtime/backoff.hpp"
#include "runtime/indexer.hpp"
#include "runtime/list_watch.hpp"
#include "runtime/metrics.hpp"
#include "runtime/result.hpp"

namespace kinformer {

using actors::ChainFuncs;
using actors::DeletedObject;
using actors::FailurePolicy;
using actors::HandlerFuncs;
using actors::HandlerOptions;
using actors::Predicate;
using actors::SupervisionOptions;
using actors::Verdict;

using TransformFunc = std::function<Result<ObjectPtr>(ObjectPtr)>;
using WatchErrorHandler = std::function<void(const Error&)>;

/// The informer's options embed each part's own options (as client-go's Config
/// embeds its parts), so every part option is reachable. The informer fills in
/// what wires the parts together; what it sets is named on each part.
struct SharedInformerOptions {
  std::shared_ptr<ListWatch> source;  // required
  /// 0 = never resync. Otherwise handlers with a resync period get resync updates
  /// each of their periods (actors/processor.hpp).
  std::chrono::milliseconds resync_period{0};
  Indexers indexers;  // in addition to "namespace"
  /// Set by the informer: source, fifo, resync_period (0: the Processor decides
  /// resyncs), should_resync, watch_error_handler (set_watch_error_handler()).
  actors::ReflectorOptions reflector;
  /// Set by the informer: transformer (set_transform()).
  DeltaFIFOOptions fifo;
  /// Set by the informer: fifo, downstream, indexer, status. decoder: the typed
  /// layer's (Informer<T> sets it).
  actors::ControllerOptions controller;
  /// Set by the informer: resync_period (from above), status.
  actors::ProcessorOptions processor;
  std::chrono::milliseconds stop_timeout{10000};
  const void* decoder_tag = nullptr;  // identifies controller.decoder's type
  /// Where every stage's metrics go (actors/informer_metrics.hpp), and whose
  /// /readyz waits for this informer's sync (runtime/metrics_server.hpp); it must
  /// outlive the informer. null = counted in a registry of the informer's own,
  /// exposed nowhere.
  MetricsRegistry* metrics = &default_registry();
  /// The "informer" label and log field; "" = the source's resource ("pods"). A
  /// name another live informer of the registry holds gets a suffix ("pods-2").
  std::string name;
};

/// A registration of one handler with one informer.
class HandlerRegistration {
 public:
  HandlerRegistration() = default;
  bool valid() const noexcept { return registration_ != nullptr; }
  actors::RegistrationId id() const noexcept { return registration_ ? registration_->id : 0; }
  /// The initial list (or, for a late joiner, the replay) has been handled by
  /// this handler (informer-semantics.md §7.6).
  bool has_synced() const noexcept;
  /// Batches this handler has answered.
  std::uint64_t handled_batches() const noexcept;
  /// Restarts its supervision made.
  std::uint64_t restarts() const noexcept;
  /// Notifications given up on (dead letters).
  std::uint64_t dead_letters() const noexcept;
  /// Supervision removed the registration (restart intensity exceeded, or a dead
  /// actor without factory); failure() says why.
  bool failed() const noexcept;
  std::string failure() const;

 private:
  friend class SharedInformer;
  const void* owner_ = nullptr;
  actors::RegistrationPtr registration_;
  std::shared_ptr<const actors::InformerStatus> informer_status_;
};

class SharedInformer {
 public:
  SharedInformer(caf::actor_system& system, SharedInformerOptions options);
  ~SharedInformer();
  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;

  [[nodiscard]] Result<void> set_transform(TransformFunc transform);
  [[nodiscard]] Result<void> set_watch_error_handler(WatchErrorHandler handler);
  /// The typed layer's decoder (Informer<T>); before run() only.
  [[nodiscard]] Result<void> set_decoder(actors::Decoder decoder, const void* tag);
  const void* decoder_tag() const;

  /// Starts the actors (once).
  void run();

  [[nodiscard]] Result<HandlerRegistration> add_handler(HandlerFuncs funcs, HandlerOptions options = {});
  [[nodiscard]] Result<HandlerRegistration> add_handler(ChainFuncs funcs, HandlerOptions options = {});
  [[nodiscard]] Result<HandlerRegistration> add_handler(std::shared_ptr<actors::Handler> handler,
                                                        HandlerOptions options = {});
  /// Any handler actor; with a factory, supervision can restart it.
  [[nodiscard]] Result<HandlerRegistration> add_handler(actors::HandlerActor handler,
                                                        HandlerOptions options = {},
                                                        actors::HandlerFactory factory = {});
  /// A function-based handler that sees whole notifications (the typed layer uses it).
  [[nodiscard]] Result<HandlerRegistration> add_notification_handler(actors::NotificationFunc func,
                                                                     HandlerOptions options = {});
  [[nodiscard]] Result<HandlerRegistration> add_hop_handler(actors::HopFunc func,
                                                            HandlerOptions options = {});

  /// Replaces the handler behind `handle` (see the contract).
  [[nodiscard]] Result<void> replace_handler(const HandlerRegistration& handle, HandlerFuncs funcs,
                                             HandlerOptions options);
  [[nodiscard]] Result<void> replace_handler(const HandlerRegistration& handle, actors::HopFunc func,
                                             HandlerOptions options);
  [[nodiscard]] Result<void> replace_handler(const HandlerRegistration& handle, actors::HandlerActor handler,
                                             HandlerOptions options, actors::HandlerFactory factory = {});
  void remove_handler(const HandlerRegistration& handle);

  const Indexer& indexer() const noexcept { return *indexer_; }
  std::shared_ptr<const Indexer> indexer_ptr() const noexcept { return indexer_; }
  bool has_synced() const noexcept { return status_->indexer_synced; }
  /// Polls has_synced() until it is true (true), or the timeout passes or the
  /// informer stops (false).
  bool wait_for_sync(std::chrono::milliseconds timeout) const;

  void stop();
  bool is_started() const;
  bool is_stopped() const;
  /// Handler failures of any kind (reported exceptions, timeouts, dead actors).
  std::uint64_t handler_failures() const noexcept { return status_->handler_failures; }
  /// The largest coalesced backlog a handler group had.
  std::uint64_t backlog_max() const noexcept { return status_->backlog_max; }
  /// Times a lagging handler group was cut loose from the credit (actors/processor.hpp).
  std::uint64_t groups_cut_loose() const noexcept { return status_->groups_cut_loose; }
  caf::actor_system& system() const noexcept { return system_; }
  /// The informer's label in metrics and logs (options.name, made unique).
  const std::string& name() const noexcept { return metrics_->informer(); }
  /// Its instruments (relists(), and the registry they count in).
  const actors::InformerMetrics& metrics() const noexcept { return *metrics_; }

 private:
  Result<HandlerRegistration> add(actors::HandlerActor handler, actors::HandlerFactory factory,
                                  HandlerOptions options, bool owned);
  Result<void> replace(const HandlerRegistration& handle, actors::HandlerActor handler,
                       actors::HandlerFactory factory, HandlerOptions options, bool owned);
  /// A spawned function handler and the factory that makes another one like it.
  std::pair<actors::HandlerActor, actors::HandlerFactory> spawn_owned(actors::HopFunc func);

  caf::actor_system& system_;
  SharedInformerOptions options_;          // guarded by mu_ until run()
  TransformFunc transform_;                // guarded by mu_
  WatchErrorHandler watch_error_handler_;  // guarded by mu_
  std::shared_ptr<Indexer> indexer_;
  std::shared_ptr<actors::InformerStatus> status_ = std::make_shared<actors::InformerStatus>();
  std::unique_ptr<MetricsRegistry> own_registry_;  // when options.metrics is null
  actors::InformerMetricsPtr metrics_;             // set in the constructor, never changed
  RegistryHook collector_;                         // scrape-time cache gauges
  RegistryHook readiness_;                         // synced, for /readyz

  mutable std::mutex mu_;
  bool started_ = false;                                                     // guarded by mu_
  bool stopped_ = false;                                                     // guarded by mu_
  actors::RegistrationId next_id_ = 1;                                       // guarded by mu_
  std::map<actors::RegistrationId, actors::RegistrationPtr> registrations_;  // guarded by mu_; live ones
  std::vector<actors::HandlerActor> owned_handlers_;  // guarded by mu_; every one spawned
  actors::ReflectorActor reflector_;                  // guarded by mu_
  actors::DeltaFIFOActor fifo_;                       // guarded by mu_
  actors::ControllerActor controller_;                // guarded by mu_
  actors::ProcessorActor processor_;                  // guarded by mu_
};

}  // namespace kinformer
