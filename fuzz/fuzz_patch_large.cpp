// fuzz/fuzz_patch_large.cpp: the patch engines on large inputs grown from small ones
// (issue 33: their cost was quadratic in long lists). Input as fuzz_patch.cpp's (a type
// byte, then the target and the patch separated by a NUL byte), plus a second byte:
// every list in both documents is repeated up to that many times (adding at most
// 50,000 elements to each document), with a "name" made distinct per copy so that
// keyed merges see long lists of distinct keys. Each engine runs under the server's
// default WorkBudget for the grown size: an input that made it loop for seconds would
// trip libFuzzer's -timeout.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "apiserver/body_decoder.hpp"
#include "apiserver/managed_fields.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/patch.hpp"
#include "apiserver/work_budget.hpp"
#include "fuzz/fuzz_input.hpp"

using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 || size > 16384) return 0;
  const int kind = data[0] % 4;
  const std::size_t times = data[1];
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const auto json_format = kinformer::apiserver::BodyFormat::json;
  auto target = kinformer::apiserver::decode_body(kinformer::fuzz::next_part(rest), json_format);
  auto patch = kinformer::apiserver::decode_body(kinformer::fuzz::next_part(rest), json_format);
  if (!target || !patch) return 0;
  json result = std::move(target).value();
  json document = std::move(patch).value();
  std::size_t left = 50000;
  kinformer::fuzz::grow_lists(result, times, left);
  left = 50000;
  kinformer::fuzz::grow_lists(document, times, left);
  const kinformer::apiserver::ObjectLimits limits;
  if (kinformer::apiserver::check_object_limits(result, limits) ||
      kinformer::apiserver::check_object_limits(document, limits))
    return 0;
  kinformer::apiserver::WorkBudget budget(limits.work);
  budget.allow_bytes(kinformer::apiserver::bounded_size(result, limits.max_bytes) +
                     kinformer::apiserver::bounded_size(document, limits.max_bytes));
  std::optional<kinformer::apiserver::ApiError> failed;
  switch (kind) {
    case 0:
      failed = kinformer::apiserver::apply_json_patch(result, document, limits, budget);
      break;
    case 1:
      failed = kinformer::apiserver::apply_merge_patch(result, document, budget);
      break;
    case 2:
      failed = kinformer::apiserver::apply_strategic_merge_patch(result, document, budget);
      break;
    default: {
      const kinformer::apiserver::Applier applier{"fuzz", "v1", "", data[0] % 8 < 4, data[0] % 16 < 8};
      failed = kinformer::apiserver::apply_configuration(result, document, applier, "2026-01-01T00:00:00Z", budget);
      break;
    }
  }
  if (!failed) (void)result.dump();
  return 0;
}
