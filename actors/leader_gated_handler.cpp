#include "actors/leader_gated_handler.hpp"

#include "runtime/log.hpp"

namespace kinformer {

LeaderGatedHandler::LeaderGatedHandler(SharedInformer& informer, HandlerFuncs funcs, HandlerOptions options)
    : informer_(informer), funcs_(std::move(funcs)), options_(std::move(options)) {}

LeaderGatedHandler::~LeaderGatedHandler() { close(); }

Result<void> LeaderGatedHandler::open() {
  std::lock_guard lock(mu_);
  if (registration_.valid()) return {};
  auto added = informer_.add_handler(funcs_, options_);
  if (!added) return added.error();
  registration_ = std::move(added).value();
  return {};
}

void LeaderGatedHandler::close() {
  std::lock_guard lock(mu_);
  if (!registration_.valid()) return;
  informer_.remove_handler(registration_);
  registration_ = HandlerRegistration();
}

bool LeaderGatedHandler::is_open() const {
  std::lock_guard lock(mu_);
  return registration_.valid();
}

void LeaderGatedHandler::attach(LeaderElectionConfig& config) {
  auto started = std::move(config.on_started_leading);
  auto stopped = std::move(config.on_stopped_leading);
  config.on_started_leading = [this, started] {
    // leading without our handler would be silent: say so instead of dropping it
    if (auto opened = open(); !opened)
      log::warn("leader_election", "started leading but the handler could not be added",
                {{"error", opened.error().message}});
    if (started) started();
  };
  config.on_stopped_leading = [this, stopped] {
    close();
    if (stopped) stopped();
  };
}

}  // namespace kinformer
