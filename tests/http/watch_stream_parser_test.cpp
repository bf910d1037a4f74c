// Unit tests of the watch stream's line parser and of the Status → Error mapping
// (issue 8, item 1): pieces split anywhere, bookmarks, and every kind of bad input.
#include "runtime/http/watch_stream_parser.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "runtime/http/api_status.hpp"
#include "runtime/http/list_decoder.hpp"
#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::WatchEventType;
using kinformer::http::WatchStreamParser;
using kinformer::testing::pod_json;

namespace {

std::string event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}\n";
}

}  // namespace

TEST_CASE("events split at every byte boundary parse the same as whole lines", "[http][item-1][unit]") {
  const std::string stream = event("ADDED", pod_json("a", "5")) + event("MODIFIED", pod_json("a", "6")) +
                             event("DELETED", pod_json("a", "7"));
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    WatchStreamParser parser(1 << 20);
    REQUIRE(parser.feed(std::string_view(stream).substr(0, cut)));
    REQUIRE(parser.feed(std::string_view(stream).substr(cut)));
    auto events = parser.take_events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].type == WatchEventType::added);
    CHECK(events[1].type == WatchEventType::modified);
    CHECK(events[2].type == WatchEventType::deleted);
    CHECK(events[2].resource_version == "7");
    CHECK(events[2].object->key() == "default/a");
  }
}

TEST_CASE("an envelope in any layout gives the same events as the API server's own", "[http][item-1][unit]") {
  // The API server's layout, {"type":..,"object":..} with no spaces, is read without
  // walking the envelope; every other layout must still parse, to the same events.
  const std::string pod = pod_json("a", "5");
  const std::vector<std::string> lines = {
      event("MODIFIED", pod),
      R"({ "type" : "MODIFIED" , "object" : )" + pod + " }\n",
      R"({"object":)" + pod + R"(,"type":"MODIFIED"})" + "\n",
      R"({"type":"MODIFIED","object":)" + pod + R"(,"extra":{"a":[1,2]}})" + "\n",  // its object alone fails
      R"({"type":"MODIFIED","object":)" + pod + "}  \r\n",
      R"({"type":"MODIFIED","object": )" + pod + " }\n",  // the server's field order, with spaces
  };
  for (const auto& line : lines) {
    INFO(line);
    WatchStreamParser parser(1 << 20);
    REQUIRE(parser.feed(line));
    auto events = parser.take_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].type == WatchEventType::modified);
    CHECK(events[0].resource_version == "5");
    CHECK(events[0].object->json() == pod);
  }
}

TEST_CASE("a malformed object in the API server's layout is reported as the general parser reports it",
          "[http][item-1][unit]") {
  WatchStreamParser parser(1 << 20);
  CHECK_FALSE(parser.feed(event("ADDED", pod_json("a", "5")) + event("ADDED", R"({"metadata":{"name":}})")));
  REQUIRE(parser.failure());
  CHECK(parser.failure()->code == Errc::decode_failed);
  CHECK(parser.failure()->message.find("malformed watch event on line 2") != std::string::npos);
  CHECK(parser.take_events().size() == 1);
}

TEST_CASE("a bookmark carries its resourceVersion and the initial-events-end marker",
          "[http][item-1][unit]") {
  WatchStreamParser parser(1 << 20);
  REQUIRE(
      parser.feed(event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"42",)"
                                    R"("annotations":{"k8s.io/initial-events-end":"true"}}})")));
  REQUIRE(parser.feed("\n"));  // a blank keep-alive line is skipped
  auto events = parser.take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == WatchEventType::bookmark);
  CHECK(events[0].resource_version == "42");
  CHECK(events[0].initial_events_end);
  CHECK(events[0].object == nullptr);
}

TEST_CASE("a malformed line ends the stream with decode_failed after the good events before it",
          "[http][item-1][unit]") {
  WatchStreamParser parser(1 << 20);
  CHECK_FALSE(parser.feed(event("ADDED", pod_json("a", "5")) +
                          "{\"type\":\"ADDED\",\"object\":{\"metadata\":\n" +
                          event("ADDED", pod_json("b", "6"))));
  REQUIRE(parser.failure());
  CHECK(parser.failure()->code == Errc::decode_failed);
  CHECK(parser.failure()->message.find("line 2") != std::string::npos);
  auto events = parser.take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].object->name() == "a");
  CHECK_FALSE(parser.feed(event("ADDED", pod_json("c", "7"))));  // nothing after a failure
  CHECK(parser.take_events().empty());
}

TEST_CASE("unknown event types and objects without a name are malformed", "[http][item-1][unit]") {
  SECTION("an unknown type") {
    WatchStreamParser parser(1 << 20);
    CHECK_FALSE(parser.feed(event("RENAMED", pod_json("a", "5"))));
    CHECK(parser.failure()->message.find("unknown event type 'RENAMED'") != std::string::npos);
  }
  SECTION("an object without metadata.name") {
    WatchStreamParser parser(1 << 20);
    CHECK_FALSE(parser.feed(event("ADDED", R"({"kind":"Pod","metadata":{}})")));
    CHECK(parser.failure()->code == Errc::decode_failed);
  }
  SECTION("a line that is not an object") {
    WatchStreamParser parser(1 << 20);
    CHECK_FALSE(parser.feed("[1,2]\n"));
    CHECK(parser.failure()->code == Errc::decode_failed);
  }
}

TEST_CASE("an object nested 100k deep is read or refused, never recursed into", "[http][item-1][unit]") {
  // Hostile nesting in the body the informer skips, and in a label it must read.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string in_spec =
      R"({"kind":"Pod","metadata":{"name":"a","namespace":"default","resourceVersion":"5"},"spec":{"x":)" + deep +
      "}}";
  const std::string in_label =
      R"({"kind":"Pod","metadata":{"name":"b","namespace":"default","labels":{"x":)" + deep + "}}}";
  WatchStreamParser parser(1 << 20);
  REQUIRE(parser.feed(event("ADDED", in_spec)));
  auto events = parser.take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].object->key() == "default/a");
  CHECK(events[0].object->json() == in_spec);
  CHECK_FALSE(parser.feed(event("ADDED", in_label)));
  REQUIRE(parser.failure());
  CHECK(parser.failure()->code == Errc::decode_failed);
  CHECK(parser.failure()->message.find("must be a string") != std::string::npos);
}

TEST_CASE("an event over the size limit ends the stream without buffering the rest", "[http][item-1][unit]") {
  WatchStreamParser parser(1024);
  const std::string chunk(600, 'x');
  REQUIRE(parser.feed("{\"type\":\"ADDED\",\"object\":{\"a\":\"" + chunk));
  CHECK_FALSE(parser.feed(chunk));  // still no newline and over 1024 bytes
  REQUIRE(parser.failure());
  CHECK(parser.failure()->code == Errc::decode_failed);
  CHECK(parser.failure()->message.find("limit of 1024") != std::string::npos);
  CHECK(parser.pending_bytes() == 0);
}

TEST_CASE("an ERROR event ends the stream with the Status's error", "[http][item-1][unit]") {
  WatchStreamParser parser(1 << 20);
  CHECK_FALSE(parser.feed(
      event("ADDED", pod_json("a", "5")) +
      event("ERROR", R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                     R"x("message":"too old resource version: 1 (5)","reason":"Expired","code":410})x")));
  REQUIRE(parser.failure());
  CHECK(parser.failure()->code == Errc::gone);
  CHECK(parser.failure()->message.find("too old resource version") != std::string::npos);
  CHECK(parser.take_events().size() == 1);
}

TEST_CASE("a last line without a newline is parsed at the clean end", "[http][item-1][unit]") {
  WatchStreamParser parser(1 << 20);
  std::string line = event("ADDED", pod_json("a", "5"));
  line.pop_back();
  REQUIRE(parser.feed(line));
  CHECK(parser.take_events().empty());
  REQUIRE(parser.finish());
  CHECK(parser.take_events().size() == 1);
}

TEST_CASE("HTTP answers map to the errors the Reflector acts on", "[http][item-1][unit]") {
  using kinformer::http::error_from_response;
  CHECK(error_from_response(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"gone"})", "")
            .code == Errc::gone);
  auto throttled =
      error_from_response(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests"})", "7");
  CHECK(throttled.code == Errc::too_many_requests);
  CHECK(kinformer::retry_after(throttled) == std::chrono::seconds(7));
  CHECK(kinformer::retry_after(error_from_response(429, "", "")) == std::chrono::seconds(1));
  CHECK(error_from_response(
            504, R"({"code":504,"reason":"Timeout","message":"Too large resource version: 9"})", "")
            .code == Errc::too_large_rv);
  auto internal = error_from_response(503, "upstream down", "");
  CHECK(internal.code == Errc::server_error);
  CHECK(internal.message == "HTTP 503: upstream down");
  auto not_found =
      error_from_response(404, R"({"code":404,"reason":"NotFound","message":"pods \"x\" not found"})", "");
  CHECK(not_found.message == "HTTP 404 NotFound: pods \"x\" not found");
}

TEST_CASE("a list body decodes its items, resourceVersion and continue token", "[http][item-1][unit]") {
  std::string body =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"abc"},"items":[)" +
      pod_json("a", "5") + "," + pod_json("b", "6") + "]}";
  body.reserve(body.size() + 64);
  auto list = kinformer::http::decode_list(body, body.capacity());
  REQUIRE(list);
  CHECK(list->resource_version == "9");
  CHECK(list->continue_token == "abc");
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[1]->name() == "b");

  std::string broken =
      R"({"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"}},{"metadata":]})";
  broken.reserve(broken.size() + 64);
  auto failed = kinformer::http::decode_list(broken, broken.capacity());
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == Errc::decode_failed);
}
