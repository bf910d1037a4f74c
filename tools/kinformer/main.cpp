// kinformer <command> [options]: dispatches to the registered subcommands.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/kinformer/command.hpp"
#include "runtime/log.hpp"

namespace kinformer::cli {
namespace {

std::vector<Command>& registry() {
  static std::vector<Command> all;
  return all;
}

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: kinformer <command> [options]   (kinformer <command> --help)\n\ncommands:\n");
  for (const auto& c : commands())
    std::fprintf(out, "  %-14.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
}

}  // namespace

bool register_command(Command command) {
  registry().push_back(command);
  return true;
}

const std::vector<Command>& commands() {
  auto& all = registry();
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return all;
}

}  // namespace kinformer::cli

int main(int argc, char** argv) {
  using kinformer::cli::commands;
  if (argc < 2) {
    kinformer::cli::print_usage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    kinformer::cli::print_usage(stdout);
    return 0;
  }
  for (const auto& c : commands())
    if (c.name == name) return c.run(argc - 1, argv + 1);
  kinformer::log::error("kinformer", "unknown command '" + name + "'");
  kinformer::cli::print_usage(stderr);
  return 2;
}
