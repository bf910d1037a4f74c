#include "actors/errors.hpp"

#include <string>

#include <caf/atom.hpp>
#include <caf/message.hpp>

namespace kinformer::actors {

caf::error to_caf_error(const Error& error) { return caf::make_error(error.code, error.message); }

Error from_caf_error(const caf::error& error) {
  if (error.category() == caf::atom("kinformer")) {
    std::string message;
    const auto& context = error.context();
    if (context.match_elements<std::string>()) message = context.get_as<std::string>(0);
    return Error{static_cast<Errc>(error.code()), std::move(message)};
  }
  return Error{Errc::stopped, caf::to_string(error)};
}

}  // namespace kinformer::actors
