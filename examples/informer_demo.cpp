// examples/informer_demo.cpp
//
// A live informer embedded beside the API server's store (apiserver::Store read
// in-process through apiserver::StoreListWatch, no HTTP): pods are created,
// scheduled, started and deleted by a script on the main thread; the informer's
// handler prints each change as it arrives, including the periodic resync and what
// a relist after a watch disruption looks like (the disruption comes from
// DisruptableSource below: a ListWatch decorator you can copy to rehearse your own
// handlers' recovery). Then the Processor's features: a
// chain with priorities and predicates (an admission gate stops pods labelled
// quarantine=yes before the auditor), a canary taking 10% of the keys added and
// removed at run time, and a throwing handler restarted with back-off. Ends by
// itself after ~6 seconds.
//
//   build/bin/informer_demo
#include <atomic>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "actors/errors.hpp"
#include "actors/scheduler.hpp"
#include "actors/shared_informer.hpp"
#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/store_list_watch.hpp"
#include "runtime/help_option.hpp"
#include "runtime/list_watch.hpp"

namespace {

using namespace std::chrono_literals;

const auto started = std::chrono::steady_clock::now();
std::mutex out_mu;

void log(const std::string& who, const std::string& line) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                .count();
  std::lock_guard<std::mutex> lock(out_mu);
  std::cout << "[" << std::setw(5) << ms << " ms] " << std::left << std::setw(8) << who << std::right << line
            << "\n"
            << std::flush;
}

nlohmann::json pod(const std::string& name, const std::string& node, const std::string& phase) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "shop"}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", phase}}}};
}

nlohmann::json labelled_pod(const std::string& name, const std::string& ns, const std::string& key,
                            const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{key, value}}}}},
          {"spec", {{"nodeName", "node-1"}}}};
}

/// The demo's writes, as an API client's would reach the store.
struct Pods {
  kinformer::apiserver::Store& store;
  const kinformer::apiserver::ResourceType& type;

  void create(nlohmann::json object, const std::string& ns = "shop") {
    if (!store.create(type, ns, std::move(object), false)) log("demo", "create failed");
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

/// A ListWatch that passes another one through until disrupted: after lose_events()
/// its running watches hear nothing more (a dead connection), and expire() ends them
/// with 410 Gone (the server compacted the history meanwhile), so the Reflector
/// relists and the informer finds what it missed. Lists are never disrupted.
class DisruptableSource final : public kinformer::ListWatch {
 public:
  explicit DisruptableSource(std::shared_ptr<kinformer::ListWatch> inner) : inner_(std::move(inner)) {}

  void list(const kinformer::ListOptions& options, ListCallback done) override {
    inner_->list(options, std::move(done));
  }

  std::unique_ptr<kinformer::Watch> watch(const kinformer::WatchOptions& options, EventsCallback on_events,
                                          ClosedCallback on_closed) override {
    auto line = std::make_shared<Line>();
    line->on_closed = std::move(on_closed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    }
    // Callbacks may run before watch() returns (the in-process source): `line` is ready first.
    line->inner = inner_->watch(
        options,
        [line, on_events = std::move(on_events)](std::vector<kinformer::WatchEvent> events) {
          std::lock_guard<std::mutex> lock(line->mu);
          if (!line->deaf) on_events(std::move(events));
        },
        [line](kinformer::Result<void> result) { line->close(std::move(result)); });
    return std::make_unique<WatchHandle>(line);
  }

  std::string resource() const override { return inner_->resource(); }

  /// The running watches deliver nothing from now on.
  void lose_events() {
    for (const auto& line : live_lines()) {
      std::lock_guard<std::mutex> lock(line->mu);
      line->deaf = true;
    }
  }

  /// The running watches end with 410 Gone.
  void expire() {
    for (const auto& line : live_lines())
      line->close(kinformer::Error{kinformer::Errc::gone, "too old resource version"});
  }

 private:
  // One watch as the Reflector sees it: on_closed runs at most once, and nothing after it.
  struct Line {
    std::mutex mu;  // guards deaf, closed and on_closed; held while delivering
    bool deaf = false, closed = false;
    ClosedCallback on_closed;
    std::unique_ptr<kinformer::Watch> inner;  // set once watch() has it

    void close(kinformer::Result<void> result) {
      ClosedCallback callback;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (closed) return;
        closed = deaf = true;
        callback = std::move(on_closed);
      }
      callback(std::move(result));
    }
  };

  class WatchHandle final : public kinformer::Watch {
   public:
    explicit WatchHandle(std::shared_ptr<Line> line) : line_(std::move(line)) {}
    ~WatchHandle() override { stop(); }
    void stop() override {
      {
        std::lock_guard<std::mutex> lock(line_->mu);
        line_->closed = line_->deaf = true;
      }
      if (line_->inner) line_->inner->stop();
    }
    void pause() override { line_->inner->pause(); }
    void resume() override { line_->inner->resume(); }

   private:
    std::shared_ptr<Line> line_;
  };

  std::vector<std::shared_ptr<Line>> live_lines() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::shared_ptr<Line>> live;
    for (const auto& weak : lines_)
      if (auto line = weak.lock()) live.push_back(line);
    lines_.assign(live.begin(), live.end());  // forget the watches that ended
    return live;
  }

  std::shared_ptr<kinformer::ListWatch> inner_;
  std::mutex mu_;                            // guards lines_
  std::vector<std::weak_ptr<Line>> lines_;  // the watches started, until seen ended
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

constexpr const char* usage =
    "usage: informer_demo   (no options: a live informer beside an in-memory API server store;\n"
    "                       ends by itself after about 6 seconds)\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  caf::actor_system_config cfg;
  kinformer::actors::configure_scheduler(cfg);
  kinformer::actors::register_errors(cfg);
  caf::actor_system system{cfg};

  // The API server's store, as a service embedding both would hold it.
  auto registry = kinformer::apiserver::ResourceRegistry::with_builtins();
  auto store = std::make_shared<kinformer::apiserver::Store>(registry);
  for (const char* ns : {"shop", "dev", "load"})
    (void)store->create(*registry.namespaces(), "", {{"metadata", {{"name", ns}}}}, false);
  Pods pods{*store, *registry.find("", "v1", "pods")};
  pods.create(pod("web-0", "node-1", "Running"));
  pods.create(pod("web-1", "node-2", "Running"));
  // The informer reads the store's pods in-process; the disruptable wrapper only
  // matters for the disruption below (until then it is transparent).
  auto in_process = std::make_shared<kinformer::apiserver::StoreListWatch>(store, pods.type);
  auto source = std::make_shared<DisruptableSource>(in_process);

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
      log("handler",
          "UPDATE " + describe(o) + " (was rv=" + std::string(old_object->resource_version()) + ")");
  };
  funcs.on_delete = [](const kinformer::DeletedObject& d) {
    log("handler",
        std::string(d.is_tombstone() ? "DELETE (seen by a relist) " : "DELETE ") + std::string(d.key()));
  };
  kinformer::HandlerOptions handler_options;
  handler_options.resync_period = 1500ms;  // this handler wants the periodic resyncs
  handler_options.predicate =
      !kinformer::actors::in_namespace("load");  // not the 200 pods of the canary part
  auto handle = informer.add_handler(funcs, handler_options);
  if (!handle) return 1;

  // A chain: the gate (priority 1) sees every pod first and stops quarantined ones;
  // the auditor (priority 2) only sees pods of namespace "shop" that got through.
  kinformer::ChainFuncs gate;
  gate.on_add = [](const kinformer::ObjectPtr& o, bool) {
    if (o->label("quarantine")) {
      log("gate", "STOP   " + std::string(o->key()) + " (quarantine=yes: the chain ends here)");
      return kinformer::Verdict::stop;
    }
    log("gate", "NEXT   " + std::string(o->key()));
    return kinformer::Verdict::next;
  };
  kinformer::HandlerOptions gate_options;
  gate_options.group = "admission";
  gate_options.priority = 1;
  gate_options.predicate = !kinformer::actors::in_namespace("load");
  kinformer::HandlerFuncs auditor;
  auditor.on_add = [](const kinformer::ObjectPtr& o, bool) {
    log("auditor", "AUDIT  " + std::string(o->key()));
  };
  kinformer::HandlerOptions auditor_options;
  auditor_options.group = "admission";
  auditor_options.priority = 2;
  auditor_options.predicate = kinformer::actors::in_namespace("shop");
  if (!informer.add_handler(auditor, auditor_options) || !informer.add_handler(gate, gate_options)) return 1;

  // A throwing handler: supervision restarts it with back-off (shortened for the demo).
  kinformer::HandlerFuncs flaky;
  flaky.on_add = [](const kinformer::ObjectPtr& o, bool) {
    if (o->label("poison")) throw std::runtime_error("cannot handle " + std::string(o->name()));
    log("flaky", "ADD    " + std::string(o->key()));
  };
  kinformer::HandlerOptions flaky_options;
  flaky_options.supervision.backoff_initial = 300ms;
  flaky_options.predicate = kinformer::actors::in_namespace("shop");
  auto flaky_handle = informer.add_handler(flaky, flaky_options);
  if (!flaky_handle) return 1;

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
  source->lose_events();  // the watch never hears of these two
  pods.remove("web-1");
  pods.create(pod("web-3", "node-1", "Running"));
  source->expire();  // 410: relist
  std::this_thread::sleep_for(2000ms);  // the back-off before the relist: 0.8-1.6 s

  auto in_shop = informer.indexer().by_index(kinformer::namespace_index, "shop");
  log("demo", "cache by namespace \"shop\": " + std::to_string(in_shop ? in_shop->size() : 0) + " pods");

  log("demo", "chain: create shop/api-0, shop/bad-0 (quarantine=yes) and dev/tool-0");
  pods.create(labelled_pod("api-0", "shop", "app", "api"));
  pods.create(labelled_pod("bad-0", "shop", "quarantine", "yes"));
  pods.create(labelled_pod("tool-0", "dev", "app", "tool"), "dev");
  std::this_thread::sleep_for(300ms);

  log("demo", "add a canary handler at run time: it takes 10% of the keys (stable hash)");
  auto canary_count = std::make_shared<std::atomic<int>>(0);
  kinformer::HandlerFuncs canary;
  canary.on_add = [canary_count](const kinformer::ObjectPtr&, bool initial) {
    if (!initial) ++*canary_count;
  };
  kinformer::HandlerOptions canary_options;
  canary_options.predicate = kinformer::actors::canary(10);
  auto canary_handle = informer.add_handler(canary, canary_options);
  if (!canary_handle) return 1;
  for (int i = 0; i < 200; ++i)
    pods.create(labelled_pod("batch-" + std::to_string(i), "load", "app", "batch"), "load");
  std::this_thread::sleep_for(500ms);
  log("canary", "saw " + std::to_string(canary_count->load()) + " of 200 new pods");
  informer.remove_handler(canary_handle.value());
  log("demo", "canary removed at run time");

  log("demo", "a poison pod makes the flaky handler throw: dead letter, restart after back-off");
  pods.create(labelled_pod("poison-0", "shop", "poison", "yes"));
  std::this_thread::sleep_for(100ms);
  pods.create(labelled_pod("after-poison", "shop", "app", "web"));
  std::this_thread::sleep_for(700ms);
  log("flaky", "restarts=" + std::to_string(flaky_handle->restarts()) +
                   " dead_letters=" + std::to_string(flaky_handle->dead_letters()));
  log("demo", "stopping: drains the pipeline, ends every actor");
  informer.stop();
  log("demo", "done");
  return 0;
}
