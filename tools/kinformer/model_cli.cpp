#include "tools/kinformer/model_cli.hpp"

#include <algorithm>
#include <cstdio>

#include "models/informer_weights.hpp"
#include "runtime/log.hpp"

namespace kinformer::cli {

bool parse_options(int argc, char** argv, const std::vector<std::string>& required,
                   const std::vector<std::string>& optional, Options& out, std::string* error) {
  auto known = [&](const std::string& n) {
    return std::find(required.begin(), required.end(), n) != required.end() ||
           std::find(optional.begin(), optional.end(), n) != optional.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || !known(arg.substr(2))) {
      *error = "unknown argument '" + arg + "'";
      return false;
    }
    if (i + 1 >= argc) {
      *error = "option '" + arg + "' needs a value";
      return false;
    }
    out[arg.substr(2)] = argv[++i];
  }
  for (const auto& r : required)
    if (!out.count(r)) {
      *error = "missing required option --" + r;
      return false;
    }
  return true;
}

std::unique_ptr<models::Backend> open_model(const std::string& config_path, const std::string& weights_path,
                                            const std::string& backend, models::Precision precision) {
  std::vector<std::string> warnings;
  auto config = models::load_config(config_path, &warnings);
  for (const auto& w : warnings) kinformer::log::warn("model", w);
  auto weights = models::load_weights(weights_path, config);
  return models::make_backend(backend, config, std::move(weights), {precision});
}

}  // namespace kinformer::cli
