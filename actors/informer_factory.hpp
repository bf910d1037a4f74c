// actors/informer_factory.hpp
//
// InformerFactory: one SharedInformer per (resource, namespace, label selector,
// field selector), shared by everyone who asks (client-go's
// SharedInformerFactory), untyped or typed (Informer<T>).
//
// Usage
//   kinformer::InformerFactory factory(system, [&](std::string_view resource, const kinformer::InformerScope&) {
//     return sources.at(std::string(resource));   // a std::shared_ptr<ListWatch>
//   });
//   auto pods = factory.typed<kinformer::Pod>();  // Result<Informer<Pod>>
//   auto same = factory.informer("v1/pods");      // the same SharedInformer
//   factory.start();
//   factory.wait_for_cache_sync(10s);
//
// Contract
//   * informer() creates an informer on first request (the source factory is asked
//     once per key) and returns the same one afterwards; defaults (resync period,
//     batch sizes, ...) come from the factory's options, the source and the
//     selectors from the request.
//   * start() runs every informer made so far; informers made later need another
//     start() (as in client-go). shutdown() (and the destructor) stops them all.
//   * typed<T>() is Informer<T>::over(informer(T::resource, scope)).
// Threading: every member function may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <caf/fwd.hpp>

#include "actors/shared_informer.hpp"
#include "actors/typed_informer.hpp"

namespace kinformer {

struct InformerScope {
  std::string namespace_;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
};

/// Makes the ListWatch for a resource in a scope (an HTTP client, an in-memory source, ...).
using SourceFactory = std::function<std::shared_ptr<ListWatch>(std::string_view resource, const InformerScope& scope)>;

class InformerFactory {
 public:
  /// `defaults` applies to every informer made (its source is ignored).
  InformerFactory(caf::actor_system& system, SourceFactory sources, SharedInformerOptions defaults = {});
  ~InformerFactory();
  InformerFactory(const InformerFactory&) = delete;
  InformerFactory& operator=(const InformerFactory&) = delete;

  std::shared_ptr<SharedInformer> informer(std::string_view resource, const InformerScope& scope = {});

  template <class T>
  [[nodiscard]] Result<Informer<T>> typed(const InformerScope& scope = {}) {
    return Informer<T>::over(informer(T::resource, scope));
  }

  void start();
  /// True once every informer made so far has synced, false after `timeout`.
  bool wait_for_cache_sync(std::chrono::milliseconds timeout);
  void shutdown();
  /// Informers made so far.
  std::size_t size() const;

 private:
  caf::actor_system& system_;
  SourceFactory sources_;
  SharedInformerOptions defaults_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<SharedInformer>> informers_;  // guarded by mu_
};

}  // namespace kinformer
