// actors/kinds.hpp
//
// Example typed kinds for Informer<T> (actors/typed_informer.hpp): Pod and
// ConfigMap, decoded once at ingest from an Object. A kind is any struct with
//   static constexpr std::string_view resource;      // "v1/pods"
//   static Result<T> decode(const Object& object);   // never throws
// Only the fields a handler commonly needs are decoded; the Object stays in the
// cache for everything else.
// Errors: decode() reports a malformed body as Errc::decode_failed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/object.hpp"
#include "runtime/result.hpp"

namespace kinformer {

struct Pod {
  static constexpr std::string_view resource = "v1/pods";

  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::string node_name;                // spec.nodeName, "" while unscheduled
  std::string phase;                    // status.phase, "" when absent
  std::vector<std::string> containers;  // spec.containers[].name

  static Result<Pod> decode(const Object& object);
};

struct ConfigMap {
  static constexpr std::string_view resource = "v1/configmaps";

  std::string namespace_;
  std::string name;
  std::string resource_version;
  std::map<std::string, std::string> data;  // data, strings only

  static Result<ConfigMap> decode(const Object& object);
};

}  // namespace kinformer
