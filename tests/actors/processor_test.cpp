// Tests of the Processor and the handler actors (actors/processor.hpp,
// actors/handler.hpp), through the Controller on the deterministic scheduler.
#include "actors/processor.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <catch2/catch.hpp>

#include "actors/handler.hpp"
#include "tests/actors/pipeline_fixture.hpp"
#include "tests/support/objects.hpp"

using kinformer::DeltaType;
using kinformer::testing::describe;
using kinformer::testing::PipelineFixture;
using kinformer::testing::pod;
using kinformer::testing::Recorder;
using Strings = std::vector<std::string>;
namespace actors = kinformer::actors;
using actors::Verdict;
using namespace std::chrono_literals;

namespace {

/// The registration handle's HasSynced rule (informer-semantics.md §7.6).
bool handle_synced(const PipelineFixture& f, const Recorder& r) {
  const auto& status = *r.registration->status;
  return f.status->distributed_synced && status.attached && status.pending_initial <= 0;
}

actors::HandlerOptions in_group(std::string group, int priority) {
  actors::HandlerOptions options;
  options.group = std::move(group);
  options.priority = priority;
  return options;
}

std::shared_ptr<Strings> shared_log() { return std::make_shared<Strings>(); }

/// Lines of `log` starting with "<tag>: ".
Strings lines_of(const Strings& log, const std::string& tag) {
  Strings out;
  for (const auto& line : log)
    if (line.rfind(tag + ": ", 0) == 0) out.push_back(line.substr(tag.size() + 2));
  return out;
}

std::vector<kinformer::ObjectPtr> pods(int n, const std::string& rv = "1") {
  std::vector<kinformer::ObjectPtr> items;
  for (int i = 0; i < n; ++i) items.push_back(pod("p" + std::to_string(i), rv));
  return items;
}

}  // namespace

// -- registration and replay ------------------------------------------------------

// upstream: TestAddWhileActive
TEST_CASE_METHOD(PipelineFixture,
                 "a handler added after sync gets the cache replayed as initial adds, then changes",
                 "[processor][item-48][actor]") {
  auto early = attach();
  replace({pod("a", "1"), pod("b", "1")});
  // The late joiner's attach travels behind a change the Controller already applied.
  watch({{DeltaType::updated, pod("a", "2")}});
  auto late = attach();
  watch({{DeltaType::added, pod("c", "3")}});
  std::sort(late.log->begin(), late.log->begin() + 2);  // the replay's order is unspecified
  CHECK(*late.log == Strings{"add default/a 2 initial", "add default/b 1 initial", "add default/c 3"});
  CHECK(early.log->size() == 4);
}

TEST_CASE_METHOD(PipelineFixture, "a late joiner's handle syncs only once its replay was handled",
                 "[processor][item-48][actor]") {
  replace({pod("a", "1"), pod("b", "1")});
  Recorder late;
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 7;
  registration->owned = true;
  auto log = late.log;
  registration->handler = track(
      actors::spawn_handler(sys, [log](const actors::Notification& n) { log->push_back(describe(n)); }));
  late.registration = registration;
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  sched.prioritize(controller);
  sched.run_once();  // the Controller snapshots and forwards
  sched.prioritize(processor);
  sched.run_once();  // the Processor queues the replay and sends it
  CHECK(registration->status->attached);
  CHECK_FALSE(handle_synced(*this, late));
  run();
  CHECK(late.log->size() == 2);
  CHECK(handle_synced(*this, late));
}

// upstream: TestStateSharedInformer (handle HasSynced after the initial OnAdds)
TEST_CASE_METHOD(PipelineFixture,
                 "a handler registered before the list syncs after handling the initial list",
                 "[processor][item-47][actor]") {
  auto early = attach();
  CHECK_FALSE(handle_synced(*this, early));
  replace({pod("a", "1")});
  CHECK(*early.log == Strings{"add default/a 1 initial"});
  CHECK(handle_synced(*this, early));
}

TEST_CASE_METHOD(PipelineFixture, "every handle of a chain syncs only once the initial list left the chain",
                 "[processor][chain][item-47][actor]") {
  auto log = shared_log();
  auto first = attach_hop(recording(log, "first"), in_group("chain", 1));
  auto second = attach_hop(recording(log, "second"), in_group("chain", 2));
  auto list = std::make_shared<actors::ListSnapshot>(actors::ListSnapshot{{pod("a", "1")}, "1"});
  self->send(fifo, actors::replace_atom::value, actors::ListSnapshotPtr{list});
  // Run until the first hop has handled the add but the second has not.
  while (lines_of(*log, "first").empty() && sched.try_run_once()) {
  }
  REQUIRE(lines_of(*log, "first").size() == 1);
  CHECK_FALSE(handle_synced(*this, first));
  CHECK_FALSE(handle_synced(*this, second));
  run();
  CHECK(handle_synced(*this, first));
  CHECK(handle_synced(*this, second));
}

// upstream: TestSharedInformerRemoveHandler, TestRemovingRemovedSharedInformer
TEST_CASE_METHOD(PipelineFixture, "a removed handler gets nothing more and removing twice is harmless",
                 "[processor][item-54][actor]") {
  auto kept = attach();
  auto removed = attach();
  replace({pod("a", "1")});
  detach(removed);
  detach(removed);
  self->send(controller, actors::detach_atom::value, actors::RegistrationId{12345});  // unknown id
  run();
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(*removed.log == Strings{"add default/a 1 initial"});
  CHECK(*kept.log == Strings{"add default/a 1 initial", "add default/b 2"});
  CHECK(removed.registration->status->removed);
}

TEST_CASE_METHOD(PipelineFixture,
                 "removing a hop of a chain lets what was queued for it go on to the next hop",
                 "[processor][chain][item-54][actor]") {
  auto log = shared_log();
  caf::scoped_actor silent{sys};  // hop 1: holds its batch
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 40;
  registration->handler = caf::actor_cast<actors::HandlerActor>(silent.ptr());
  registration->options = in_group("chain", 1);
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  attach_hop(recording(log, "last"), in_group("chain", 2));
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(lines_of(*log, "last").empty());  // a is held at hop 1, b waits behind it
  self->send(controller, actors::detach_atom::value, actors::RegistrationId{40});
  run();
  // b was only queued: it goes on at once; a is in flight and waits for hop 1's answer.
  CHECK(lines_of(*log, "last") == Strings{"add default/b 2"});
  CHECK(registration->status->removed);
}

// -- chains -----------------------------------------------------------------------

TEST_CASE_METHOD(PipelineFixture,
                 "a chain visits its handlers in priority order with ties in registration order",
                 "[processor][chain][actor]") {
  auto log = shared_log();
  attach_hop(recording(log, "c"), in_group("chain", 5));
  attach_hop(recording(log, "a"), in_group("chain", 1));
  attach_hop(recording(log, "b1"), in_group("chain", 3));
  attach_hop(recording(log, "b2"), in_group("chain", 3));
  replace({pod("x", "1")});
  CHECK(*log == Strings{"a: add default/x 1 initial", "b1: add default/x 1 initial",
                        "b2: add default/x 1 initial", "c: add default/x 1 initial"});
}

TEST_CASE_METHOD(PipelineFixture, "stop ends a notification's route in its group and no other group",
                 "[processor][chain][actor]") {
  auto log = shared_log();
  auto stop_b = [](const actors::Notification& n) {
    return n.key() == "default/b" ? Verdict::stop : Verdict::next;
  };
  attach_hop(recording(log, "gate", stop_b), in_group("chain", 1));
  attach_hop(recording(log, "after"), in_group("chain", 2));
  attach_hop(recording(log, "other"));  // a group of its own
  replace({pod("a", "1"), pod("b", "1"), pod("c", "1")});
  CHECK(lines_of(*log, "gate").size() == 3);
  CHECK(lines_of(*log, "after") == Strings{"add default/a 1 initial", "add default/c 1 initial"});
  CHECK(lines_of(*log, "other").size() == 3);
}

TEST_CASE_METHOD(PipelineFixture,
                 "a hop whose predicate does not match is skipped and the next one still sees it",
                 "[processor][chain][predicate][actor]") {
  auto log = shared_log();
  auto only_a = in_group("chain", 1);
  only_a.predicate = [](const actors::Notification& n) { return n.key() == "default/a"; };
  attach_hop(recording(log, "only_a"), only_a);
  attach_hop(recording(log, "all"), in_group("chain", 2));
  replace({pod("a", "1"), pod("b", "1")});
  CHECK(lines_of(*log, "only_a") == Strings{"add default/a 1 initial"});
  CHECK(lines_of(*log, "all") == Strings{"add default/a 1 initial", "add default/b 1 initial"});
}

TEST_CASE_METHOD(PipelineFixture,
                 "a chain is pipelined: hop 1 goes on while hop 2 holds an earlier notification",
                 "[processor][chain][actor]") {
  auto log = shared_log();
  attach_hop(recording(log, "hop1"), in_group("chain", 1));
  caf::scoped_actor hop2{sys};  // never answers
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 41;
  registration->handler = caf::actor_cast<actors::HandlerActor>(hop2.ptr());
  registration->options = in_group("chain", 2);
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("b", "2")}});
  watch({{DeltaType::added, pod("c", "3")}});
  CHECK(lines_of(*log, "hop1") == Strings{"add default/a 1 initial", "add default/b 2", "add default/c 3"});
  CHECK(hop2->mailbox().size() == 1);  // a, and nothing else until it answers
}

// -- handlers ---------------------------------------------------------------------

TEST_CASE_METHOD(PipelineFixture, "the lambda form calls only the functions it has", "[handler][actor]") {
  auto adds = std::make_shared<Strings>();
  auto deletes = std::make_shared<Strings>();
  actors::HandlerFuncs funcs;
  funcs.on_add = [adds](const kinformer::ObjectPtr& o, bool initial) {
    adds->push_back(std::string(o->key()) + (initial ? " initial" : ""));
  };
  funcs.on_delete = [deletes](const actors::DeletedObject& d) {
    deletes->push_back(std::string(d.key()) + (d.is_tombstone() ? " tombstone" : ""));
  };
  attach_func(actors::dispatch_to(funcs));
  replace({pod("a", "1"), pod("b", "1")});
  watch({{DeltaType::updated, pod("a", "2")}, {DeltaType::deleted, pod("a", "3")}});
  replace({}, "9");
  CHECK(*adds == Strings{"default/a initial", "default/b initial"});
  CHECK(*deletes == Strings{"default/a", "default/b tombstone"});
}

namespace {
/// The class form: stops deletes, counts the rest.
class Counting : public actors::Handler {
 public:
  explicit Counting(std::shared_ptr<int> seen) : seen_(std::move(seen)) {}
  Verdict on_add(const kinformer::ObjectPtr&, bool) override {
    ++*seen_;
    return Verdict::next;
  }
  Verdict on_delete(const actors::DeletedObject&) override { return Verdict::stop; }

 private:
  std::shared_ptr<int> seen_;
};
}  // namespace

TEST_CASE_METHOD(PipelineFixture, "the chain and class forms answer next or stop per notification",
                 "[handler][chain][actor]") {
  auto log = shared_log();
  auto seen = std::make_shared<int>(0);
  attach_hop(actors::dispatch_to(std::make_shared<Counting>(seen)), in_group("chain", 1));
  actors::ChainFuncs funcs;
  funcs.on_add = [log](const kinformer::ObjectPtr& o, bool) {
    log->push_back("add " + std::string(o->key()));
    return o->name() == "a" ? Verdict::stop : Verdict::next;
  };
  funcs.on_delete = [log](const actors::DeletedObject& d) {
    log->push_back("delete " + std::string(d.key()));
    return Verdict::next;
  };
  attach_hop(actors::dispatch_to(funcs), in_group("chain", 2));
  attach_hop(recording(log, "last"), in_group("chain", 3));
  replace({pod("a", "1"), pod("b", "1")});
  watch({{DeltaType::deleted, pod("b", "2")}});
  CHECK(*seen == 2);
  // The class form stopped the delete; the chain form stopped a.
  CHECK(*log == Strings{"add default/a", "add default/b", "last: add default/b 1 initial"});
}

namespace {
using HopPromise =
    caf::typed_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>;
/// A handler that parks every batch's promise and answers when told to (drain).
using ParkingActor = actors::HandlerActor::extend<caf::reacts_to<actors::drain_atom>>;
struct ParkingState {
  std::vector<HopPromise> parked;
};

ParkingActor::behavior_type parking(ParkingActor::stateful_pointer<ParkingState> self,
                                    std::shared_ptr<std::size_t> parked_count) {
  return {
      [=](actors::notify_atom, actors::RegistrationId, const actors::NotificationBatchPtr&) {
        auto promise =
            self->make_response_promise<actors::handled_atom, actors::RegistrationId, actors::HopReport>();
        self->state.parked.push_back(promise);
        ++*parked_count;
        return promise;
      },
      [=](actors::drain_atom) {
        for (auto& promise : self->state.parked)
          promise.deliver(actors::handled_atom::value, actors::RegistrationId{60}, actors::HopReport{});
        self->state.parked.clear();
      },
  };
}
}  // namespace

TEST_CASE_METHOD(PipelineFixture, "a handler may answer later through a response promise",
                 "[handler][promise][actor]") {
  auto parked = std::make_shared<std::size_t>(0);
  ParkingActor actor = track(sys.spawn(parking, parked));
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 60;
  registration->handler = actor;
  registration->options = in_group("chain", 1);
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  auto log = shared_log();
  attach_hop(recording(log, "next"), in_group("chain", 2));
  replace({pod("a", "1")});
  CHECK(log->empty());  // parked at hop 1
  REQUIRE(*parked == 1);
  self->send(actor, actors::drain_atom::value);  // answer through the promise, later
  run();
  CHECK(*log == Strings{"next: add default/a 1 initial"});
}

// -- supervision ------------------------------------------------------------------

TEST_CASE_METHOD(PipelineFixture, "skip dead-letters the notification that threw and the handler goes on",
                 "[processor][supervision][actor]") {
  auto log = shared_log();
  auto options = actors::HandlerOptions{};
  options.supervision.policy = actors::FailurePolicy::skip;
  auto thrower = attach_hop(
      [log](const actors::Notification& n) {
        if (n.key() == "default/b") throw std::runtime_error("boom");
        log->push_back(std::string(n.key()));
        return Verdict::next;
      },
      options);
  auto other = attach();
  replace({pod("a", "1"), pod("b", "1"), pod("c", "1")});
  watch({{DeltaType::added, pod("d", "2")}});
  CHECK(*log == Strings{"default/a", "default/c", "default/d"});
  CHECK(thrower.registration->status->dead_letters == 1);
  CHECK(status->dead_letters == 1);
  CHECK(other.log->size() == 4);
  CHECK(indexer->size() == 4);
}

TEST_CASE_METHOD(PipelineFixture, "restart ends the actor and makes a new one after a doubling back-off",
                 "[processor][supervision][actor]") {
  auto log = shared_log();
  auto options = actors::HandlerOptions{};  // restart, 1 s doubling to 16 s
  auto flaky = attach_hop(
      [log](const actors::Notification& n) {
        if (n.object && n.object->label("poison")) throw std::runtime_error("poisoned");
        log->push_back(std::string(n.key()));
        return Verdict::next;
      },
      options);
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("bad1", "2", {{"poison", "1"}})},
         {DeltaType::added, pod("bad2", "3", {{"poison", "1"}})},
         {DeltaType::added, pod("b", "4")}});
  CHECK(*log == Strings{"default/a"});  // waiting for the restart
  CHECK(next_timeout() == 1s);
  advance(1s);
  CHECK(flaky.registration->status->restarts == 1);  // the new actor failed on bad2 at once
  CHECK(next_timeout() == 2s);                       // so the back-off doubled
  advance(2s);
  CHECK(*log == Strings{"default/a", "default/b"});  // the next actor goes on after the dead letters
  CHECK(flaky.registration->status->restarts == 2);
  CHECK(flaky.registration->status->dead_letters == 2);
  watch({{DeltaType::added, pod("bad3", "5", {{"poison", "1"}})}});
  CHECK(next_timeout() == 1s);  // a success reset the back-off
  advance(1s);
  CHECK(flaky.registration->status->restarts == 3);
}

TEST_CASE_METHOD(PipelineFixture,
                 "too many restarts within the window mark the registration failed and remove it",
                 "[processor][supervision][actor]") {
  auto options = actors::HandlerOptions{};
  options.supervision.max_restarts = 2;
  options.supervision.backoff_initial = 100ms;
  options.supervision.backoff_cap = 100ms;
  auto always =
      attach_hop([](const actors::Notification&) -> Verdict { throw std::runtime_error("always"); }, options);
  auto other = attach();
  replace(pods(5));
  advance(1s);
  CHECK(always.registration->status->failed);
  CHECK(always.registration->status->removed);
  CHECK(always.registration->status->failure().find("more than 2 restarts") != std::string::npos);
  CHECK(always.registration->status->restarts == 2);
  watch({{DeltaType::added, pod("late", "9")}});
  CHECK(other.log->size() == 6);  // the others and the cache never noticed
  CHECK(indexer->size() == 6);
}

TEST_CASE_METHOD(PipelineFixture, "retry sends the failed notification again, then dead-letters it",
                 "[processor][supervision][actor]") {
  auto attempts = std::make_shared<int>(0);
  auto log = shared_log();
  auto options = actors::HandlerOptions{};
  options.supervision.policy = actors::FailurePolicy::retry;
  options.supervision.retries = 2;
  auto retried = attach_hop(
      [attempts, log](const actors::Notification& n) {
        if (n.key() == "default/a") {
          ++*attempts;
          throw std::runtime_error("transient");
        }
        log->push_back(std::string(n.key()));
        return Verdict::next;
      },
      options);
  replace({pod("a", "1"), pod("b", "1")});
  CHECK(*attempts == 1);
  advance(1s);
  CHECK(*attempts == 2);
  advance(2s);
  CHECK(*attempts == 3);  // the first try and two retries
  CHECK(*log == Strings{"default/b"});
  CHECK(retried.registration->status->dead_letters == 1);
  CHECK(retried.registration->status->restarts == 0);
}

TEST_CASE_METHOD(PipelineFixture,
                 "a handler actor that dies is restarted by its factory and the others go on",
                 "[processor][supervision][actor]") {
  auto doomed = attach();
  auto other = attach();
  replace({pod("a", "1")});
  caf::anon_send_exit(doomed.registration->handler, caf::exit_reason::kill);
  run();
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(other.log->size() == 2);
  CHECK(status->handler_failures == 1);
  advance(1s);
  CHECK(doomed.registration->status->restarts == 1);
  CHECK(*doomed.log == Strings{"add default/a 1 initial", "add default/b 2"});
}

TEST_CASE_METHOD(PipelineFixture, "a handler actor without a factory that dies fails its registration",
                 "[processor][supervision][actor]") {
  auto log = shared_log();
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 70;
  registration->handler = track(actors::spawn_handler(sys, recording(log, "h")));
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  auto other = attach();
  replace({pod("a", "1")});
  caf::anon_send_exit(registration->handler, caf::exit_reason::kill);
  run();
  CHECK(registration->status->failed);
  CHECK(registration->status->failure().find("no factory") != std::string::npos);
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(other.log->size() == 2);
}

TEST_CASE_METHOD(PipelineFixture, "a batch not answered within the hop timeout is a failure of that batch",
                 "[processor][supervision][timeout][actor]") {
  caf::scoped_actor silent{sys};
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 80;
  registration->handler = caf::actor_cast<actors::HandlerActor>(silent.ptr());
  registration->options.supervision.policy = actors::FailurePolicy::skip;
  registration->options.supervision.hop_timeout = 200ms;
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(silent->mailbox().size() == 1);
  advance(200ms);
  CHECK(registration->status->dead_letters == 1);  // a, skipped
  CHECK(silent->mailbox().size() == 2);            // b went out to the same actor
}

// -- replacement ------------------------------------------------------------------

TEST_CASE_METHOD(PipelineFixture,
                 "replace swaps the actor atomically: the in-flight batch ends at the old one",
                 "[processor][replace][actor]") {
  caf::scoped_actor old_actor{sys};  // holds its batch until the test answers for it
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 90;
  registration->handler = caf::actor_cast<actors::HandlerActor>(old_actor.ptr());
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  replace({pod("a", "1")});
  watch({{DeltaType::added, pod("b", "2")}});
  auto log = shared_log();
  auto swapped = std::make_shared<actors::Registration>(*registration);
  swapped->handler = track(actors::spawn_handler(sys, recording(log, "new")));
  self->send(controller, actors::swap_atom::value, actors::RegistrationPtr{swapped});
  run();
  CHECK(log->empty());  // nothing before the old actor answered
  // The old actor answers its batch (a): b goes to the new actor, a never does.
  old_actor->receive(
      [&](actors::notify_atom, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
        CHECK(batch->items.size() == 1);
        return caf::make_message(actors::handled_atom::value, id, actors::HopReport{});
      });
  run();
  watch({{DeltaType::added, pod("c", "3")}});
  CHECK(*log == Strings{"new: add default/b 2", "new: add default/c 3"});
}

TEST_CASE_METHOD(PipelineFixture,
                 "replace with another priority moves the handler in its chain for later notifications",
                 "[processor][replace][chain][actor]") {
  auto log = shared_log();
  auto first = attach_hop(recording(log, "x"), in_group("chain", 1));
  attach_hop(recording(log, "y"), in_group("chain", 2));
  replace({pod("a", "1")});
  auto moved = std::make_shared<actors::Registration>(*first.registration);
  moved->options.priority = 3;
  self->send(controller, actors::swap_atom::value, actors::RegistrationPtr{moved});
  run();
  watch({{DeltaType::added, pod("b", "2")}});
  CHECK(*log == Strings{"x: add default/a 1 initial", "y: add default/a 1 initial", "y: add default/b 2",
                        "x: add default/b 2"});
}

// -- resync -----------------------------------------------------------------------

// upstream: TestListenerResyncPeriods
TEST_CASE_METHOD(PipelineFixture, "resyncs reach only the handlers whose own period is due",
                 "[processor][resync][item-49][actor]") {
  auto none = attach();
  actors::HandlerOptions two;
  two.resync_period = 2s;
  auto every2 = attach(two);
  actors::HandlerOptions three;
  three.resync_period = 3s;
  auto every3 = attach(three);
  replace({pod("a", "1")});
  for (auto* r : {&none, &every2, &every3}) r->log->clear();
  advance(2s, 1s);
  CHECK(every2.log->size() == 1);
  CHECK(every3.log->empty());
  advance(1s, 1s);
  CHECK(every2.log->size() == 1);
  CHECK(*every3.log == Strings{"update default/a 1->1"});
  CHECK(none.log->empty());
}

// upstream: TestResyncCheckPeriod (item 50), as the Processor decides it at any time:
// the check period is the minimum of the informer's and every handler's period.
TEST_CASE("the resync check period drops to the smallest handler period and each handler keeps its own",
          "[processor][resync][item-50][actor]") {
  actors::ProcessorOptions options;
  options.resync_period = std::chrono::hours(12);
  PipelineFixture f(options);
  auto none = f.attach();
  CHECK(f.next_timeout() == 0ms);  // no handler wants resyncs: no check armed
  actors::HandlerOptions minute;
  minute.resync_period = 60s;
  auto every60 = f.attach(minute);
  CHECK(f.next_timeout() == 60s);
  actors::HandlerOptions fifty_five;
  fifty_five.resync_period = 55s;
  auto every55 = f.attach(fifty_five);
  actors::HandlerOptions five;
  five.resync_period = 5s;
  auto every5 = f.attach(five);
  f.replace({pod("a", "1")});
  for (auto* r : {&none, &every60, &every55, &every5}) r->log->clear();
  f.advance(55s, 5s);
  CHECK(every5.log->size() == 11);  // every 5 s
  CHECK(every55.log->size() == 1);  // its own period, checked at the 5 s ticks
  CHECK(every60.log->empty());
  f.advance(5s, 5s);
  CHECK(every60.log->size() == 1);
  CHECK(none.log->empty());
}

// upstream: determineResyncPeriod, minimumResyncPeriod (item 51)
TEST_CASE("an informer that never resyncs resyncs no handler, and periods under a second become one",
          "[processor][resync][item-51][actor]") {
  SECTION("resync period 0 on the informer") {
    actors::ProcessorOptions options;  // resync_period 0
    PipelineFixture f(options);
    actors::HandlerOptions wants;
    wants.resync_period = 30s;
    auto handler = f.attach(wants);
    f.replace({pod("a", "1")});
    f.advance(60s, 1s);
    CHECK(*handler.log == Strings{"add default/a 1 initial"});
    CHECK(f.next_timeout() == 0ms);  // no check armed
  }
  SECTION("a request of 500 ms") {
    PipelineFixture f;
    actors::HandlerOptions fast;
    fast.resync_period = 500ms;
    auto handler = f.attach(fast);
    f.replace({pod("a", "1")});
    handler.log->clear();
    f.advance(999ms, 1ms);
    CHECK(handler.log->empty());
    f.advance(1ms, 1ms);
    CHECK(*handler.log == Strings{"update default/a 1->1"});
  }
}

// -- flow control and slow handlers ----------------------------------------------

namespace {
struct OneKeyBatches : PipelineFixture {
  OneKeyBatches() : PipelineFixture(credit(/*max_buffered_keys=*/1000), /*max_batch=*/1) {}
};

actors::ProcessorOptions small_window() {
  auto options = PipelineFixture::with_resync();
  options.group_window = 1;
  return options;
}
struct SmallWindow : PipelineFixture {
  SmallWindow() : PipelineFixture(small_window()) {}
};
}  // namespace

TEST_CASE_METHOD(OneKeyBatches, "a handler's mailbox never holds more than one batch",
                 "[processor][credit][actor]") {
  caf::scoped_actor silent{sys};  // never answers
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 77;
  registration->handler = caf::actor_cast<actors::HandlerActor>(silent.ptr());
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  replace(pods(10));
  CHECK(indexer->size() == 10);          // the Controller was not held back...
  CHECK(silent->mailbox().size() == 1);  // ...and the handler got one batch
}

// derived: processorListener.pop (item 56), with a bounded backlog instead of an unbounded buffer
TEST_CASE_METHOD(SmallWindow,
                 "a blocked handler's backlog is coalesced per key while the others and the cache go on",
                 "[processor][coalescing][item-56][actor]") {
  caf::scoped_actor slow{sys};
  auto registration = std::make_shared<actors::Registration>();
  registration->id = 88;
  registration->handler = caf::actor_cast<actors::HandlerActor>(slow.ptr());
  self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
  run();
  auto fast = attach();
  replace({pod("k0", "1"), pod("k1", "1"), pod("k2", "1")});
  for (int round = 2; round < 50; ++round)
    for (int k = 0; k < 3; ++k)
      watch({{DeltaType::updated, pod("k" + std::to_string(k), std::to_string(round))}});
  watch({{DeltaType::deleted, pod("k0", "50")}, {DeltaType::deleted, pod("k1", "50")}});
  watch({{DeltaType::added, pod("fresh", "51")}});
  watch({{DeltaType::deleted, pod("fresh", "52")}});
  CHECK(fast.log->size() == 3 + 48 * 3 + 4);  // the fast group saw every event
  CHECK(indexer->size() == 1);
  CHECK(status->backlog_max <= 4);  // bounded by the keys, not the 151 events
  CHECK(status->groups_cut_loose >= 1);  // its window overflowed: it holds no credit
  // Let the slow handler go, answering every batch: it sees the final state of each key.
  Strings seen;
  for (int i = 0; i < 10 && !slow->mailbox().empty(); ++i) {
    slow->receive(
        [&](actors::notify_atom, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
          for (const auto& n : batch->items) seen.push_back(describe(n));
          return caf::make_message(actors::handled_atom::value, id, actors::HopReport{});
        });
    run();
  }
  // k0 was told (its add is in flight): its delete is kept, its updates merged
  // into it. k1 and "fresh" were never told: add and delete collapsed. k2's
  // updates merged into its initial add.
  CHECK(seen == Strings{"add default/k0 1 initial", "add default/k2 49 initial", "delete default/k0 50"});
}

// -- credit held until handled, lagging groups cut loose ------------------------

namespace {
/// Resyncs off, `max_buffered_keys` of credit, the default lag (20 ms) and stall (1 s) timeouts.
actors::ProcessorOptions flow(std::size_t max_buffered_keys) {
  actors::ProcessorOptions options;
  options.max_buffered_keys = max_buffered_keys;
  return options;
}

/// Two keys of credit, popped two at a time: each upstream batch is two keys.
struct TwoKeyCredit : PipelineFixture {
  TwoKeyCredit() : PipelineFixture(flow(2), /*max_batch=*/2) {}

  /// Registers `handler` (answered by hand through answer()) under `id`.
  void attach_manual(caf::scoped_actor& handler, actors::RegistrationId id) {
    auto registration = std::make_shared<actors::Registration>();
    registration->id = id;
    registration->handler = caf::actor_cast<actors::HandlerActor>(handler.ptr());
    self->send(controller, actors::attach_atom::value, actors::RegistrationPtr{registration});
    run();
  }

  /// Answers `handler`'s batch with `next` for all; returns what the batch held.
  Strings answer(caf::scoped_actor& handler) {
    REQUIRE_FALSE(handler->mailbox().empty());  // a batch must be waiting for it
    Strings seen;
    handler->receive(
        [&](actors::notify_atom, actors::RegistrationId id, const actors::NotificationBatchPtr& batch) {
          for (const auto& n : batch->items) seen.push_back(describe(n));
          return caf::make_message(actors::handled_atom::value, id, actors::HopReport{});
        });
    run();
    return seen;
  }

  std::string rv_of(const std::string& name) const {
    auto object = indexer->get_by_key("default/" + name);
    return object ? std::string(object->resource_version()) : "absent";
  }
};
}  // namespace

TEST_CASE_METHOD(TwoKeyCredit, "a batch's credit comes back only once every group handled it",
                 "[processor][credit][actor]") {
  caf::scoped_actor slow{sys};
  attach_manual(slow, 90);
  auto fast = attach();
  replace(pods(6));
  // The flood waits in the FIFO: one batch is out, held by the slow group.
  CHECK(indexer->size() == 2);
  CHECK(fast.log->size() == 2);
  CHECK(answer(slow) == Strings{"add default/p0 1 initial", "add default/p1 1 initial"});
  CHECK(indexer->size() == 4);
  CHECK(fast.log->size() == 4);
  CHECK(answer(slow).size() == 2);
  CHECK(answer(slow).size() == 2);
  CHECK(indexer->size() == 6);
  CHECK(status->groups_cut_loose == 0);
  CHECK(status->backlog_max == 0);  // nothing took the coalescing path
}

TEST_CASE_METHOD(TwoKeyCredit,
                 "a group holding back another is cut loose after the lag timeout and holds credit again once "
                 "caught up",
                 "[processor][credit][coalescing][actor]") {
  caf::scoped_actor slow{sys};
  attach_manual(slow, 90);
  auto fast = attach();
  replace(pods(6));
  advance(19ms, 1ms);
  CHECK(indexer->size() == 2);  // the fast group waits for the slow one...
  advance(1ms, 1ms);
  CHECK(status->groups_cut_loose == 1);  // ...20 ms, then the slow group is cut loose
  CHECK(indexer->size() == 6);
  CHECK(fast.log->size() == 6);
  CHECK(answer(slow) == Strings{"add default/p0 1 initial", "add default/p1 1 initial"});
  // What arrived since, as one batch.
  CHECK(answer(slow) == Strings{"add default/p2 1 initial", "add default/p3 1 initial", "add default/p4 1 initial",
                                "add default/p5 1 initial"});
  // Caught up: it holds credit again, so the next change waits for it.
  watch({{DeltaType::updated, pod("p0", "2")},
         {DeltaType::updated, pod("p1", "2")},
         {DeltaType::updated, pod("p2", "2")}});
  CHECK(rv_of("p1") == "2");
  CHECK(rv_of("p2") == "1");
  CHECK(answer(slow) == Strings{"update default/p0 1->2", "update default/p1 1->2"});
  CHECK(rv_of("p2") == "2");
  CHECK(status->groups_cut_loose == 1);
}

TEST_CASE_METHOD(TwoKeyCredit, "a lone group that stalls is cut loose after the stall timeout",
                 "[processor][credit][actor]") {
  caf::scoped_actor stuck{sys};
  attach_manual(stuck, 91);
  replace(pods(4));
  advance(999ms, 1ms);
  CHECK(indexer->size() == 2);  // no other group waits: only the stall timeout applies
  CHECK(status->groups_cut_loose == 0);
  advance(1ms, 1ms);
  CHECK(status->groups_cut_loose == 1);
  CHECK(indexer->size() == 4);
  CHECK(answer(stuck).size() == 2);
  CHECK(answer(stuck) == Strings{"add default/p2 1 initial", "add default/p3 1 initial"});
}

// upstream: TestSharedInformerWatchDisruption with an informer built with resync 0
TEST_CASE("an informer that never resyncs hands a relist's unchanged objects to every handler",
          "[processor][resync][item-52][actor]") {
  PipelineFixture f(actors::ProcessorOptions{});  // resync_period 0
  auto alone = f.attach();
  auto first = f.attach(in_group("chain", 1));
  auto second = f.attach(in_group("chain", 2));
  f.replace({pod("a", "1"), pod("b", "1")});
  for (auto* r : {&alone, &first, &second}) r->log->clear();
  f.replace({pod("a", "1"), pod("b", "2")}, "2");
  for (auto* r : {&alone, &first, &second})
    CHECK(*r->log == Strings{"update default/a 1->1", "update default/b 1->2"});
}
