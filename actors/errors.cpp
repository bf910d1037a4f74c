#include "actors/errors.hpp"

#include <string>

#include <caf/actor_system_config.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace kinformer::actors {

caf::error to_caf_error(const Error& error) {
  return caf::make_error(error.code, error.message);
}

Error to_error(const caf::error& error) {
  if (error.category() == caf::atom("kinformer")) {
    std::string message;
    if (!error.context().empty() && error.context().match_element<std::string>(0))
      message = error.context().get_as<std::string>(0);
    return Error{static_cast<Errc>(error.code()), std::move(message)};
  }
  auto code = error == caf::sec::request_receiver_down ? Errc::stopped : Errc::server_error;
  return Error{code, caf::to_string(error)};
}

void register_errors(caf::actor_system_config& config) {
  config.add_error_category(caf::atom("kinformer"),
                            [](std::uint8_t code, caf::atom_value, const caf::message& context) {
                              Error error{static_cast<Errc>(code), {}};
                              if (!context.empty() && context.match_element<std::string>(0))
                                error.message = context.get_as<std::string>(0);
                              return "kinformer: " + error.to_string();
                            });
}

}  // namespace kinformer::actors
