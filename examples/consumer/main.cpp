// examples/consumer/main.cpp
//
// The smallest service embedding kinformer from its installed package: an informer
// over pods with one handler, reading an API server store embedded in the same
// process (apiserver::Store through apiserver::StoreListWatch). It creates three
// pods, waits until the handler has seen each, deletes one, waits for the delete,
// and prints "consumer: ok" (exit 0), or why it failed (exit 1) within 10 seconds.
// Built out of tree by tests/install/ against `cmake --install`'s prefix.
#include <atomic>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <kinformer/actors/errors.hpp>
#include <kinformer/actors/shared_informer.hpp>
#include <kinformer/apiserver/resources.hpp>
#include <kinformer/apiserver/store.hpp>
#include <kinformer/apiserver/store_list_watch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace {

nlohmann::json pod(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", "default"}}}};
}

// Polls `done` for up to 10 s; why: the handler runs on an actor thread.
bool wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

}  // namespace

int main() {
  caf::actor_system_config cfg;
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};

  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  auto store = std::make_shared<kinformer::apiserver::Store>(registry);
  const auto& pods = *registry.find("", "v1", "pods");

  kinformer::SharedInformerOptions options;
  options.source = std::make_shared<kinformer::apiserver::StoreListWatch>(store, pods);
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
    if (!store->create(pods, "default", pod(name), false)) return std::puts("consumer: create failed"), 1;
  if (!wait_for([&] { return added == 3; }))
    return std::printf("consumer: saw %d of 3 adds\n", added.load()), 1;
  if (!store->remove(pods, "default", "b", {}, false)) return std::puts("consumer: delete failed"), 1;
  if (!wait_for([&] { return deleted == 1 && informer.indexer().size() == 2; }))
    return std::puts("consumer: the delete never reached the cache"), 1;
  informer.stop();
  std::puts("consumer: ok");
  return 0;
}
