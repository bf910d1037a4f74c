// fuzz/fuzz_kubeconfig.cpp: load_kubeconfig() on an arbitrary kubeconfig file. Every
// input must give a ClientConfig or an error (malformed YAML, missing entries, bad
// base64), never an exception or a crash. References to other files resolve relative
// to the fuzz file's directory and are simply missing.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_file.hpp"
#include "runtime/http/kubeconfig.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kinformer::fuzz::FuzzFile file(".kubeconfig");
  if (size > 65536) return 0;
  file.write(data, size);
  kinformer::http::KubeconfigOptions options;
  options.paths = {file.path()};
  (void)kinformer::http::load_kubeconfig(options);
  return 0;
}
