// kinformer version: the tool's version and what this build contains.
#include <cstdio>

#include "tools/kinformer/command.hpp"

namespace {

int run_version(int, char**) {
  std::printf("kinformer %s\n", KINFORMER_VERSION);
  return 0;
}

const bool registered = kinformer::cli::register_command({"version", "print the version", run_version});

}  // namespace
