// tools/kinformer/command.hpp
//
// The subcommand registry of the `kinformer` tool. A subcommand is one .cpp file
// in this folder that defines a namespace-scope
//   const bool registered = kinformer::cli::register_command({"name", "summary", run});
// and is picked up by the build without editing any other file.
//
// Contract: `run` gets argv without the tool name (argv[0] is the subcommand) and
// returns the process exit code: 0 ok, 1 failure, 2 usage error. It must not throw.
#pragma once

#include <string_view>
#include <vector>

namespace kinformer::cli {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

/// Adds a subcommand; called during static initialisation. Returns true.
bool register_command(Command command);

/// Every registered subcommand, sorted by name.
const std::vector<Command>& commands();

}  // namespace kinformer::cli
