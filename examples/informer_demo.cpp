// examples/informer_demo.cpp
//
// A live informer embedded beside the API server's store (apiserver::Store read
// in-process through apiserver::StoreListWatch, no HTTP): pods are created,
// scheduled, started and deleted by a script on the main thread; the informer's
// handler prints each change as it arrives, including the periodic resync and what
// a relist after a watch disruption looks like (the disruption is injected with
// tests/support's FaultInjectingListWatch). Ends by itself after ~4 seconds.
//
//   build/bin/informer_demo
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <nlohmann/json.hpp>

#include "actors/errors.hpp"
#include "actors/shared_informer.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/store.hpp"
#include "apiserver/store_list_watch.hpp"
#include "tests/support/fault_injecting_list_watch.hpp"

namespace {

using namespace std::chrono_literals;

const auto started = std::chrono::steady_clock::now();
std::mutex out_mu;

void log(const std::string& who, const std::string& line) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  std::lock_guard<std::mutex> lock(out_mu);
  std::cout << "[" << std::setw(5) << ms << " ms] " << std::left << std::setw(8) << who << std::right << line << "\n"
            << std::flush;
}

nlohmann::json pod(const std::string& name, const std::string& node, const std::string& phase) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "shop"}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", phase}}}};
}

/// The demo's writes, as an API client's would reach the store.
struct Pods {
  kinformer::apiserver::Store& store;
  const kinformer::apiserver::ResourceType& type;

  void create(nlohmann::json object) {
    if (!store.create(type, "shop", std::move(object), false)) log("demo", "create failed");
  }
  void update(nlohmann::json object) {
    const std::string name = object["metadata"]["name"];
    auto replace = [&](const nlohmann::json*) -> kinformer::apiserver::ApiResult<nlohmann::json> {
      return object;
    };
    if (!store.write(type, "shop", name, replace, false, false)) log("demo", "update of " + name + " failed");
  }
  void remove(const std::string& name) {
    if (!store.remove(type, "shop", name, {}, false)) log("demo", "delete of " + name + " failed");
  }
};

std::string describe(const kinformer::ObjectPtr& o) {
  auto node = o->field("spec.nodeName");
  auto phase = o->field("status.phase");
  std::ostringstream s;
  s << o->key() << " rv=" << o->resource_version() << " node=" << (node && !node->empty() ? *node : "-")
    << " phase=" << (phase ? *phase : "-");
  return s.str();
}

}  // namespace

int main() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};

  // The API server's store, as a service embedding both would hold it.
  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  auto store = std::make_shared<kinformer::apiserver::Store>(registry);
  (void)store->create(*registry.namespaces(), "", {{"metadata", {{"name", "shop"}}}}, false);
  Pods pods{*store, *registry.find("", "v1", "pods")};
  pods.create(pod("web-0", "node-1", "Running"));
  pods.create(pod("web-1", "node-2", "Running"));
  // The informer reads the store's pods in-process; the fault injector only serves
  // the disruption at the end (without faults it is transparent).
  auto in_process = std::make_shared<kinformer::apiserver::StoreListWatch>(store, pods.type);
  auto source = std::make_shared<kinformer::testing::FaultInjectingListWatch>(in_process);

  kinformer::SharedInformerOptions options;
  options.source = source;
  options.resync_period = 1500ms;
  kinformer::SharedInformer informer(system, options);
  (void)informer.set_watch_error_handler(
      [](const kinformer::Error& e) { log("watch", "error, the reflector recovers: " + e.to_string()); });

  kinformer::HandlerFuncs funcs;
  funcs.on_add = [](const kinformer::ObjectPtr& o, bool initial) {
    log("handler", std::string(initial ? "ADD (initial list) " : "ADD    ") + describe(o));
  };
  funcs.on_update = [](const kinformer::ObjectPtr& old_object, const kinformer::ObjectPtr& o) {
    if (old_object->resource_version() == o->resource_version())
      log("handler", "RESYNC " + describe(o));
    else
      log("handler", "UPDATE " + describe(o) + " (was rv=" + std::string(old_object->resource_version()) + ")");
  };
  funcs.on_delete = [](const kinformer::DeletedObject& d) {
    log("handler", std::string(d.is_tombstone() ? "DELETE (seen by a relist) " : "DELETE ") + std::string(d.key()));
  };
  kinformer::HandlerOptions handler_options;
  handler_options.resync_period = 1500ms;  // this handler wants the periodic resyncs
  auto handle = informer.add_handler(funcs, handler_options);
  if (!handle) return 1;

  log("demo", "starting the informer over 2 pods");
  informer.run();
  if (!informer.wait_for_sync(10s)) return 1;
  log("demo", "synced: the cache holds " + std::to_string(informer.indexer().size()) + " pods");

  std::this_thread::sleep_for(200ms);
  log("demo", "create web-2 (pending, unscheduled)");
  pods.create(pod("web-2", "", "Pending"));
  std::this_thread::sleep_for(200ms);
  log("demo", "schedule web-2 on node-3");
  pods.update(pod("web-2", "node-3", "Pending"));
  std::this_thread::sleep_for(200ms);
  log("demo", "web-2 starts");
  pods.update(pod("web-2", "node-3", "Running"));
  std::this_thread::sleep_for(200ms);
  log("demo", "delete web-0");
  pods.remove("web-0");
  std::this_thread::sleep_for(900ms);  // the first resync falls in here

  log("demo", "watch disruption: web-1 deleted unseen, web-3 created unseen, then a relist");
  const auto next = store->revision() + 1;
  source->drop_events_at(std::to_string(next));  // the watch never hears of these two
  source->drop_events_at(std::to_string(next + 1));
  pods.remove("web-1");
  pods.create(pod("web-3", "node-1", "Running"));
  source->close_watches(kinformer::Error{kinformer::Errc::gone, "too old resource version"});  // 410: relist
  std::this_thread::sleep_for(2000ms);  // the back-off before the relist: 0.8-1.6 s

  auto in_shop = informer.indexer().by_index(kinformer::namespace_index, "shop");
  log("demo", "cache by namespace \"shop\": " + std::to_string(in_shop ? in_shop->size() : 0) + " pods");
  log("demo", "stopping: drains the pipeline, ends every actor");
  informer.stop();
  log("demo", "done");
  return 0;
}
