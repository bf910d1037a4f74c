// tests/support/widget_crd.hpp
//
// The CustomResourceDefinition the CRD tests share (issue 17): widgets.example.com,
// namespaced, one served version v1 whose schema requires spec.size (an integer),
// with spec.color an enum of red and blue, spec.parts a list of strings and an
// optional /status subresource; and a Widget built on it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kinformer::testing {

inline nlohmann::json widget_crd(bool with_status = true) {
  using nlohmann::json;
  json version = {
      {"name", "v1"},
      {"served", true},
      {"storage", true},
      {"schema",
       {{"openAPIV3Schema",
         {{"type", "object"},
          {"properties",
           {{"spec",
             {{"type", "object"},
              {"required", {"size"}},
              {"properties",
               {{"size", {{"type", "integer"}}},
                {"color", {{"type", "string"}, {"enum", {"red", "blue"}}}},
                {"parts", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}},
            {"status", {{"type", "object"}, {"properties", {{"ready", {{"type", "boolean"}}}}}}}}}}}}}};
  if (with_status) version["subresources"] = {{"status", json::object()}};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", "widgets.example.com"}}},
          {"spec",
           {{"group", "example.com"},
            {"scope", "Namespaced"},
            {"names",
             {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}, {"shortNames", {"wd"}}}},
            {"versions", {version}}}}};
}

inline nlohmann::json widget(const std::string& name, nlohmann::json spec) {
  return {
      {"apiVersion", "example.com/v1"}, {"kind", "Widget"}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

}  // namespace kinformer::testing
