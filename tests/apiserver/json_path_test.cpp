// JsonPath: the JSONPath subset CRDs use in additionalPrinterColumns and
// subresources.scale (issue 32).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/json_path.hpp"

using kinformer::apiserver::JsonPath;
using nlohmann::json;

namespace {

const json sample_widget = json::parse(R"({
  "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "shop"}},
  "spec": {"replicas": 3, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]},
  "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}
})");

// The matches of `path` in the widget, as JSON (an array, empty when none).
json found(const std::string& path) {
  auto parsed = JsonPath::parse(path);
  INFO(path << ": " << (parsed ? "" : parsed.error().message));
  REQUIRE(parsed);
  json out = json::array();
  for (const json* v : parsed->find(sample_widget)) out.push_back(*v);
  return out;
}

}  // namespace

TEST_CASE("JsonPath selects what kubectl's simple paths select", "[apiserver][json_path][unit]") {
  SECTION("a dotted path, with or without braces and $") {
    CHECK(found(".spec.replicas") == json::array({3}));
    CHECK(found("{.spec.replicas}") == json::array({3}));
    CHECK(found("$.spec.replicas") == json::array({3}));
  }
  SECTION("an index, a negative index and a wildcard") {
    CHECK(found(".spec.ports[0].port") == json::array({80}));
    CHECK(found(".spec.ports[-1].name") == json::array({"https"}));
    CHECK(found(".spec.ports[*].port") == json::array({80, 443}));
    CHECK(found(".spec.ports.*.name") == json::array({"http", "https"}));
  }
  SECTION("a quoted name with dots and slashes") {
    CHECK(found(".metadata.labels['app.kubernetes.io/name']") == json::array({"shop"}));
  }
  SECTION("a filter by equality, inequality and existence") {
    CHECK(found(R"(.status.conditions[?(@.type=="Ready")].status)") == json::array({"True"}));
    CHECK(found(".status.conditions[?(@.type=='Ready')].status") == json::array({"True"}));
    CHECK(found(R"(.status.conditions[?(@.type!="Ready")].type)") == json::array({"Synced"}));
    CHECK(found(".spec.ports[?(@.port==443)].name") == json::array({"https"}));
    CHECK(found(".spec.ports[?(@.name)].port") == json::array({80, 443}));
  }
  SECTION("a missing field, an index out of range and a step into a scalar select nothing") {
    CHECK(found(".spec.missing").empty());
    CHECK(found(".spec.ports[5].port").empty());
    CHECK(found(".spec.replicas.value").empty());
    CHECK(found(".spec.replicas[0]").empty());
  }
}

TEST_CASE("JsonPath refuses what it does not evaluate, naming the position", "[apiserver][json_path][unit]") {
  for (const char* bad : {"", "spec.replicas", ".spec..replicas", "..name", ".spec.ports[0:1]", ".spec.ports[abc]",
                          ".spec.ports[?(@.port>1)]", ".spec.ports[", ".a.", "[?(type)]"}) {
    auto parsed = JsonPath::parse(bad);
    INFO("\"" << bad << "\" parsed although it is not supported");
    CHECK_FALSE(parsed);
    if (!parsed) CHECK(parsed.error().message.find("JSONPath") != std::string::npos);
  }
}

TEST_CASE("JsonPath::set writes a value at a path of names, creating objects", "[apiserver][json_path][unit]") {
  json object = {{"spec", {{"size", 1}}}};
  REQUIRE(JsonPath::parse(".spec.replicas")->set(object, 4));
  REQUIRE(JsonPath::parse(".status.scale.replicas")->set(object, 2));
  CHECK(object == json::parse(R"({"spec":{"size":1,"replicas":4},"status":{"scale":{"replicas":2}}})"));
  SECTION("through a scalar, or along an index, it refuses") {
    CHECK_FALSE(JsonPath::parse(".spec.size.x")->set(object, 1));
    CHECK_FALSE(JsonPath::parse(".spec.list[0]")->set(object, 1));
  }
}
