// WatchStream (apiserver/http/watch_stream.hpp): what a watch sends, without a socket.
#include "apiserver/http/watch_stream.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/storage/store.hpp"
#include "apiserver/watch_filter.hpp"

namespace kinformer::apiserver {
namespace {

using nlohmann::json;

struct WatchStreamFixture {
  ResourceRegistry registry = ResourceRegistry::with_builtins();
  const ResourceType& configmaps = *registry.find("", "v1", "configmaps");
  Store store{registry, StoreOptions{3, false}};

  std::uint64_t create(const std::string& name) {
    auto made = store.create(configmaps, "default", {{"metadata", {{"name", name}}}}, false);
    REQUIRE(made);
    return made->object->resource_version;
  }

  WatchPlan plan_after(std::uint64_t rv) {
    auto filter = ObjectFilter::parse(configmaps, "default", "", "");
    REQUIRE(filter);
    return WatchPlan{std::move(filter).value(), rv, {}, {}, std::nullopt, false, std::chrono::seconds(0), 0, nullptr};
  }
};

std::string text_of(const WatchStream::Batch& batch) {
  std::string out;
  for (auto piece : batch.pieces) out += piece;
  return out;
}

// The lines of a chunked body (chunk headers and CRLFs dropped).
std::vector<json> lines_of(const std::string& chunked) {
  std::vector<json> out;
  std::size_t at = 0;
  while (at < chunked.size()) {
    auto eol = chunked.find("\r\n", at);
    REQUIRE(eol != std::string::npos);
    auto size = std::stoul(chunked.substr(at, eol - at), nullptr, 16);
    auto chunk = chunked.substr(eol + 2, size);
    at = eol + 2 + size + 2;
    for (std::size_t start = 0; start < chunk.size();) {
      auto newline = chunk.find('\n', start);
      out.push_back(json::parse(chunk.substr(start, newline - start)));
      start = newline + 1;
    }
  }
  return out;
}

TEST_CASE("a watch sends the response header, then the store's events after its resourceVersion",
          "[apiserver][watch_stream][unit]") {
  WatchStreamFixture f;
  auto first = f.create("a");
  WatchStream stream(f.store, f.plan_after(first));
  f.create("b");
  f.create("c");
  auto batch = stream.next_batch();
  auto text = text_of(batch);
  const std::string header = "HTTP/1.1 200 OK\r\n";
  REQUIRE(text.compare(0, header.size(), header) == 0);
  auto body = text.substr(text.find("\r\n\r\n") + 4);
  auto lines = lines_of(body);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["type"] == "ADDED");
  CHECK(lines[0]["object"]["metadata"]["name"] == "b");
  CHECK(lines[1]["object"]["metadata"]["name"] == "c");
  CHECK(batch.events == 2);
  CHECK(stream.position() == first + 2);
  CHECK(stream.next_batch().pieces.empty());  // caught up: nothing to write until the store moves
}

TEST_CASE("a watch's initial state comes before the initial-events-end bookmark",
          "[apiserver][watch_stream][unit]") {
  WatchStreamFixture f;
  f.create("a");
  auto plan = f.plan_after(f.store.revision());
  plan.initial_objects = {f.store.get(f.configmaps, "default", "a").value()};
  plan.initial_lines = {"{\"type\":\"BOOKMARK\",\"object\":{}}\n"};
  WatchStream stream(f.store, std::move(plan));
  auto first = text_of(stream.next_batch());
  auto initial = lines_of(first.substr(first.find("\r\n\r\n") + 4));
  REQUIRE(initial.size() == 1);
  CHECK(initial[0]["type"] == "ADDED");
  auto second = stream.next_batch();
  auto end = lines_of(text_of(second));
  REQUIRE(end.size() == 1);
  CHECK(end[0]["type"] == "BOOKMARK");
  CHECK(second.events == 1);
}

TEST_CASE("a watcher behind the kept history gets 410 and the final chunk", "[apiserver][watch_stream][unit]") {
  WatchStreamFixture f;
  auto first = f.create("a");
  WatchStream stream(f.store, f.plan_after(first));
  (void)stream.next_batch();  // the header
  for (const char* name : {"b", "c", "d", "e", "f"}) f.create(name);  // the history keeps 3
  auto batch = stream.next_batch();
  CHECK(batch.fell_behind);
  CHECK(stream.ending());
  auto text = text_of(batch);
  REQUIRE(text.size() > 5);
  CHECK(text.substr(text.size() - 5) == "0\r\n\r\n");
  auto lines = lines_of(text.substr(0, text.size() - 5));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["type"] == "ERROR");
  CHECK(lines[0]["object"]["code"] == 410);
  CHECK(stream.next_batch().pieces.empty());
}

TEST_CASE("finish queues the final chunk after a bookmark at the watch's position",
          "[apiserver][watch_stream][unit]") {
  WatchStreamFixture f;
  auto first = f.create("a");
  WatchStream stream(f.store, f.plan_after(first));
  (void)stream.next_batch();
  stream.queue_bookmark();
  stream.finish();
  auto text = text_of(stream.next_batch());
  REQUIRE(text.size() > 5);
  CHECK(text.substr(text.size() - 5) == "0\r\n\r\n");
  auto lines = lines_of(text.substr(0, text.size() - 5));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["type"] == "BOOKMARK");
  CHECK(lines[0]["object"]["metadata"]["resourceVersion"] == std::to_string(first));
}

}  // namespace
}  // namespace kinformer::apiserver
