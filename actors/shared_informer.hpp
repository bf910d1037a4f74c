// actors/shared_informer.hpp
//
// SharedInformer: the facade that spawns and wires one informer's actors —
// Reflector → DeltaFIFO → Controller (→ Indexer) → broadcaster → handler actors —
// and exposes what client-go's SharedIndexInformer does (architecture.md §4;
// informer-semantics.md §7).
//
// Usage
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
//   * add_handler(): every registration gets its own handler actor (the lambda
//     form spawns one; any HandlerActor works too) and returns a handle. Before
//     run() the handler gets the initial list as adds with the initial-list flag;
//     later it first gets the current cache replayed that way, then the changes
//     after it. After stop(): Errc::stopped ("...because it has stopped already").
//   * remove_handler(): stops further notifications (queued ones are dropped);
//     idempotent; handles of another informer are ignored; safe after stop().
//   * indexer(): readable from any thread at any time; written only by the
//     Controller. has_synced(): the first list is in the Indexer.
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
#include <vector>

#include <caf/fwd.hpp>

#include "actors/broadcaster.hpp"
#include "actors/controller.hpp"
#include "actors/delta_fifo.hpp"
#include "actors/handler.hpp"
#include "actors/notification.hpp"
#include "actors/reflector.hpp"
#include "actors/registration.hpp"
#include "runtime/backoff.hpp"
#include "runtime/indexer.hpp"
#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"

namespace kinformer {

using actors::DeletedObject;
using actors::HandlerFuncs;
using actors::HandlerOptions;

using TransformFunc = std::function<Result<ObjectPtr>(ObjectPtr)>;
using WatchErrorHandler = std::function<void(const Error&)>;

struct SharedInformerOptions {
  std::shared_ptr<ListWatch> source;  // required
  /// 0 = never resync. Handlers with a resync period get Sync updates each period.
  std::chrono::milliseconds resync_period{0};
  Indexers indexers;  // in addition to "namespace"
  std::int64_t page_size = 0;  // 0 = client-go's rules
  std::string label_selector;
  std::string field_selector;
  std::size_t max_batch = 256;           // keys per pop
  std::size_t max_buffered_keys = 1024;  // popped keys not yet handled by every handler
  std::size_t handler_window = 2;        // batches in one handler's mailbox
  std::size_t high_water_mark = 10000;   // FIFO depth that pauses the watch
  std::chrono::milliseconds stop_timeout{10000};
  /// The Reflector's back-off between failed list/watch cycles (client-go's defaults).
  BackoffOptions backoff;
  /// Typed layer: decodes each object once at ingest (Informer<T> sets it).
  actors::Decoder decoder;
  const void* decoder_tag = nullptr;  // identifies the decoder's type
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
  [[nodiscard]] Result<HandlerRegistration> add_handler(actors::HandlerActor handler, HandlerOptions options = {});
  /// A function-based handler that sees whole notifications (the typed layer uses it).
  [[nodiscard]] Result<HandlerRegistration> add_notification_handler(actors::NotificationFunc func,
                                                                     HandlerOptions options = {});
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
  /// Handler actors that went down (not removed): a typed handler actor that died.
  std::uint64_t handler_failures() const noexcept { return status_->handler_failures; }
  caf::actor_system& system() const noexcept { return system_; }

 private:
  Result<HandlerRegistration> add(actors::HandlerActor handler, HandlerOptions options, bool owned);

  caf::actor_system& system_;
  SharedInformerOptions options_;          // guarded by mu_ until run()
  TransformFunc transform_;                // guarded by mu_
  WatchErrorHandler watch_error_handler_;  // guarded by mu_
  std::shared_ptr<Indexer> indexer_;
  std::shared_ptr<actors::InformerStatus> status_ = std::make_shared<actors::InformerStatus>();
  std::shared_ptr<std::atomic<int>> resync_handlers_ = std::make_shared<std::atomic<int>>(0);

  mutable std::mutex mu_;
  bool started_ = false;  // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  actors::RegistrationId next_id_ = 1;                                // guarded by mu_
  std::map<actors::RegistrationId, actors::RegistrationPtr> registrations_;  // guarded by mu_; live ones
  std::vector<actors::HandlerActor> owned_handlers_;                   // guarded by mu_; every one spawned
  actors::ReflectorActor reflector_;                                   // guarded by mu_
  actors::DeltaFIFOActor fifo_;                                        // guarded by mu_
  actors::ControllerActor controller_;                                 // guarded by mu_
  actors::BroadcasterActor broadcaster_;                               // guarded by mu_
};

}  // namespace kinformer
