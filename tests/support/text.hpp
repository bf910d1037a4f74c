// tests/support/text.hpp
//
// Checks on rendered text (a scrape, a CLI's output, a log) for tests that look for one
// line or phrase in it.
// Contract: contains() is a plain substring test; an empty `part` is always contained.
#pragma once

#include <string>

namespace kinformer::testing {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace kinformer::testing
