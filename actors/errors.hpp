// actors/errors.hpp
//
// kinformer::Errc as a CAF error code (category "kinformer"), and the conversions
// between runtime's Error and caf::error at the actor boundary (style.md §5
// "Errors"; caf-0.17.md §5). The one place Errc is registered with CAF.
#pragma once

#include <caf/error.hpp>
#include <caf/fwd.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include "runtime/result.hpp"

CAF_ERROR_CODE_ENUM(kinformer::Errc, "kinformer")

namespace kinformer::actors {

/// A caf::error of category "kinformer" carrying the code and the message.
caf::error to_caf_error(const Error& error);

/// Back again; a CAF error of another category (e.g. request_receiver_down)
/// becomes Errc::stopped with CAF's rendering as the message.
Error from_caf_error(const caf::error& error);

/// Installs the renderer of the "kinformer" category in `config`, so that
/// system.render(err) prints "kinformer: fifo_closed: ...".
void register_errors(caf::actor_system_config& config);

}  // namespace kinformer::actors
