// examples/forecasting/forecaster.hpp
//
// The forecaster: the chain's second hop (priority 20). For every notification of
// a batch it sends the window the builder pinned on the WindowBoard to the
// inference actor, without waiting: the hop answers the Processor through a
// response promise once every window of the batch has its forecast or its error,
// so a batch's windows reach the inference actor together and are batched there.
//
// Contract
//   * A window's forecast is attached to its board entry and the notification
//     goes on (`next`) to the writer. A window missing from the board, or whose
//     request failed (an inference error or no answer within `timeout`), is
//     stopped, its entry erased and the error counted and reported to on_error.
//   * At most one batch at a time (the Processor sends one), answered exactly once.
// Threading: an actor. Errors: per window, as above; the hop itself never fails.
#pragma once

#include <atomic>
#include <caf/fwd.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/inference.hpp"
#include "actors/notification.hpp"
#include "examples/forecasting/window_board.hpp"

namespace kinformer::forecasting {

struct ForecasterOptions {
  actors::InferenceActor inference;
  std::shared_ptr<WindowBoard> board;
  std::chrono::milliseconds timeout{30000};               // one window's request
  std::function<void(const std::string&)> on_error;       // optional; called on the actor's thread
  std::shared_ptr<std::atomic<std::uint64_t>> forecasts;  // optional counters
  std::shared_ptr<std::atomic<std::uint64_t>> errors;
};

actors::HandlerActor spawn_forecaster(caf::actor_system& system, ForecasterOptions options);

}  // namespace kinformer::forecasting
