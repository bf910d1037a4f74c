// fuzz/fuzz_selector.cpp: LabelSelector::parse() and FieldSelector::parse() on arbitrary
// text. A selector that parses must print (to_string) as text that parses again to the
// same canonical text, and must match a fixed label set without crashing.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::map<std::string, std::string> labels{{"app", "web"}, {"tier", "3"}, {"x.io/y", ""}};
  if (auto label = kinformer::LabelSelector::parse(text)) {
    (void)label.value().matches(labels);
    auto canonical = label.value().to_string();
    auto again = kinformer::LabelSelector::parse(canonical);
    if (!again || again.value().to_string() != canonical) __builtin_trap();
  }
  if (auto field = kinformer::FieldSelector::parse(text)) {
    (void)field.value().matches([](std::string_view path) -> std::optional<std::string> {
      if (path == "metadata.name") return std::string("a,b=c\\");
      return std::nullopt;
    });
    auto canonical = field.value().to_string();
    auto again = kinformer::FieldSelector::parse(canonical);
    if (!again || again.value().to_string() != canonical) __builtin_trap();
  }
  return 0;
}
