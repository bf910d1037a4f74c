// Tests of the scheduler's run queue (actors/job_queue.hpp): whom a push or take
// wakes (issue 29). A "sleeping worker" is a thread blocked in take(). The last case runs
// real actors on the scheduler profile (actors/scheduler.hpp).
#include "actors/job_queue.hpp"

#include <chrono>
#include <future>
#include <set>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/resumable.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/scheduler.hpp"

#include "tests/support/eventually.hpp"

using kinformer::actors::JobQueue;
using kinformer::testing::eventually;

namespace {

// A job is only a pointer to the queue; none of these runs.
class FakeJob : public caf::resumable {
 public:
  resume_result resume(caf::execution_unit*, std::size_t) override { return done; }
  void intrusive_ptr_add_ref_impl() override {}
  void intrusive_ptr_release_impl() override {}
};

std::future<caf::resumable*> sleeping_worker(JobQueue& queue) {
  auto taken = std::async(std::launch::async, [&queue] { return queue.take(); });
  eventually([&] { return queue.sleeping() == 1; }, "the worker thread did not block in take() on an empty queue");
  return taken;
}

}  // namespace

TEST_CASE("a job pushed from outside the workers wakes a sleeping worker", "[scheduler][unit]") {
  JobQueue queue;
  FakeJob job;
  auto taken = sleeping_worker(queue);
  queue.push(&job);
  CHECK(taken.get() == &job);
  CHECK(queue.wakeups() == 1);
}

TEST_CASE("a job a worker pushes into a short queue wakes nobody, since that worker takes it next",
          "[scheduler][unit]") {
  JobQueue queue;
  FakeJob own, external;
  auto taken = sleeping_worker(queue);
  queue.push(&own, /*from_worker=*/true);
  CHECK(queue.wakeups() == 0);
  queue.push(&external);  // releases the sleeper
  const std::set<caf::resumable*> jobs{taken.get(), queue.take()};
  CHECK(jobs == std::set<caf::resumable*>{&own, &external});
}

TEST_CASE("a worker's push wakes a sleeping worker once more than backlog_jobs are queued", "[scheduler][unit]") {
  JobQueue queue(JobQueue::Options{2, std::chrono::hours(1)});
  FakeJob a, b, c;
  auto taken = sleeping_worker(queue);
  queue.push(&a, true);
  queue.push(&b, true);
  CHECK(queue.wakeups() == 0);
  queue.push(&c, true);
  CHECK(queue.wakeups() == 1);
  CHECK(taken.get() == &a);  // oldest first
  CHECK(queue.take() == &b);
  CHECK(queue.take() == &c);
}

TEST_CASE("a worker's push wakes a sleeping worker when the oldest job waited longer than backlog_wait",
          "[scheduler][unit]") {
  JobQueue queue(JobQueue::Options{100, std::chrono::milliseconds(1)});
  FakeJob a, b;
  auto taken = sleeping_worker(queue);
  queue.push(&a, true);
  CHECK(queue.wakeups() == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a is now older than backlog_wait
  queue.push(&b, true);
  CHECK(queue.wakeups() == 1);
  CHECK(taken.get() == &a);
  CHECK(queue.take() == &b);
}

TEST_CASE("drain hands over every queued job in order and empties the queue", "[scheduler][unit]") {
  JobQueue queue;
  FakeJob a, b;
  queue.push(&a);
  queue.push(&b, true);
  std::vector<caf::resumable*> drained;
  queue.drain([&](caf::resumable* job) { drained.push_back(job); });
  CHECK(drained == std::vector<caf::resumable*>{&a, &b});
  FakeJob c;
  queue.push(&c);
  CHECK(queue.take() == &c);
}

TEST_CASE("on the framework's scheduler a blocked actor does not hold back the message sent beside it",
          "[scheduler][actor]") {
  // A router sends to a blocking actor and then to a quick one, as the Processor sends one
  // batch to each of two handlers: the quick one must not wait for the blocked one's worker.
  caf::actor_system_config config;
  kinformer::actors::configure_scheduler(config);
  caf::actor_system system{config};
  std::promise<void> quick_ran;
  auto blocked = system.spawn([]() -> caf::behavior {
    return {[](int) { std::this_thread::sleep_for(std::chrono::seconds(2)); }};
  });
  auto quick = system.spawn([&quick_ran]() -> caf::behavior { return {[&quick_ran](int) { quick_ran.set_value(); }}; });
  auto router = system.spawn([blocked, quick](caf::event_based_actor* self) -> caf::behavior {
    return {[self, blocked, quick](int x) {
      self->send(blocked, x);
      self->send(quick, x);
    }};
  });
  // Both workers go idle first (spawning woke them); had one stayed awake, the check below
  // could only pass, never fail for a wrong reason.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  caf::anon_send(router, 1);
  CHECK(quick_ran.get_future().wait_for(std::chrono::milliseconds(1000)) == std::future_status::ready);
}

TEST_CASE("scheduler.policy lazy_wake runs actors on the framework's own policy", "[scheduler][actor]") {
  caf::actor_system_config config;
  kinformer::actors::configure_scheduler(config);
  config.set("scheduler.policy", caf::atom("lazy_wake"));
  caf::actor_system system{config};
  std::promise<int> got;
  auto echo = system.spawn([&got]() -> caf::behavior { return {[&got](int x) { got.set_value(x + 1); }}; });
  auto router = system.spawn([echo](caf::event_based_actor* self) -> caf::behavior {
    return {[self, echo](int x) { self->send(echo, x); }};
  });
  caf::anon_send(router, 41);
  auto answer = got.get_future();
  REQUIRE(answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(answer.get() == 42);
}
