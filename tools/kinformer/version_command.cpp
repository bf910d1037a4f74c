// kinformer version: the tool's version and what this build contains.
#include <cstdio>

#include "tools/kinformer/command.hpp"
#include "runtime/help_option.hpp"

namespace {

int run_version(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, "usage: kinformer version   (prints the tool's version)\n")) return 0;
  std::printf("kinformer %s\n", KINFORMER_VERSION);
  return 0;
}

const bool version_registered = kinformer::cli::register_command({"version", "print the version", run_version});

}  // namespace
