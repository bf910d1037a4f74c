// fuzz/fuzz_schema.cpp: a CustomResourceDefinition's openAPIV3Schema and a custom
// resource, validated as admission.cpp validates them (issue 33). Input: the schema and
// the object, separated by a NUL byte; the object's arrays are grown (the first byte:
// each repeated up to 255 times, fuzz_input.hpp), so that small inputs reach the error cap.
// Whatever the input, at most max_invalid_causes + 1 causes come back, each within its
// bounds, and the 422 built from them renders.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "apiserver/body_decoder.hpp"
#include "apiserver/schema.hpp"
#include "apiserver/work_budget.hpp"
#include "fuzz/fuzz_input.hpp"

using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 16384) return 0;
  const std::size_t times = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto nul = rest.find('\0');
  if (nul == std::string_view::npos) return 0;
  using kinformer::apiserver::BodyFormat;
  auto schema_doc = kinformer::apiserver::decode_body(rest.substr(0, nul), BodyFormat::json);
  auto object = kinformer::apiserver::decode_body(rest.substr(nul + 1), BodyFormat::json);
  if (!schema_doc || !object) return 0;
  auto schema = kinformer::apiserver::OpenApiSchema::parse(schema_doc.value());
  if (!schema) return 0;
  json value = std::move(object).value();
  std::size_t left = 100000;
  kinformer::fuzz::grow_lists(value, times, left);
  kinformer::apiserver::WorkBudget budget(kinformer::apiserver::WorkLimits{});
  budget.allow_bytes(size);
  auto causes = (*schema)->validate(value, budget);
  if (causes.size() > kinformer::apiserver::max_invalid_causes + 1) std::abort();
  for (const auto& cause : causes)
    if (cause.field.size() > kinformer::apiserver::max_cause_field_bytes ||
        cause.message.size() > kinformer::apiserver::max_cause_message_bytes)
      std::abort();
  if (!causes.empty()) (void)kinformer::apiserver::ApiError::invalid("g", "K", "n", std::move(causes)).to_status_json();
  return 0;
}
