// Tests of the work queue's actor adaptor (actors/workqueue_worker.hpp) on the
// real scheduler: keys added from plain threads reach worker actors.
#include "actors/workqueue_worker.hpp"

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <caf/scoped_actor.hpp>
#include <caf/system_messages.hpp>
#include <catch2/catch.hpp>

#include "tests/actors/live_fixture.hpp"

namespace actors = kinformer::actors;
using kinformer::testing::eventually;
using kinformer::testing::LiveFixture;
using namespace std::chrono_literals;

TEST_CASE_METHOD(LiveFixture,
                 "worker actors reconcile every key added from threads and retry failures with back-off",
                 "[workqueue][item-61][item-65][actor]") {
  kinformer::WorkQueueOptions queue_options;
  queue_options.base_delay = 1ms;
  auto queue = std::make_shared<kinformer::WorkQueue>(queue_options);
  auto mu = std::make_shared<std::mutex>();
  auto done = std::make_shared<std::set<std::string>>();
  auto flaky_tries = std::make_shared<int>(0);
  actors::WorkQueueWorkerOptions options;
  options.queue = queue;
  options.reconcile = [mu, done, flaky_tries](const std::string& key) -> kinformer::Result<void> {
    std::lock_guard<std::mutex> lock(*mu);
    if (key == "flaky" && ++*flaky_tries < 3)
      return kinformer::Error{kinformer::Errc::server_error, "not yet"};
    done->insert(key);
    return {};
  };
  auto workers = actors::spawn_workqueue_workers(sys, options, 2);
  std::thread producer([queue] {
    for (int i = 0; i < 200; ++i) queue->add("k" + std::to_string(i % 50));  // duplicates collapse
    queue->add("flaky");
  });
  producer.join();
  auto reconciled_all = [&] {
    std::lock_guard<std::mutex> lock(*mu);
    return done->size() == 51;
  };
  CHECK(eventually(reconciled_all, "the workers never reconciled all 51 keys: lost wake-up?"));
  CHECK(options.stats->failed == 2);
  CHECK(queue->num_requeues("flaky") == 0);  // forgotten after the success
  caf::scoped_actor self{sys};
  for (auto& w : workers) self->monitor(w);
  queue->shut_down();
  int down = 0;
  self->receive_for(down, 2)(
      [](caf::down_msg&) {},
      caf::after(10s) >> [] { FAIL("a worker did not quit after the queue shut down"); });
}
