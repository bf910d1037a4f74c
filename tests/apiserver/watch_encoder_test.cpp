// The watch-line encoder (apiserver/watch_encoder.hpp).
#include "apiserver/watch_encoder.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/stored_object.hpp"

namespace kinformer::apiserver {
namespace {

using nlohmann::json;

TEST_CASE("an event line is the type, the object verbatim and a newline", "[apiserver][watch_encoder][unit]") {
  CHECK(event_line(LineType::added, R"({"a":1})") == "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n");
  CHECK(event_line(LineType::modified, "{}") == "{\"type\":\"MODIFIED\",\"object\":{}}\n");
  CHECK(event_line(LineType::deleted, "{}") == "{\"type\":\"DELETED\",\"object\":{}}\n");
}

TEST_CASE("the pieces of a line written by reference make the same line", "[apiserver][watch_encoder][unit]") {
  for (auto type : {LineType::added, LineType::modified, LineType::deleted, LineType::bookmark, LineType::error})
    CHECK(line_prefix(type) + "{\"x\":true}" + line_suffix() == event_line(type, "{\"x\":true}"));
}

TEST_CASE("a store event's line comes from the same encoder", "[apiserver][watch_encoder][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& configmaps = *registry.find("", "v1", "configmaps");
  auto stored = make_stored(configmaps, {{"metadata", {{"name", "a"}, {"namespace", "default"}}}}, 9);
  auto event = make_event(EventType::modified, stored, nullptr);
  CHECK(event->line == event_line(LineType::modified, stored->json));
  CHECK(json::parse(event->line)["object"]["metadata"]["resourceVersion"] == "9");
}

TEST_CASE("object_at_revision replaces only the resourceVersion", "[apiserver][watch_encoder][unit]") {
  auto moved = json::parse(object_at_revision(R"({"metadata":{"name":"a","resourceVersion":"3"},"data":{"k":"v"}})", 8));
  CHECK(moved == json::parse(R"({"metadata":{"name":"a","resourceVersion":"8"},"data":{"k":"v"}})"));
}

TEST_CASE("a bookmark carries kind, apiVersion and the resourceVersion only", "[apiserver][watch_encoder][unit]") {
  auto registry = ResourceRegistry::with_builtins();
  const auto& pods = *registry.find("", "v1", "pods");
  auto plain = json::parse(bookmark_line(pods, 109, false));
  CHECK(plain == json::parse(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"109"}}})"));
  auto end = json::parse(bookmark_line(pods, 110, true));
  CHECK(end["object"]["metadata"]["annotations"] == json{{"k8s.io/initial-events-end", "true"}});
  CHECK(bookmark_line(pods, 109, false).back() == '\n');
}

TEST_CASE("an error line carries the Status object", "[apiserver][watch_encoder][unit]") {
  auto line = json::parse(error_line(ApiError::expired("too old resource version: 1 (5)")));
  CHECK(line["type"] == "ERROR");
  CHECK(line["object"]["code"] == 410);
  CHECK(line["object"]["reason"] == "Expired");
}

}  // namespace
}  // namespace kinformer::apiserver
