// fuzz/fuzz_snapshot.cpp: the snapshot reader (parse_snapshot, what read_snapshot runs on
// the file's text) on arbitrary text, with the built-in resource registry.
#include <cstddef>
#include <cstdint>
#include <string>

#include "apiserver/resources.hpp"
#include "apiserver/storage/snapshot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();  // its CRDs serve kinds in it
  std::string text(reinterpret_cast<const char*>(data), size);
  auto contents = kinformer::apiserver::storage::parse_snapshot(text, "fuzz.json", registry);
  if (contents) {
    // What it accepted renders back as a snapshot that reads the same way.
    auto rendered = kinformer::apiserver::storage::render_snapshot(contents.value());
    if (!kinformer::apiserver::storage::parse_snapshot(rendered, "rendered.json", registry)) __builtin_trap();
  }
  return 0;
}
