// fuzz/fuzz_body_decoder.cpp: the API server's request body decoders. The first byte
// picks JSON, YAML or protobuf (decode_body / decode_protobuf, as api.cpp calls them);
// the rest is the body. Every input must give a document or an ApiError.
// Bodies are capped at 64 KiB: the fuzzer tests parsing, not the server's size limits.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "apiserver/body_decoder.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/protobuf_decoder.hpp"

using kinformer::apiserver::BodyFormat;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 65536) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      auto doc = kinformer::apiserver::decode_body(body, BodyFormat::json);
      if (doc) (void)doc.value().dump();
      break;
    }
    case 1: {
      auto doc = kinformer::apiserver::decode_body(body, BodyFormat::yaml);
      if (doc) (void)doc.value().dump();
      break;
    }
    default: {
      auto doc = kinformer::apiserver::decode_protobuf(body);
      if (doc && !kinformer::apiserver::check_object_limits(doc.value(), {})) (void)doc.value().dump();
      break;
    }
  }
  return 0;
}
