// actors/predicates.hpp
//
// Predicates: which notifications a registration's handler sees (architecture.md
// §4 "Processor"). A Predicate is any callable on a Notification; the helpers
// below are the filters controller-runtime users rely on, plus a canary.
//
// Contract
//   * A default-constructed Predicate matches everything.
//   * Helpers look at the notification's object (for a delete: the final state,
//     or the tombstone's last known state; a tombstone without state matches
//     only key-based helpers: in_namespace, canary).
//   * generation_changed / resource_version_changed / annotation_changed pass
//     every add and delete and filter updates only (what controller-runtime's
//     GenerationChangedPredicate and friends do).
//   * canary(p): a stable 64-bit FNV-1a hash of the key, mod 10000, below p×100:
//     the same keys always fall in, whatever the process or the order.
//   * Predicates compose with &&, || and ! (and all_of / any_of).
// Threading: a Predicate runs in the Processor's actor; helpers are pure.
// Errors: matching_labels / matching_fields return Errc::invalid_selector for a
//   selector that does not parse.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "actors/notification.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

class Predicate {
 public:
  using Func = std::function<bool(const Notification&)>;

  /// Matches everything.
  Predicate() = default;
  /// Any callable bool(const Notification&).
  template <class F, class = std::enable_if_t<std::is_invocable_r_v<bool, F, const Notification&> &&
                                              !std::is_same_v<std::decay_t<F>, Predicate>>>
  Predicate(F f) : func_(std::move(f)) {}  // NOLINT: implicit on purpose, so lambdas convert

  bool operator()(const Notification& n) const { return !func_ || func_(n); }
  /// True when this predicate matches everything without being asked.
  bool matches_all() const noexcept { return !func_; }

 private:
  Func func_;
};

Predicate operator&&(Predicate a, Predicate b);
Predicate operator||(Predicate a, Predicate b);
Predicate operator!(Predicate a);
Predicate all_of(std::initializer_list<Predicate> predicates);
Predicate any_of(std::initializer_list<Predicate> predicates);

/// Objects in namespace `ns` (by key, so tombstones count).
Predicate in_namespace(std::string ns);
/// Objects whose labels match the selector (runtime/selector.hpp syntax).
[[nodiscard]] Result<Predicate> matching_labels(std::string_view selector);
/// Objects whose fields match the selector ("spec.nodeName=node-1,status.phase!=Failed").
[[nodiscard]] Result<Predicate> matching_fields(std::string_view selector);
/// Notifications of one of these types.
Predicate of_type(std::initializer_list<NotificationType> types);
/// Objects whose field at `path` reads `value` (Object::field).
Predicate field_equals(std::string path, std::string value);
/// Updates whose metadata.generation changed (skips status-only updates).
Predicate generation_changed();
/// Updates whose resourceVersion changed (skips resyncs).
Predicate resource_version_changed();
/// Updates whose annotation `name` changed (added, removed or another value).
Predicate annotation_changed(std::string name);
/// A stable `percent`% slice of the keys (0..100; see the contract).
Predicate canary(double percent);

/// The stable hash canary() uses: FNV-1a 64 of the key.
std::uint64_t stable_key_hash(std::string_view key) noexcept;

}  // namespace kinformer::actors
