// runtime/help_option.hpp
//
// answered_help: the `--help` of a program with no option parser of its own (the benches,
// the examples, `kinformer version`), so that every binary answers it the same way (issue 31).
//
// Contract
//   * True when the command line is exactly `<program> --help`: `usage` has been written to
//     stdout, and the caller exits 0. False otherwise, having written nothing.
// Threading: call from main() before anything else runs. Errors: none.
#pragma once

#include <cstdio>
#include <string_view>

namespace kinformer::cli {

/// Prints `usage` and returns true when argv is {program, "--help"}.
inline bool answered_help(int argc, char** argv, const char* usage) {
  if (argc != 2 || std::string_view(argv[1]) != "--help") return false;
  std::fputs(usage, stdout);
  return true;
}

}  // namespace kinformer::cli
