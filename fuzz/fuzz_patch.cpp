// fuzz/fuzz_patch.cpp: every PATCH type the API server accepts, as api.cpp applies them.
// Input: one byte picking the type (JSON patch, merge, strategic merge, apply), then the
// target object and the patch document separated by a NUL byte (apply: the target's
// metadata.managedFields, whatever they hold, say what the manager applied before; the
// type byte's bits 2 and 3 pick a built-in or custom kind, with or without status apart).
// The documents go through decode_body as the server decodes them. Inputs are capped
// at 16 KiB: the fuzzer tests patching, not the server's body size limit.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "apiserver/body_decoder.hpp"
#include "apiserver/managed_fields.hpp"
#include "apiserver/patch.hpp"
#include "fuzz/fuzz_input.hpp"

using kinformer::apiserver::BodyFormat;
using kinformer::fuzz::next_part;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 16384) return 0;
  const int kind = data[0] % 4;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto target_text = next_part(rest);
  auto patch_text = next_part(rest);
  auto target = kinformer::apiserver::decode_body(target_text, BodyFormat::json);
  auto patch = kinformer::apiserver::decode_body(patch_text, kind == 3 ? BodyFormat::yaml : BodyFormat::json);
  if (!target || !patch) return 0;
  json result = target.value();
  std::optional<kinformer::apiserver::ApiError> failed;
  kinformer::apiserver::WorkBudget budget(kinformer::apiserver::WorkLimits{});
  switch (kind) {
    case 0:
      failed = kinformer::apiserver::apply_json_patch(result, patch.value(), {}, budget);
      break;
    case 1:
      failed = kinformer::apiserver::apply_merge_patch(result, patch.value(), budget);
      break;
    case 2:
      failed = kinformer::apiserver::apply_strategic_merge_patch(result, patch.value(), budget);
      break;
    default: {
      const kinformer::apiserver::Applier applier{"fuzz", "v1", "", data[0] % 8 < 4, data[0] % 16 < 8};
      failed = kinformer::apiserver::apply_configuration(result, patch.value(), applier, "2026-01-01T00:00:00Z",
                                                            budget);
      break;
    }
  }
  (void)result.dump();
  return 0;
}
