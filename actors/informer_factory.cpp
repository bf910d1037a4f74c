#include "actors/informer_factory.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace kinformer {

InformerFactory::InformerFactory(caf::actor_system& system, SourceFactory sources, SharedInformerOptions defaults)
    : system_(system), sources_(std::move(sources)), defaults_(std::move(defaults)) {}

InformerFactory::~InformerFactory() { shutdown(); }

std::shared_ptr<SharedInformer> InformerFactory::informer(std::string_view resource, const InformerScope& scope) {
  // '\n' cannot occur in a resource name, namespace or selector: the key is unambiguous.
  auto key = std::string(resource) + '\n' + scope.namespace_ + '\n' + scope.label_selector + '\n' +
             scope.field_selector;
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = informers_[key];
  if (!slot) {
    auto options = defaults_;
    options.source = sources_(resource, scope);
    options.reflector.label_selector = scope.label_selector;
    options.reflector.field_selector = scope.field_selector;
    slot = std::make_shared<SharedInformer>(system_, std::move(options));
  }
  return slot;
}

void InformerFactory::start() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, informer] : informers_) informer->run();
}

bool InformerFactory::wait_for_cache_sync(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::shared_ptr<SharedInformer>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, informer] : informers_) all.push_back(informer);
  }
  for (auto& informer : all) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!informer->wait_for_sync(std::max(left, std::chrono::milliseconds(0)))) return false;
  }
  return true;
}

void InformerFactory::shutdown() {
  std::vector<std::shared_ptr<SharedInformer>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, informer] : informers_) all.push_back(informer);
  }
  for (auto& informer : all) informer->stop();
}

std::size_t InformerFactory::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return informers_.size();
}

}  // namespace kinformer
