// actors/errors.hpp
//
// kinformer::Errc as a CAF error code: the one place it is registered with CAF
// (caf-0.17.md §5), and the conversions between runtime's Error and caf::error.
//
// Contract
//   * to_caf_error(Error) keeps the code and the message (as the error's context);
//     to_error(caf::error) gives it back, and maps CAF's own errors (a dead
//     receiver, a timeout) to Errc::stopped / Errc::server_error with CAF's text.
//   * register_errors(cfg) makes system.render(err) print "kinformer: fifo_closed: ...".
// Threading: pure functions.
#pragma once

#include <caf/error.hpp>
#include <caf/fwd.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "runtime/result.hpp"

CAF_ERROR_CODE_ENUM(kinformer::Errc, "kinformer")

namespace kinformer::actors {

/// `error` as a caf::error of category "kinformer", its message as context.
caf::error to_caf_error(const Error& error);

/// A caf::error back as an Error (see the contract for CAF's own categories).
Error to_error(const caf::error& error);

/// Installs the renderer of the "kinformer" category in `config`.
void register_errors(caf::actor_system_config& config);

}  // namespace kinformer::actors
