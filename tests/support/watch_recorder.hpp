// tests/support/watch_recorder.hpp
//
// WatchRecorder: what one watch received, for tests of ListWatch sources that call
// back synchronously (apiserver::StoreListWatch, testing::FakeSource). Not
// thread-safe: the callbacks must run on the test's thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/list_watch.hpp"

namespace kinformer::testing {

struct WatchRecorder {
  std::vector<WatchEvent> events;
  std::vector<Result<void>> closes;

  ListWatch::EventsCallback on_events() {
    return [this](std::vector<WatchEvent> batch) {
      ++batches;
      for (auto& e : batch) events.push_back(std::move(e));
    };
  }
  ListWatch::ClosedCallback on_closed() {
    return [this](Result<void> r) { closes.push_back(std::move(r)); };
  }
  std::vector<std::string> rvs() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.resource_version);
    return out;
  }
  /// "ADDED a", "DELETED b", "BOOKMARK", ...
  std::vector<std::string> summary() const {
    std::vector<std::string> out;
    for (const auto& e : events) {
      const char* type = e.type == WatchEventType::added      ? "ADDED"
                         : e.type == WatchEventType::modified ? "MODIFIED"
                         : e.type == WatchEventType::deleted  ? "DELETED"
                         : e.type == WatchEventType::bookmark ? "BOOKMARK"
                                                              : "ERROR";
      out.push_back(e.object ? std::string(type) + " " + std::string(e.object->name()) : type);
    }
    return out;
  }

  int batches = 0;
};

/// The answer of a source that answers list() before it returns.
inline Result<ObjectList> list_now(ListWatch& source, const ListOptions& options) {
  std::optional<Result<ObjectList>> answer;
  source.list(options, [&](Result<ObjectList> r) { answer.emplace(std::move(r)); });
  REQUIRE(answer.has_value());  // synchronous by default
  return std::move(*answer);
}

inline std::vector<std::string> names(const ObjectList& list) {
  std::vector<std::string> out;
  for (const auto& o : list.items) out.emplace_back(o->name());
  return out;
}

inline ListOptions list_at(std::string rv, std::int64_t limit = 0) {
  ListOptions o;
  o.resource_version = std::move(rv);
  o.limit = limit;
  return o;
}

inline WatchOptions watch_at(std::string rv) {
  WatchOptions o;
  o.resource_version = std::move(rv);
  return o;
}

}  // namespace kinformer::testing
