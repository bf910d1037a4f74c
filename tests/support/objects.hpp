// tests/support/objects.hpp
//
// Tiny builders for test objects (after client-go's mkFifoObj): pod("foo", "5")
// is a Pod named foo in namespace "default" at resourceVersion 5.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "runtime/object.hpp"

namespace kinformer::testing {

using Labels = std::initializer_list<std::pair<const char*, const char*>>;

/// The JSON of a Pod; `ns` empty makes it cluster-scoped.
inline std::string pod_json(const std::string& name, const std::string& rv, Labels labels = {},
                            const std::string& ns = "default") {
  std::string json = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + "\"";
  if (!ns.empty()) json += R"(,"namespace":")" + ns + "\"";
  json += R"(,"uid":"uid-)" + name + R"(","resourceVersion":")" + rv + "\"";
  if (labels.size() > 0) {
    json += R"(,"labels":{)";
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) json += ',';
      first = false;
      json += std::string("\"") + k + "\":\"" + v + "\"";
    }
    json += '}';
  }
  json += R"(},"spec":{"nodeName":"node-1"}})";
  return json;
}

/// A parsed Pod; aborts the test binary on a builder bug (bad JSON).
inline ObjectPtr pod(const std::string& name, const std::string& rv, Labels labels = {},
                     const std::string& ns = "default") {
  auto parsed = Object::parse(pod_json(name, rv, labels, ns));
  if (!parsed) std::abort();
  return std::move(parsed).value();
}

}  // namespace kinformer::testing
