#include "actors/errors.hpp"

#include <cstdint>
#include <string>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>

namespace kinformer::actors {
namespace {

std::string message_of(const caf::message& context) {
  if (context.match_elements<std::string>()) return context.get_as<std::string>(0);
  return {};
}

}  // namespace

caf::error to_caf_error(const Error& error) { return caf::make_error(error.code, error.message); }

Error from_caf_error(const caf::error& error) {
  if (error.category() == caf::atom("kinformer"))
    return Error{static_cast<Errc>(error.code()), message_of(error.context())};
  return Error{Errc::stopped, caf::to_string(error)};
}

void register_errors(caf::actor_system_config& config) {
  config.add_error_category(caf::atom("kinformer"),
                            [](std::uint8_t code, caf::atom_value, const caf::message& context) {
                              return "kinformer: " + Error{static_cast<Errc>(code), message_of(context)}.to_string();
                            });
}

}  // namespace kinformer::actors
