// tools/kinformer/model_cli.hpp
//
// What the model subcommands (forecast, eval-ett) share: "--name value" option
// parsing against a list of known names, and opening a config + weights on a
// backend chosen by name (never falling back to another backend).
// Errors: parse_options returns false with a message; open_model throws
// models::ModelError (the commands print it and exit 1).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/backend.hpp"

namespace kinformer::cli {

using Options = std::map<std::string, std::string>;

/// Parses argv[1..] as "--name value" pairs. `required` names must appear;
/// `optional` ones may. Returns false and sets *error on anything else.
bool parse_options(int argc, char** argv, const std::vector<std::string>& required,
                   const std::vector<std::string>& optional, Options& out, std::string* error);

/// Loads the config (warnings to stderr) and weights, and makes the backend
/// (bf16: onednn only, models/backend.hpp).
std::unique_ptr<models::Backend> open_model(const std::string& config_path, const std::string& weights_path,
                                            const std::string& backend,
                                            models::Precision precision = models::Precision::fp32);

}  // namespace kinformer::cli
