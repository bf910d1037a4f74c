#include "actors/shared_informer.hpp"

#include <thread>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "actors/tsan.hpp"

namespace kinformer {

bool HandlerRegistration::has_synced() const noexcept {
  if (!registration_ || !informer_status_) return false;
  const auto& status = *registration_->status;
  return informer_status_->distributed_synced && status.attached && status.pending_initial <= 0;
}

std::uint64_t HandlerRegistration::handled_batches() const noexcept {
  return registration_ ? registration_->status->handled_batches.load() : 0;
}

std::uint64_t HandlerRegistration::restarts() const noexcept {
  return registration_ ? registration_->status->restarts.load() : 0;
}

std::uint64_t HandlerRegistration::dead_letters() const noexcept {
  return registration_ ? registration_->status->dead_letters.load() : 0;
}

bool HandlerRegistration::failed() const noexcept { return registration_ && registration_->status->failed; }

std::string HandlerRegistration::failure() const {
  return registration_ ? registration_->status->failure() : std::string();
}

SharedInformer::SharedInformer(caf::actor_system& system, SharedInformerOptions options)
    : system_(system), options_(std::move(options)), indexer_(std::make_shared<Indexer>(options_.indexers)) {
  if (!options_.metrics) {
    own_registry_ = std::make_unique<MetricsRegistry>();
    options_.metrics = own_registry_.get();
  }
  auto& registry = *options_.metrics;
  metrics_ = actors::InformerMetrics::make(registry, options_.name,
                                           options_.source ? options_.source->resource() : std::string());
  std::vector<std::string> index_names{std::string(namespace_index)};
  for (const auto& [index, func] : options_.indexers) index_names.push_back(index);
  // The hooks hold what they read, so they stay valid whatever is destroyed first.
  collector_ =
      registry.add_collector([metrics = metrics_, indexer = indexer_, status = status_, index_names] {
        metrics->collect(*indexer, index_names, status->indexer_synced);
      });
  readiness_ = registry.add_readiness_check(
      "informer " + metrics_->informer() + " (" + metrics_->resource() + ") has not synced",
      [status = status_] { return status->indexer_synced.load(); });
}

SharedInformer::~SharedInformer() {
  stop();
  collector_.reset();
  readiness_.reset();
}

Result<void> SharedInformer::set_transform(TransformFunc transform) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return Error{Errc::already_started, "set_transform after the informer started"};
  transform_ = std::move(transform);
  return {};
}

Result<void> SharedInformer::set_watch_error_handler(WatchErrorHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return Error{Errc::already_started, "set_watch_error_handler after the informer started"};
  watch_error_handler_ = std::move(handler);
  return {};
}

Result<void> SharedInformer::set_decoder(actors::Decoder decoder, const void* tag) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return Error{Errc::already_started, "set_decoder after the informer started"};
  options_.controller.decoder = std::move(decoder);
  options_.decoder_tag = tag;
  return {};
}

const void* SharedInformer::decoder_tag() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.decoder_tag;
}

bool SharedInformer::is_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

bool SharedInformer::is_stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_;
}

void SharedInformer::run() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) return;
  started_ = true;

  DeltaFIFOOptions fifo_options = options_.fifo;
  fifo_options.transformer = transform_;
  fifo_ = actors::spawn_delta_fifo(system_, std::move(fifo_options), metrics_);

  actors::ProcessorOptions processor_options = options_.processor;
  processor_options.resync_period = options_.resync_period;
  processor_options.status = status_;
  processor_options.metrics = metrics_;
  processor_ = actors::spawn_processor(system_, std::move(processor_options));

  actors::ControllerOptions controller_options = options_.controller;
  controller_options.fifo = fifo_;
  controller_options.downstream = processor_;
  controller_options.indexer = indexer_;
  controller_options.status = status_;
  controller_options.metrics = metrics_;
  controller_ = actors::spawn_controller(system_, std::move(controller_options));

  // Registrations made before run(): their replay is empty; the initial list
  // reaches them through the stream, flagged as such.
  for (const auto& [id, registration] : registrations_) {
    actors::detail::handing_over();
    caf::anon_send(controller_, actors::attach_atom::value, registration);
  }

  actors::ReflectorOptions reflector_options = options_.reflector;
  reflector_options.resync_period = std::chrono::milliseconds(0);  // the Processor's checks decide
  reflector_options.should_resync = nullptr;
  reflector_options.watch_error_handler = watch_error_handler_;
  reflector_options.metrics = metrics_;
  // a relist reuses cached objects (issue 8); not under a transform, which must see objects as sent
  if (!transform_)
    reflector_options.known_object = [indexer = indexer_](std::string_view key) {
      return indexer->get_by_key(key);
    };
  reflector_ = actors::spawn_reflector(system_, options_.source, fifo_, std::move(reflector_options));
}

std::pair<actors::HandlerActor, actors::HandlerFactory> SharedInformer::spawn_owned(actors::HopFunc func) {
  auto stats = std::make_shared<actors::HandlerStats>();
  actors::HandlerFactory factory = [func, stats](caf::actor_system& system) {
    return actors::spawn_handler(system, func, stats);
  };
  auto actor = factory(system_);
  return {std::move(actor), std::move(factory)};
}

Result<HandlerRegistration> SharedInformer::add_handler(HandlerFuncs funcs, HandlerOptions options) {
  return add_notification_handler(actors::dispatch_to(std::move(funcs)), std::move(options));
}

Result<HandlerRegistration> SharedInformer::add_handler(ChainFuncs funcs, HandlerOptions options) {
  return add_hop_handler(actors::dispatch_to(std::move(funcs)), std::move(options));
}

Result<HandlerRegistration> SharedInformer::add_handler(std::shared_ptr<actors::Handler> handler,
                                                        HandlerOptions options) {
  return add_hop_handler(actors::dispatch_to(std::move(handler)), std::move(options));
}

Result<HandlerRegistration> SharedInformer::add_notification_handler(actors::NotificationFunc func,
                                                                     HandlerOptions options) {
  return add_hop_handler(actors::always_next(std::move(func)), std::move(options));
}

Result<HandlerRegistration> SharedInformer::add_hop_handler(actors::HopFunc func, HandlerOptions options) {
  if (is_stopped())
    return Error{Errc::stopped, "handler was not added to shared informer because it has stopped already"};
  auto [actor, factory] = spawn_owned(std::move(func));
  return add(std::move(actor), std::move(factory), std::move(options), true);
}

Result<HandlerRegistration> SharedInformer::add_handler(actors::HandlerActor handler, HandlerOptions options,
                                                        actors::HandlerFactory factory) {
  return add(std::move(handler), std::move(factory), std::move(options), false);
}

Result<HandlerRegistration> SharedInformer::add(actors::HandlerActor handler, actors::HandlerFactory factory,
                                                HandlerOptions options, bool owned) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) {
    if (owned) caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    return Error{Errc::stopped, "handler was not added to shared informer because it has stopped already"};
  }
  auto registration = std::make_shared<actors::Registration>();
  registration->id = next_id_++;
  registration->handler = handler;
  registration->factory = std::move(factory);
  registration->options = std::move(options);
  registration->owned = owned;
  if (owned) owned_handlers_.push_back(handler);
  registrations_.emplace(registration->id, registration);
  if (started_) {
    actors::detail::handing_over();
    caf::anon_send(controller_, actors::attach_atom::value, actors::RegistrationPtr{registration});
  }
  HandlerRegistration handle;
  handle.owner_ = this;
  handle.registration_ = std::move(registration);
  handle.informer_status_ = status_;
  return handle;
}

Result<void> SharedInformer::replace_handler(const HandlerRegistration& handle, HandlerFuncs funcs,
                                             HandlerOptions options) {
  return replace_handler(handle, actors::always_next(actors::dispatch_to(std::move(funcs))),
                         std::move(options));
}

Result<void> SharedInformer::replace_handler(const HandlerRegistration& handle, actors::HopFunc func,
                                             HandlerOptions options) {
  if (is_stopped()) return Error{Errc::stopped, "handler was not replaced because the informer has stopped"};
  auto [actor, factory] = spawn_owned(std::move(func));
  return replace(handle, std::move(actor), std::move(factory), std::move(options), true);
}

Result<void> SharedInformer::replace_handler(const HandlerRegistration& handle, actors::HandlerActor handler,
                                             HandlerOptions options, actors::HandlerFactory factory) {
  return replace(handle, std::move(handler), std::move(factory), std::move(options), false);
}

Result<void> SharedInformer::replace(const HandlerRegistration& handle, actors::HandlerActor handler,
                                     actors::HandlerFactory factory, HandlerOptions options, bool owned) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](Error error) -> Result<void> {
    if (owned) caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    return error;
  };
  if (stopped_)
    return refuse(Error{Errc::stopped, "handler was not replaced because the informer has stopped"});
  auto found = handle.owner_ == this ? registrations_.find(handle.id()) : registrations_.end();
  if (found == registrations_.end())
    return refuse(Error{Errc::invalid_key, "replace_handler: not a live registration of this informer"});
  const auto& old = *found->second;
  auto registration = std::make_shared<actors::Registration>();
  registration->id = old.id;
  registration->status = old.status;  // the handle keeps reading the same status
  registration->handler = handler;
  registration->factory = std::move(factory);
  registration->options = std::move(options);
  registration->options.group = old.options.group;  // a swap keeps the group
  registration->owned = owned;
  if (owned) owned_handlers_.push_back(handler);
  if (started_) {
    actors::detail::handing_over();
    caf::anon_send(controller_, actors::swap_atom::value, actors::RegistrationPtr{registration});
  } else if (old.owned && old.handler != handler) {
    caf::anon_send_exit(old.handler, caf::exit_reason::user_shutdown);
  }
  found->second = std::move(registration);
  return {};
}

void SharedInformer::remove_handler(const HandlerRegistration& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handle.owner_ != this || !handle.registration_) return;  // foreign or empty: no-op
  auto found = registrations_.find(handle.id());
  if (found == registrations_.end()) return;  // already removed
  auto registration = found->second;
  registrations_.erase(found);
  if (stopped_) return;
  if (started_) {
    caf::anon_send(controller_, actors::detach_atom::value, registration->id);
  } else {
    registration->status->removed = true;
    if (registration->owned) caf::anon_send_exit(registration->handler, caf::exit_reason::user_shutdown);
  }
}

bool SharedInformer::wait_for_sync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!has_synced()) {
    if (std::chrono::steady_clock::now() >= deadline || is_stopped()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

void SharedInformer::stop() {
  std::vector<caf::actor> spawned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    for (const auto& handler : owned_handlers_) spawned.push_back(caf::actor_cast<caf::actor>(handler));
    if (!started_) {
      for (const auto& actor : spawned) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
      return;
    }
    for (const auto& actor :
         {caf::actor_cast<caf::actor>(reflector_), caf::actor_cast<caf::actor>(fifo_),
          caf::actor_cast<caf::actor>(controller_), caf::actor_cast<caf::actor>(processor_)})
      spawned.push_back(actor);
  }
  // Drain: no new input, close the FIFO; the Controller applies what is queued and
  // tells the Processor, which ends the handler actors it owns once they are done.
  caf::scoped_actor self{system_};
  for (const auto& actor : spawned) self->monitor(actor);
  caf::anon_send_exit(reflector_, caf::exit_reason::user_shutdown);
  caf::anon_send(fifo_, actors::shutdown_atom::value);
  std::size_t down = 0;
  bool timed_out = false;
  self->receive_while([&] { return down < spawned.size() && !timed_out; })(
      [&](caf::down_msg&) { ++down; }, caf::after(options_.stop_timeout) >> [&] { timed_out = true; });
  if (timed_out) {
    // A handler that never answers must not hang the caller: kill what is left.
    for (const auto& actor : spawned) caf::anon_send_exit(actor, caf::exit_reason::kill);
    self->receive_while([&] { return down < spawned.size(); })([&](caf::down_msg&) { ++down; });
  }
}

}  // namespace kinformer
