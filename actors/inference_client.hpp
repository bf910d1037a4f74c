// actors/inference_client.hpp
//
// connect_inference: the inference actor of another process (kinformer
// serve-inference) behind a local actor with the same typed interface
// (InferenceActor), for requesters that must not hang when that process dies.
// A request to a plain remote_actor whose server is killed waits forever (or
// until its own timeout): CAF 0.17 drops the pending responses with the
// connection. This actor monitors the remote one and answers for it.
//
// Contract
//   * forecast and metrics are forwarded unchanged; answers and errors (unknown
//     model, overload, ...) come back unchanged.
//   * When the connection drops, every forwarded request still waiting fails with
//     Errc::stopped ("inference server HOST:PORT is gone: ..."), and the local
//     actor quits: later requests get CAF's request_receiver_down.
//   * The system needs the io middleman loaded and register_inference_types()
//     and register_errors() applied to its config.
// Threading: connect_inference blocks the calling thread while it connects.
// Errors: Errc::connection_failed naming host, port and CAF's reason.
#pragma once

#include <cstdint>
#include <string>

#include <caf/fwd.hpp>

#include "actors/inference.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

Result<InferenceActor> connect_inference(caf::actor_system& system, const std::string& host, uint16_t port);

}  // namespace kinformer::actors
