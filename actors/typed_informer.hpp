// actors/typed_informer.hpp
//
// Informer<T>: the typed layer over a SharedInformer (architecture.md §3, "Typed
// access"). Each object is decoded into T once, at ingest, by the Controller;
// every typed handler of the informer receives the same `const T&`.
//
// Usage
//   kinformer::Informer<kinformer::Pod> pods(system, options);
//   kinformer::TypedHandlerFuncs<kinformer::Pod> funcs;
//   funcs.on_add = [](const kinformer::Pod& pod, bool initial) { ... pod.node_name ... };
//   auto handle = pods.add_handler(funcs);
//   pods.run();
//
// Contract
//   * T is a kind (actors/kinds.hpp): static constexpr std::string_view resource
//     and static Result<T> decode(const Object&). Checked at compile time, as are
//     the handler signatures (const T&).
//   * An object T::decode() rejects is skipped by typed handlers and counted in
//     undecodable(); the cache and untyped handlers still have it.
//   * on_delete gets the final state, or a tombstone's last known state with
//     final_state_unknown = true (a tombstone without any state is skipped).
//   * Informer<T>::over(shared) types an existing SharedInformer (the factory's):
//     it sets the decoder if the informer has not started, and fails with
//     Errc::already_started if it started without T's decoder.
// Threading: as SharedInformer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "actors/shared_informer.hpp"

namespace kinformer {

/// True when T has `resource` and `static Result<T> decode(const Object&)`.
template <class T, class = void>
struct is_kind : std::false_type {};
template <class T>
struct is_kind<T, std::void_t<decltype(T::resource), decltype(T::decode(std::declval<const Object&>()))>>
    : std::bool_constant<std::is_same_v<decltype(T::decode(std::declval<const Object&>())), Result<T>> &&
                         std::is_convertible_v<decltype(T::resource), std::string_view>> {};

template <class T>
struct TypedHandlerFuncs {
  std::function<void(const T& object, bool is_in_initial_list)> on_add;
  std::function<void(const T& old_object, const T& new_object)> on_update;
  std::function<void(const T& last_state, bool final_state_unknown)> on_delete;
};

template <class T>
class Informer {
  static_assert(is_kind<T>::value,
                "Informer<T> needs T::resource (a string_view) and static Result<T> T::decode(const Object&)");

 public:
  /// An informer of its own for T.
  Informer(caf::actor_system& system, SharedInformerOptions options) {
    options.controller.decoder = decoder();
    options.decoder_tag = tag();
    shared_ = std::make_shared<SharedInformer>(system, std::move(options));
  }

  /// Types an existing informer (see the contract).
  static Result<Informer> over(std::shared_ptr<SharedInformer> shared) {
    if (shared->decoder_tag() != tag()) {
      auto set = shared->set_decoder(decoder(), tag());
      if (!set) return set.error();
    }
    return Informer(std::move(shared));
  }

  [[nodiscard]] Result<HandlerRegistration> add_handler(TypedHandlerFuncs<T> funcs, HandlerOptions options = {}) {
    auto skipped = skipped_;
    return shared_->add_notification_handler(
        [funcs = std::move(funcs), skipped](const actors::Notification& n) { dispatch(funcs, n, *skipped); },
        options);
  }
  void remove_handler(const HandlerRegistration& handle) { shared_->remove_handler(handle); }

  /// The cached object under `key`, decoded now (null if absent or not decodable).
  std::shared_ptr<const T> get(std::string_view key) const {
    auto object = shared_->indexer().get_by_key(key);
    if (!object) return nullptr;
    auto decoded = T::decode(*object);
    if (!decoded) return nullptr;
    return std::make_shared<const T>(std::move(decoded).value());
  }

  void run() { shared_->run(); }
  void stop() { shared_->stop(); }
  bool has_synced() const { return shared_->has_synced(); }
  bool wait_for_sync(std::chrono::milliseconds timeout) const { return shared_->wait_for_sync(timeout); }
  SharedInformer& shared() const { return *shared_; }
  /// Notifications typed handlers skipped because T::decode() rejected the object.
  std::uint64_t undecodable() const { return *skipped_; }

  static actors::Decoder decoder() {
    return [](const Object& object) -> std::shared_ptr<const void> {
      auto decoded = T::decode(object);
      if (!decoded) return nullptr;
      return std::make_shared<const T>(std::move(decoded).value());
    };
  }
  /// Identifies T's decoder (one address per T).
  static const void* tag() {
    static const char id = 0;
    return &id;
  }

 private:
  explicit Informer(std::shared_ptr<SharedInformer> shared) : shared_(std::move(shared)) {}

  static void dispatch(const TypedHandlerFuncs<T>& funcs, const actors::Notification& n,
                       std::atomic<std::uint64_t>& skipped) {
    const auto* object = static_cast<const T*>(n.typed_object.get());
    const auto* old_object = static_cast<const T*>(n.typed_old_object.get());
    if (!object || (n.type == actors::NotificationType::updated && !old_object)) {
      ++skipped;
      return;
    }
    switch (n.type) {
      case actors::NotificationType::added:
        if (funcs.on_add) funcs.on_add(*object, n.is_in_initial_list);
        break;
      case actors::NotificationType::updated:
        if (funcs.on_update) funcs.on_update(*old_object, *object);
        break;
      case actors::NotificationType::deleted:
        if (funcs.on_delete) funcs.on_delete(*object, n.tombstone != nullptr);
        break;
    }
  }

  std::shared_ptr<SharedInformer> shared_;
  std::shared_ptr<std::atomic<std::uint64_t>> skipped_ = std::make_shared<std::atomic<std::uint64_t>>(0);
};

}  // namespace kinformer
