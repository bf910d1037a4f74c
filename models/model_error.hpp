// models/model_error.hpp
//
// ModelError: the one exception type models/ throws for expected failures (bad
// config, bad weights file, bad input tensor, unavailable backend). The message
// names the file, tensor or argument at fault, so callers print it unchanged.
// Callers that must not throw (the inference actor, the CLI) catch it once per call.
#pragma once

#include <stdexcept>
#include <string>

namespace kinformer::models {

class ModelError : public std::runtime_error {
 public:
  explicit ModelError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace kinformer::models
