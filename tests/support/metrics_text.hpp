// tests/support/metrics_text.hpp
//
// Reading one sample back from a rendered scrape (runtime/metrics.hpp's text
// format), for tests that check a value after a known workload.
//   sample(registry.render(), R"(kinformer_fifo_pops_total{informer="shop",resource="pods"})")
// Contract: `series` is the sample's name and label set exactly as rendered; the
// value is the text after it on its line. nullopt when no line starts with it.
#pragma once

#include <optional>
#include <string>

namespace kinformer::testing {

inline std::optional<double> sample(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, prefix.size(), prefix) == 0)
      return std::stod(text.substr(at + prefix.size(), end - at - prefix.size()));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace kinformer::testing
