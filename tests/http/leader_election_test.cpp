// Leader election on a coordination.k8s.io/v1 Lease over the HTTP client against
// the embedded API server, with client-go's defaults (15 s / 10 s / 2 s, jitter
// 1.2) on a manual clock (issue 17, item 4). Each step advances virtual time by
// 100 ms and then waits for every candidate's lease requests to finish, so the
// candidates see the server as it is at that virtual instant.
#include "runtime/leader_election.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/http/client.hpp"
#include "runtime/http/lease_lock.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/http/http_fixture.hpp"
#include "tests/support/fault_injecting_lease_lock.hpp"
#include "tests/support/manual_election_clock.hpp"

using kinformer::LeaderElectionConfig;
using kinformer::LeaderElector;
using kinformer::testing::eventually;
using kinformer::testing::FaultInjectingLeaseLock;
using kinformer::testing::ManualElectionClock;
using kinformer::testing::TestServer;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds step = 100ms;

struct Candidate {
  std::string id;
  std::shared_ptr<FaultInjectingLeaseLock> lock;
  std::shared_ptr<LeaderElector> elector;
  std::vector<std::string> leaders_seen;  // guarded by Election::mu
};

// Three (or more) candidates on one Lease; records who leads when, in virtual time.
class Election {
 public:
  Election() {
    kinformer::http::ClientConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(server.port());
    auto created = kinformer::http::Client::create(config);
    REQUIRE(created);
    client = std::move(created).value();
  }
  ~Election() {
    for (auto& c : candidates)
      if (c->elector) c->elector->stop();
  }

  Candidate& add(const std::string& id) {
    auto c = std::make_unique<Candidate>();
    c->id = id;
    c->lock = std::make_shared<FaultInjectingLeaseLock>(
        kinformer::http::lease_lock(client, "default", "controller"));
    LeaderElectionConfig config;
    config.identity = id;
    config.lock = c->lock;
    config.clock = clock;
    Candidate* raw = c.get();
    config.on_started_leading = [this, raw] { started(raw->id); };
    config.on_stopped_leading = [this, raw] { stopped(raw->id); };
    config.on_new_leader = [this, raw](const std::string& leader) {
      std::lock_guard lock(mu);
      raw->leaders_seen.push_back(leader);
    };
    auto elector = LeaderElector::start(std::move(config));
    REQUIRE(elector);
    c->elector = std::move(elector).value();
    candidates.push_back(std::move(c));
    settle();
    return *candidates.back();
  }

  void settle() {
    for (auto& c : candidates)
      if (c->elector)
        eventually([&] { return !c->elector->busy(); }, "a lease request of " + c->id + " never finished");
  }

  /// Advances virtual time by `total` in 100 ms steps, settling after each.
  void run_for(milliseconds total) {
    for (milliseconds done{0}; done < total; done += step) {
      clock->advance(step);
      settle();
    }
  }

  /// Runs until `pred` holds or `limit` of virtual time passed; returns whether it held.
  template <class Pred>
  bool run_until(Pred pred, milliseconds limit) {
    for (milliseconds done{0}; done < limit; done += step) {
      if (pred()) return true;
      clock->advance(step);
      settle();
    }
    return pred();
  }

  std::vector<std::string> leaders() const {
    std::vector<std::string> out;
    for (const auto& c : candidates)
      if (c->elector && c->elector->is_leader()) out.push_back(c->id);
    return out;
  }

  nlohmann::json lease() {
    auto reply = server.request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/controller");
    REQUIRE(reply.status == 200);
    return TestServer::json_of(reply);
  }

  void started(const std::string& id) {
    std::lock_guard lock(mu);
    if (!leading_now.empty()) ++overlaps;  // another still leads: two leaders at once
    leading_now.push_back(id);
    starts.push_back({id, clock->elapsed()});
  }
  void stopped(const std::string& id) {
    std::lock_guard lock(mu);
    leading_now.erase(std::remove(leading_now.begin(), leading_now.end(), id), leading_now.end());
    stops.push_back({id, clock->elapsed()});
  }

  struct Event {
    std::string id;
    milliseconds at;
  };

  TestServer server;
  std::shared_ptr<kinformer::http::Client> client;
  std::shared_ptr<ManualElectionClock> clock = std::make_shared<ManualElectionClock>();
  std::vector<std::unique_ptr<Candidate>> candidates;
  std::mutex mu;
  std::vector<std::string> leading_now;  // guarded by mu
  std::vector<Event> starts, stops;      // guarded by mu
  int overlaps = 0;                      // guarded by mu
};

Candidate& the_leader(Election& e) {
  auto leaders = e.leaders();
  REQUIRE(leaders.size() == 1);
  for (auto& c : e.candidates)
    if (c->id == leaders.front()) return *c;
  FAIL("the leader is not a candidate");
  throw;
}

}  // namespace

TEST_CASE("three candidates on one lease: exactly one leads and the others follow it",
          "[leader_election][integration]") {
  Election e;
  for (const char* id : {"a", "b", "c"}) e.add(id);
  e.run_for(60s);
  auto& leader = the_leader(e);
  auto lease = e.lease();
  CHECK(lease["spec"]["holderIdentity"] == leader.id);
  CHECK(lease["spec"]["leaseDurationSeconds"] == 15);
  CHECK(lease["spec"]["leaseTransitions"] == 0);
  std::lock_guard lock(e.mu);
  CHECK(e.starts.size() == 1);
  CHECK(e.overlaps == 0);
  for (auto& c : e.candidates) {
    INFO("candidate " << c->id);
    REQUIRE_FALSE(c->leaders_seen.empty());
    CHECK(c->leaders_seen.back() == leader.id);
  }
}

TEST_CASE("killing the leader hands the lease to another candidate within the lease duration plus retries",
          "[leader_election][integration]") {
  Election e;
  for (const char* id : {"a", "b", "c"}) e.add(id);
  e.run_for(20s);
  auto& old = the_leader(e);
  const auto transitions = e.lease()["spec"]["leaseTransitions"].get<int>();
  // A crash: cut the leader off and stop it; its release never reaches the server.
  old.lock->partition(true);
  const auto killed = e.clock->elapsed();
  old.elector->stop();
  old.elector.reset();
  REQUIRE(e.run_until([&] { return e.leaders().size() == 1; }, 40s));
  milliseconds handover;
  {
    std::lock_guard lock(e.mu);
    handover = e.starts.back().at - killed;
    CHECK(e.overlaps == 0);
  }
  WARN("leader killed at " << killed.count() << " ms virtual; next leader after " << handover.count()
                           << " ms");
  // The followers count the lease from when they last saw it renewed (at most one
  // jittered retry, 4.4 s, after the kill), then need one more try.
  CHECK(handover >= 15s - 2s);
  CHECK(handover <= 15s + 2 * milliseconds(4400));
  CHECK(e.lease()["spec"]["leaseTransitions"] == transitions + 1);
}

TEST_CASE(
    "a partitioned leader stops leading before anyone else starts, and follows after the partition heals",
    "[leader_election][integration]") {
  Election e;
  for (const char* id : {"a", "b", "c"}) e.add(id);
  e.run_for(20s);
  auto& old = the_leader(e);
  const auto cut = e.clock->elapsed();
  old.lock->partition(true);
  REQUIRE(e.run_until([&] { return !old.elector->is_leader(); }, 20s));
  const auto lost = e.clock->elapsed() - cut;
  REQUIRE(e.run_until([&] { return e.leaders().size() == 1; }, 40s));
  milliseconds taken;
  {
    std::lock_guard lock(e.mu);
    taken = e.starts.back().at - cut;
    CHECK(e.overlaps == 0);
    CHECK(e.starts.back().id != old.id);
  }
  WARN("partitioned leader stopped leading " << lost.count() << " ms after the cut; the next leader started "
                                             << taken.count() << " ms after it");
  CHECK(lost <= 10s);  // renew deadline from its last successful renewal, which began before the cut
  CHECK(taken > lost);
  old.lock->partition(false);
  e.run_for(30s);
  CHECK(e.leaders().size() == 1);
  CHECK_FALSE(old.elector->is_leader());
  std::lock_guard lock(e.mu);
  CHECK(e.overlaps == 0);
}

TEST_CASE("a partitioned follower never takes over while the leader renews",
          "[leader_election][integration]") {
  Election e;
  for (const char* id : {"a", "b", "c"}) e.add(id);
  e.run_for(10s);
  auto& leader = the_leader(e);
  for (auto& c : e.candidates)
    if (c->id != leader.id) c->lock->partition(true);
  e.run_for(40s);
  for (auto& c : e.candidates) c->lock->partition(false);
  e.run_for(20s);
  CHECK(e.leaders() == std::vector<std::string>{leader.id});
  std::lock_guard lock(e.mu);
  CHECK(e.starts.size() == 1);
  CHECK(e.overlaps == 0);
}

TEST_CASE("a clean stop releases the lease so that another candidate takes over at its next try",
          "[leader_election][integration]") {
  Election e;
  for (const char* id : {"a", "b", "c"}) e.add(id);
  e.run_for(10s);
  auto& old = the_leader(e);
  const auto stopped_at = e.clock->elapsed();
  old.elector->stop();
  CHECK(e.lease()["spec"].value("holderIdentity", "") == "");
  {
    std::lock_guard lock(e.mu);
    REQUIRE(e.stops.size() == 1);
    CHECK(e.stops.back().id == old.id);
  }
  REQUIRE(e.run_until([&] { return e.leaders().size() == 1; }, 10s));
  std::lock_guard lock(e.mu);
  const auto handover = e.starts.back().at - stopped_at;
  WARN("after a clean stop the next leader started " << handover.count() << " ms later");
  CHECK(handover <= milliseconds(4400));  // one jittered retry period, not a lease duration
  CHECK(e.overlaps == 0);
}

TEST_CASE("a config whose deadlines are out of order is refused", "[leader_election][unit]") {
  LeaderElectionConfig config;
  config.identity = "a";
  config.lock = std::make_shared<FaultInjectingLeaseLock>(nullptr);
  config.renew_deadline = 20s;
  auto refused = LeaderElector::start(config);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == kinformer::Errc::invalid_input);
}
