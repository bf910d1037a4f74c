// fuzz/fuzz_object.cpp: Object::parse() on arbitrary bytes, then every accessor of an
// Object it accepts (the lazily parsed body included). Bad JSON must be an error, never
// a crash or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/object.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto parsed = kinformer::Object::parse(json);
  if (!parsed) return 0;
  const auto& object = *parsed.value();
  if (object.json() != json) __builtin_trap();  // the bytes are kept exactly
  (void)object.key();
  for (const auto& label : object.labels())
    if (object.label(label.key) == std::nullopt) __builtin_trap();  // every listed label is found
  for (const auto& annotation : object.annotations()) (void)object.annotation(annotation.key);
  (void)object.owner_references();
  (void)object.owned_bytes();
  for (auto path : {"spec.nodeName", "metadata.labels.app", "status", "spec.a.b.c", "", "."})
    (void)object.field(path);
  return 0;
}
