// Tests of the scheduler's run queue (actors/job_queue.hpp): whom a push, take or the
// alarm wakes (issue 29). A "sleeping worker" is a thread blocked in take(). The queue's
// own cases play the alarm themselves (JobQueue::ManualAlarm: they call on_alarm() with the
// time they choose); the last cases run real actors on the scheduler profiles
// (actors/scheduler.hpp).
#include "actors/job_queue.hpp"

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/resumable.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>

#include "actors/scheduler.hpp"

#include "tests/support/captured_log.hpp"
#include "tests/support/eventually.hpp"

using kinformer::actors::JobQueue;
using kinformer::testing::eventually;

namespace {

using namespace std::chrono_literals;
using Clock = JobQueue::Clock;

// A job is only a pointer to the queue; a Workers thread runs its body, if it has one.
class FakeJob : public caf::resumable {
 public:
  FakeJob() = default;
  explicit FakeJob(std::function<void()> body) : body_(std::move(body)) {}
  resume_result resume(caf::execution_unit*, std::size_t) override {
    if (body_) body_();
    return done;
  }
  void intrusive_ptr_add_ref_impl() override {}
  void intrusive_ptr_release_impl() override {}

 private:
  std::function<void()> body_;
};

// The backlog rule is out of the way (100 jobs, an hour), so that only the alarm wakes
// for jobs a worker pushes.
JobQueue::Options alarm_only(std::chrono::microseconds left_behind_wait) {
  return JobQueue::Options{100, std::chrono::hours(1), left_behind_wait};
}

JobQueue manual_queue(std::chrono::microseconds left_behind_wait = 1ms) {
  return JobQueue(alarm_only(left_behind_wait), JobQueue::ManualAlarm{});
}

// `count` threads that take jobs from `queue` and run them, as CAF's workers do, until
// each takes the stop job.
class Workers {
 public:
  Workers(JobQueue& queue, std::size_t count) : queue_(queue) {
    for (std::size_t i = 0; i < count; ++i)
      threads_.emplace_back([this] {
        for (caf::resumable* job = queue_.take(); job != &stop_; job = queue_.take()) job->resume(nullptr, 1);
      });
    eventually([&] { return queue_.sleeping() == count; }, "the worker threads did not block in take()");
  }
  ~Workers() {
    for (std::size_t i = 0; i < threads_.size(); ++i) queue_.push(&stop_);
    for (auto& thread : threads_) thread.join();
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

 private:
  JobQueue& queue_;
  FakeJob stop_;
  std::vector<std::thread> threads_;
};

std::future<caf::resumable*> sleeping_worker(JobQueue& queue) {
  auto taken = std::async(std::launch::async, [&queue] { return queue.take(); });
  eventually([&] { return queue.sleeping() == 1; }, "the worker thread did not block in take() on an empty queue");
  return taken;
}

}  // namespace

TEST_CASE("a job pushed from outside the workers wakes a sleeping worker", "[scheduler][unit]") {
  auto queue = manual_queue();
  FakeJob job;
  auto taken = sleeping_worker(queue);
  queue.push(&job);
  CHECK(taken.get() == &job);
  CHECK(queue.wakeups() == 1);
}

TEST_CASE("a job a worker pushes into a short queue wakes nobody, since that worker takes it next",
          "[scheduler][unit]") {
  auto queue = manual_queue();
  FakeJob own, external;
  auto taken = sleeping_worker(queue);
  queue.push(&own, /*from_worker=*/true);
  CHECK(queue.wakeups() == 0);
  queue.push(&external);  // releases the sleeper
  const std::set<caf::resumable*> jobs{taken.get(), queue.take()};
  CHECK(jobs == std::set<caf::resumable*>{&own, &external});
}

TEST_CASE("a worker's push wakes a sleeping worker once more than backlog_jobs are queued", "[scheduler][unit]") {
  JobQueue queue(JobQueue::Options{2, std::chrono::hours(1), std::chrono::hours(1)}, JobQueue::ManualAlarm{});
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
  JobQueue queue(JobQueue::Options{100, std::chrono::milliseconds(1), std::chrono::hours(1)}, JobQueue::ManualAlarm{});
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

// The home worker blocked in take() first, then another worker.
std::pair<std::future<caf::resumable*>, std::future<caf::resumable*>> home_and_other_sleeping(JobQueue& queue) {
  auto home = std::async(std::launch::async, [&queue] { return queue.take(/*home=*/true); });
  eventually([&] { return queue.sleeping() == 1; }, "the home worker did not block in take() on an empty queue");
  auto other = std::async(std::launch::async, [&queue] { return queue.take(); });
  eventually([&] { return queue.sleeping() == 2; }, "the other worker did not block in take() on an empty queue");
  return {std::move(home), std::move(other)};
}

TEST_CASE("a job pushed from outside the workers wakes the home worker, though another one sleeps too",
          "[scheduler][unit]") {
  auto queue = manual_queue();
  FakeJob from_io, next;
  auto [home, other] = home_and_other_sleeping(queue);
  queue.push(&from_io);
  CHECK(home.get() == &from_io);
  CHECK(other.wait_for(20ms) == std::future_status::timeout);
  queue.push(&next);  // the home worker is awake now: the other one is woken
  CHECK(other.get() == &next);
  CHECK(queue.wakeups() == 2);
}

TEST_CASE("a worker's backlog wakes a worker other than the home one, which stays beside the I/O threads",
          "[scheduler][unit]") {
  JobQueue queue(JobQueue::Options{0, std::chrono::hours(1), std::chrono::hours(1)}, JobQueue::ManualAlarm{});
  FakeJob backlog, from_io;
  auto [home, other] = home_and_other_sleeping(queue);
  queue.push(&backlog, /*from_worker=*/true);  // more than 0 jobs queued: backlog
  CHECK(other.get() == &backlog);
  CHECK(home.wait_for(20ms) == std::future_status::timeout);
  queue.push(&from_io);
  CHECK(home.get() == &from_io);
}

TEST_CASE("the home worker is woken for a worker's backlog when it is the only one asleep", "[scheduler][unit]") {
  JobQueue queue(JobQueue::Options{0, std::chrono::hours(1), std::chrono::hours(1)}, JobQueue::ManualAlarm{});
  FakeJob backlog;
  auto home = std::async(std::launch::async, [&queue] { return queue.take(/*home=*/true); });
  eventually([&] { return queue.sleeping() == 1; }, "the home worker did not block in take() on an empty queue");
  queue.push(&backlog, /*from_worker=*/true);
  CHECK(home.get() == &backlog);
  CHECK(queue.sleeping() == 0);
}

TEST_CASE("drain hands over every queued job in order and empties the queue", "[scheduler][unit]") {
  auto queue = manual_queue();
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

TEST_CASE("a job a worker leaves beside a sleeping worker arms the alarm, which wakes the sleeper once the job "
          "is older than left_behind_wait",
          "[scheduler][unit]") {
  auto queue = manual_queue(1ms);
  FakeJob job;
  auto taken = sleeping_worker(queue);
  CHECK_FALSE(queue.armed_until());
  const auto before = Clock::now();
  queue.push(&job, /*from_worker=*/true);
  const auto after = Clock::now();
  const auto armed = queue.armed_until();
  REQUIRE(armed);
  CHECK(*armed >= before + 1ms);
  CHECK(*armed <= after + 1ms);
  queue.on_alarm(*armed - 1us);  // an expiry for an earlier arming
  CHECK(queue.wakeups() == 0);
  CHECK(queue.armed_until() == armed);
  queue.on_alarm(*armed);
  CHECK(queue.wakeups() == 1);
  CHECK(taken.get() == &job);
}

TEST_CASE("the alarm re-arms for the next job when the one it was armed for has been taken", "[scheduler][unit]") {
  auto queue = manual_queue(1ms);
  FakeJob first, second;
  auto taken = sleeping_worker(queue);
  queue.push(&first, true);
  const auto first_due = queue.armed_until();
  REQUIRE(first_due);
  while (Clock::now() <= *first_due - 1ms) {
  }  // so that `second` is queued strictly later than `first`
  queue.push(&second, true);
  CHECK(queue.take() == &first);  // the busy worker's next job; `second` stays beside the sleeper
  queue.on_alarm(*first_due);
  CHECK(queue.wakeups() == 0);
  const auto second_due = queue.armed_until();
  REQUIRE(second_due);
  CHECK(*second_due > *first_due);
  queue.on_alarm(*second_due);
  CHECK(queue.wakeups() == 1);
  CHECK(taken.get() == &second);
}

TEST_CASE("the alarm wakes nobody when every worker runs, and stays disarmed until a job is left beside a sleeper",
          "[scheduler][unit]") {
  auto queue = manual_queue(1ms);
  FakeJob job;
  queue.push(&job, true);  // no worker sleeps: the pusher itself takes it next
  CHECK_FALSE(queue.armed_until());
  queue.on_alarm(Clock::now() + 1h);
  CHECK(queue.wakeups() == 0);
  CHECK(queue.take() == &job);
}

TEST_CASE("idle: once every worker sleeps the alarm is disarmed, so it wakes nothing", "[scheduler][unit]") {
  auto queue = manual_queue(1ms);
  std::atomic<bool> armed_beside_sleeper{false};
  std::atomic<bool> child_ran{false};
  FakeJob child([&] { child_ran = true; });
  FakeJob parent([&] {
    queue.push(&child, /*from_worker=*/true);
    armed_beside_sleeper = queue.armed_until().has_value();
  });
  Workers workers(queue, 2);
  CHECK_FALSE(queue.armed_until());
  queue.push(&parent);  // from outside: wakes one worker; the other sleeps on
  eventually([&] { return child_ran && queue.sleeping() == 2; },
             "the parent's worker did not run the child and go back to sleep");
  CHECK(armed_beside_sleeper);  // the child waited beside the sleeping worker
  CHECK_FALSE(queue.armed_until());  // the worker that found the queue empty disarmed it
  const auto wakeups = queue.wakeups();
  queue.on_alarm(Clock::now() + 1h);  // a late expiry of that arming
  CHECK(queue.wakeups() == wakeups);
  CHECK_FALSE(queue.armed_until());
}

// A job type declared brief, as the informer's own actors declare theirs.
class BriefJob : public FakeJob {};

TEST_CASE("a brief job's worker keeps what it pushes and what its take leaves: no alarm, no wake-up",
          "[scheduler][unit]") {
  JobQueue::declare_brief_type(typeid(BriefJob));
  CHECK(JobQueue::is_brief_type(typeid(BriefJob)));
  CHECK_FALSE(JobQueue::is_brief_type(typeid(FakeJob)));
  auto queue = manual_queue(1ms);
  BriefJob brief, brief_next;
  FakeJob plain, after_plain;
  queue.push(&brief, true);         // nobody sleeps yet
  REQUIRE(queue.take() == &brief);  // this thread now runs a brief job
  auto taken = sleeping_worker(queue);
  queue.push(&brief_next, true);  // beside the sleeper, from a brief job
  queue.push(&plain, true);
  CHECK_FALSE(queue.armed_until());
  REQUIRE(queue.take() == &brief_next);  // brief again: `plain` stays queued beside the sleeper
  CHECK_FALSE(queue.armed_until());
  CHECK(queue.wakeups() == 0);
  REQUIRE(queue.take() == &plain);  // a plain job: what it pushes waits for the alarm
  queue.push(&after_plain, true);
  const auto armed = queue.armed_until();
  REQUIRE(armed);
  queue.on_alarm(*armed);
  CHECK(queue.wakeups() == 1);
  CHECK(taken.get() == &after_plain);
}

TEST_CASE("entering a MayBlock scope in a brief job arms the alarm for what is queued beside a sleeper",
          "[scheduler][unit]") {
  JobQueue::declare_brief_type(typeid(BriefJob));
  auto queue = manual_queue(1ms);
  BriefJob brief;
  FakeJob pushed;
  queue.push(&brief, true);
  REQUIRE(queue.take() == &brief);
  auto taken = sleeping_worker(queue);
  queue.push(&pushed, true);
  CHECK_FALSE(queue.armed_until());
  {
    const JobQueue::MayBlock user_code;  // the brief job calls code that may block
    const auto armed = queue.armed_until();
    REQUIRE(armed);
    queue.on_alarm(*armed);
    CHECK(queue.wakeups() == 1);
    CHECK(taken.get() == &pushed);
  }
  // After the scope the job is brief again: a push beside a sleeper arms nothing.
  FakeJob kept, woke;
  auto second = sleeping_worker(queue);  // its take found the queue empty and disarmed the alarm
  queue.push(&kept, true);
  CHECK_FALSE(queue.armed_until());
  CHECK(queue.wakeups() == 1);
  queue.push(&woke);  // from outside: wakes the sleeper, which takes the oldest job
  CHECK(second.get() == &kept);
}

TEST_CASE("a MayBlock scope on a thread that runs no job of a queue changes nothing", "[scheduler][unit]") {
  auto queue = manual_queue(1ms);
  FakeJob job;
  auto taken = sleeping_worker(queue);
  std::thread([&] { const JobQueue::MayBlock outside; }).join();
  CHECK_FALSE(queue.armed_until());
  CHECK(queue.wakeups() == 0);
  queue.push(&job);
  CHECK(taken.get() == &job);
}

TEST_CASE("with its own alarm, a job left behind a worker that blocks is taken by the sleeping one",
          "[scheduler][unit]") {
  // The first job blocks its worker until the second has run or 10 s have passed: without
  // the alarm (or with one that does not fire) the second waits for the first.
  JobQueue queue(alarm_only(1ms));
  std::promise<void> second_ran;
  auto second_done = second_ran.get_future();
  std::promise<std::future_status> first_ran;
  auto first_done = first_ran.get_future();
  FakeJob second([&] { second_ran.set_value(); });
  FakeJob first([&] { first_ran.set_value(second_done.wait_for(10s)); });
  FakeJob parent([&] {
    queue.push(&first, true);
    queue.push(&second, true);
  });
  Workers workers(queue, 2);
  queue.push(&parent);
  INFO("the first job did not end within 30 s: did a worker take the parent and then the first?");
  REQUIRE(first_done.wait_for(30s) == std::future_status::ready);
  const auto first_saw = first_done.get();
  INFO("the first job waited 10 s for the second: the alarm did not wake the sleeping worker for it");
  CHECK(first_saw == std::future_status::ready);
}

TEST_CASE("on the framework's schedulers a blocked actor holds back the message sent beside it for under 250 ms",
          "[scheduler][actor]") {
  // A router sends to a blocking actor and then to a quick one, as the Processor sends one
  // batch to each of two handlers: the quick one must not wait for the blocked one's worker.
  // sharing wakes the other worker at once; lazy_wake (the default) leaves the quick one's
  // job behind the blocked one (none of these actors is declared brief), and its alarm
  // wakes the other worker after 1 ms. 250 ms leaves room for a loaded 2-core machine's
  // scheduling; without the alarm the quick one waited the blocked one's 2 s.
  const int policy = GENERATE(0, 1, 2);
  INFO("scheduler.policy: " << (policy == 0 ? "the default" : policy == 1 ? "sharing" : "lazy_wake"));
  caf::actor_system_config config;
  kinformer::actors::configure_scheduler(config);
  if (policy == 1) config.set("scheduler.policy", caf::atom("sharing"));
  if (policy == 2) config.set("scheduler.policy", caf::atom("lazy_wake"));
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
  CHECK(quick_ran.get_future().wait_for(std::chrono::milliseconds(250)) == std::future_status::ready);
}

TEST_CASE("the default profile runs actors on the framework's own policy, lazy_wake", "[scheduler][actor]") {
  caf::actor_system_config config;
  kinformer::actors::configure_scheduler(config);
  caf::actor_system system{config};
  CHECK(caf::get_or(system.config(), "scheduler.policy", caf::atom("")) == caf::atom("lazy_wake"));
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

TEST_CASE("KINFORMER_HOME_CPU: off turns the home CPU off, on keeps the profile, anything else is warned about",
          "[scheduler][home_cpu][unit]") {
  using kinformer::actors::profile_from_environment;
  using kinformer::actors::SchedulerProfile;
  struct Restore {
    ~Restore() { ::unsetenv("KINFORMER_HOME_CPU"); }
  } restore;
  ::unsetenv("KINFORMER_HOME_CPU");
  CHECK(profile_from_environment(SchedulerProfile{}).home_cpu);
  CHECK_FALSE(profile_from_environment(SchedulerProfile{false}).home_cpu);
  ::setenv("KINFORMER_HOME_CPU", "off", 1);
  CHECK_FALSE(profile_from_environment(SchedulerProfile{}).home_cpu);
  ::setenv("KINFORMER_HOME_CPU", "on", 1);
  CHECK(profile_from_environment(SchedulerProfile{}).home_cpu);
  CHECK_FALSE(profile_from_environment(SchedulerProfile{false}).home_cpu);  // on does not override the code
  kinformer::testing::CapturedLog log;
  ::setenv("KINFORMER_HOME_CPU", "0", 1);
  CHECK(profile_from_environment(SchedulerProfile{}).home_cpu);
  INFO("log: " << log.out.str());
  CHECK(log.out.str().find("KINFORMER_HOME_CPU is neither on nor off") != std::string::npos);
  CHECK(log.out.str().find("value=0") != std::string::npos);
}
