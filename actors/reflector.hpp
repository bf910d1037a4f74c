// actors/reflector.hpp
//
// ReflectorActor: lists and watches a ListWatch source and feeds the DeltaFIFO
// actor (client-go Reflector; informer-semantics.md §5, checklist 30–46).
// [Interface sketch agreed between the reflector and informer work; the
//  reflector work completes this header and its contract.]
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/delta_fifo.hpp"
#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

struct ReflectorOptions {
  std::shared_ptr<ListWatch> source;
  DeltaFIFOActor fifo;
  /// 0 = never resync. Each tick asks should_resync (if set) and then the FIFO.
  std::chrono::milliseconds resync_period{0};
  std::function<bool()> should_resync;
  /// Called with every error a list/watch cycle ends with (visibility only).
  std::function<void(const Error&)> watch_error_handler;
  std::int64_t page_size = 0;  // 0 = client-go's default rules (500 / none)
  std::string label_selector;
  std::string field_selector;
  /// Stop reading the watch while the FIFO holds more keys than this.
  std::size_t high_water_mark = 10000;
};

using ReflectorActor = caf::typed_actor<>;  // completed by the reflector work

/// Spawns the reflector; it starts listing at once and runs until it gets an
/// exit message (then it stops its watch promptly).
ReflectorActor spawn_reflector(caf::actor_system& system, ReflectorOptions options);

}  // namespace kinformer::actors
