// examples/consumer/main.cpp
//
// The smallest service embedding kinformer from its installed package: an informer
// over pods with one handler, reading over HTTP (kinformer::http's HttpListWatch)
// from the embedded API server started in the same process on a free loopback port
// (kinformer::apiserver). It creates three pods through the server, waits until the
// handler has seen each, deletes one, waits for the delete, prints the informer's lines of
// a /metrics scrape (the same text MetricsServer serves) and "consumer: ok" (exit 0), or
// why it failed (exit 1) within 10 seconds.
// Built out of tree by tests/install/ against `cmake --install`'s prefix.
#include <atomic>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <kinformer/actors/errors.hpp>
#include <kinformer/actors/scheduler.hpp>
#include <kinformer/actors/shared_informer.hpp>
#include <kinformer/apiserver/server.hpp>
#include <kinformer/runtime/http/http_list_watch.hpp>
#include <kinformer/runtime/metrics.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

namespace {

std::string pod(const std::string& name) {
  return nlohmann::json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}}.dump();
}

// Polls `done` for up to 10 s; why: the handler runs on an actor thread.
bool wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

}  // namespace

int main() {
  caf::actor_system_config cfg;
  kinformer::actors::configure_scheduler(cfg);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};

  kinformer::apiserver::Server server({});  // 127.0.0.1, a free port
  if (auto port = server.start(); !port)
    return std::printf("consumer: %s\n", port.error().message.c_str()), 1;
  kinformer::http::ClientConfig config;
  config.server = server.url();
  auto client = kinformer::http::Client::create(config);
  if (!client) return std::printf("consumer: %s\n", client.error().message.c_str()), 1;

  kinformer::SharedInformerOptions options;
  options.source = std::make_shared<kinformer::http::HttpListWatch>(
      client.value(), kinformer::http::collection_path("", "v1", "pods", "default"));
  kinformer::SharedInformer informer(system, options);

  std::atomic<int> added{0};
  std::atomic<int> deleted{0};
  kinformer::HandlerFuncs handler;
  handler.on_add = [&](const kinformer::ObjectPtr& o, bool) {
    std::printf("consumer: ADD %s\n", std::string(o->key()).c_str());
    added++;
  };
  handler.on_delete = [&](const kinformer::DeletedObject& d) {
    std::printf("consumer: DELETE %s\n", std::string(d.key()).c_str());
    deleted++;
  };
  if (!informer.add_handler(handler)) return std::puts("consumer: add_handler failed"), 1;

  informer.run();
  if (!informer.wait_for_sync(std::chrono::seconds(10))) return std::puts("consumer: never synced"), 1;
  for (const char* name : {"a", "b", "c"})
    if (server.call("POST", "/api/v1/namespaces/default/pods", pod(name)).status != 201)
      return std::puts("consumer: create failed"), 1;
  if (!wait_for([&] { return added == 3; }))
    return std::printf("consumer: saw %d of 3 adds\n", added.load()), 1;
  if (server.call("DELETE", "/api/v1/namespaces/default/pods/b").status != 200)
    return std::puts("consumer: delete failed"), 1;
  if (!wait_for([&] { return deleted == 1 && informer.indexer().size() == 2; }))
    return std::puts("consumer: the delete never reached the cache"), 1;
  // The scrape must agree with what the handler saw: 3 adds, 1 delete, 2 cached.
  const std::string scrape = kinformer::default_registry().render();
  std::istringstream lines(scrape);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("kinformer_", 0) == 0 && line.find("resource=\"pods\"") != std::string::npos)
      std::printf("consumer: scrape %s\n", line.c_str());
  for (const char* expected : {"kinformer_reflector_events_total{informer=\"pods\",resource=\"pods\",type=\"added\"} 3",
                               "kinformer_reflector_events_total{informer=\"pods\",resource=\"pods\",type=\"deleted\"} 1",
                               "kinformer_indexer_objects{informer=\"pods\",resource=\"pods\"} 2"})
    if (scrape.find(expected) == std::string::npos)
      return std::printf("consumer: the scrape lacks '%s'\n", expected), 1;
  informer.stop();
  (void)server.stop();
  std::puts("consumer: ok");
  return 0;
}
