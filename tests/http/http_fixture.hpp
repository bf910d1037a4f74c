// tests/http/http_fixture.hpp
//
// What the HTTP integration tests share: an actor system with two workers, an
// informer over an HttpListWatch, a thread-safe record of what its handler saw,
// and eventually(pred, why) — a poll with a deadline that says what it waited for.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "runtime/http/client.hpp"
#include "runtime/http/http_list_watch.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/support/eventually.hpp"

namespace kinformer::testing {

/// What one handler saw: the last state per key, deletions, tombstones, errors.
/// With record_deletions false it keeps only the last state of the live keys, so its
/// memory stays bounded under endless churn (the soak measures RSS).
class Seen {
 public:
  explicit Seen(bool record_deletions = true) : record_deletions_(record_deletions) {}
  HandlerFuncs funcs() {
    HandlerFuncs f;
    f.on_add = [this](const ObjectPtr& o, bool) { put(o); };
    f.on_update = [this](const ObjectPtr&, const ObjectPtr& o) { put(o); };
    f.on_delete = [this](const DeletedObject& d) {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string key(d.key());
      last_.erase(key);
      if (!record_deletions_) return;
      deleted_.insert(key);
      if (d.is_tombstone()) tombstones_.insert(key);
    };
    return f;
  }
  void error(const Error& e) {
    std::lock_guard<std::mutex> lock(mu_);
    errors_.push_back(e);
  }
  std::map<std::string, std::string> last() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }
  std::set<std::string> tombstones() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tombstones_;
  }
  std::vector<Error> errors() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  bool saw_error(Errc code, const std::string& text = "") const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : errors_)
      if (e.code == code && e.message.find(text) != std::string::npos) return true;
    return false;
  }

 private:
  void put(const ObjectPtr& o) {
    std::lock_guard<std::mutex> lock(mu_);
    last_[std::string(o->key())] = std::string(o->resource_version());
  }
  const bool record_deletions_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> last_;  // key → resourceVersion
  std::set<std::string> deleted_;
  std::set<std::string> tombstones_;
  std::vector<Error> errors_;
};

struct HttpFixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  Seen seen;

  static caf::actor_system_config& prepare(caf::actor_system_config& c) {
    actors::configure_scheduler(c);
    actors::register_errors(c);
    return c;
  }
  HttpFixture() : sys(prepare(cfg)) {}

  /// An informer (not yet run) over `collection` of the server at `url`, whose
  /// handler and error handler record into `seen`.
  std::unique_ptr<SharedInformer> informer(std::shared_ptr<http::Client> client,
                                           const std::string& collection, std::int64_t page_size = 0) {
    SharedInformerOptions options;
    options.source = std::make_shared<http::HttpListWatch>(std::move(client), collection);
    options.reflector.page_size = page_size;
    options.reflector.backoff.initial = std::chrono::milliseconds(200);
    options.reflector.backoff.cap = std::chrono::milliseconds(2000);
    auto informer = std::make_unique<SharedInformer>(sys, options);
    REQUIRE(informer->set_watch_error_handler([this](const Error& e) { seen.error(e); }));
    REQUIRE(informer->add_handler(seen.funcs()));
    return informer;
  }
};

/// "namespace/name" → resourceVersion of every object in the informer's cache.
inline std::map<std::string, std::string> cache_state(const SharedInformer& informer) {
  std::map<std::string, std::string> state;
  for (const auto& object : informer.indexer().list())
    state[std::string(object->key())] = std::string(object->resource_version());
  return state;
}

/// "namespace/name" → resourceVersion of every object the server at 127.0.0.1:port lists
/// now in `collection` (a namespaced collection path), over its own HTTP.
inline std::map<std::string, std::string> server_state(std::uint16_t port, const std::string& collection) {
  auto reply = http_request(port, "GET", collection, "", "application/json", {}, std::chrono::seconds(30));
  INFO("GET " << collection << ": " << reply.status << " " << reply.error);
  REQUIRE(reply.status == 200);
  std::map<std::string, std::string> state;
  const auto list = nlohmann::json::parse(reply.body);
  for (const auto& item : list["items"]) {
    const auto& meta = item["metadata"];
    state[meta["namespace"].get<std::string>() + "/" + meta["name"].get<std::string>()] =
        meta["resourceVersion"];
  }
  return state;
}

inline std::shared_ptr<http::Client> make_client(http::ClientConfig config) {
  auto client = http::Client::create(std::move(config));
  if (!client) FAIL("the HTTP client was not created: " << client.error().to_string());
  return std::move(client).value();
}

inline std::shared_ptr<http::Client> make_client(const std::string& url) {
  http::ClientConfig config;
  config.server = url;
  return make_client(std::move(config));
}

}  // namespace kinformer::testing
