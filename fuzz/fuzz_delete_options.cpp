// fuzz/fuzz_delete_options.cpp: a DELETE body as api.cpp reads it: decode_body, then
// parse_delete_options (issue 33). Every input must end in options or a 400/422, never
// anything else; the error's Status must render.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "apiserver/body_decoder.hpp"
#include "apiserver/delete_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = kinformer::apiserver::decode_body(text, kinformer::apiserver::BodyFormat::json);
  if (!body) return 0;
  auto options = kinformer::apiserver::parse_delete_options(body.value());
  if (!options) {
    if (options.error().code != 400 && options.error().code != 422) std::abort();
    (void)options.error().to_status_json();
  }
  return 0;
}
