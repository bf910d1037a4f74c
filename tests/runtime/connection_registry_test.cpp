// Tests for runtime/connection_registry.hpp (issue 33): which connection makes room at
// the total and the per-client cap.
#include "runtime/connection_registry.hpp"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

namespace kinformer {
namespace {

struct FakeConnection final : Connection {
  bool closed = false;
  void close() override { closed = true; }
};

struct RegistryFixture {
  ConnectionRegistry registry;
  std::vector<std::shared_ptr<FakeConnection>> all;

  explicit RegistryFixture(ConnectionLimits limits) : registry(limits) {}
  ~RegistryFixture() {
    for (auto& c : all) registry.remove(c.get());
  }
  // Admits and adds a connection from `client` in `phase`; null when refused.
  std::shared_ptr<FakeConnection> open(const std::string& client, ConnectionRegistry::Phase phase) {
    if (!registry.admit(client)) return nullptr;
    auto c = std::make_shared<FakeConnection>();
    registry.add(c.get(), c, client);
    registry.set_phase(c.get(), phase);
    all.push_back(c);
    return c;
  }
};

using Phase = ConnectionRegistry::Phase;

TEST_CASE("at the total cap the connection waiting longest makes room, idle or partial",
          "[connection_registry][issue-33][unit]") {
  RegistryFixture f({3, 3});
  auto partial = f.open("a", Phase::partial);
  auto idle = f.open("b", Phase::idle);
  auto busy = f.open("c", Phase::busy);
  auto fresh = f.open("d", Phase::idle);
  REQUIRE(fresh);
  CHECK(partial->closed);  // waiting since before the idle one
  CHECK_FALSE(idle->closed);
  CHECK_FALSE(busy->closed);
  CHECK(f.registry.size() == 3);  // the evicted one stopped counting at once
}

TEST_CASE("going from idle to partial keeps a connection's place in line",
          "[connection_registry][issue-33][unit]") {
  RegistryFixture f({2, 2});
  auto trickler = f.open("a", Phase::idle);
  auto other = f.open("b", Phase::idle);
  f.registry.set_phase(trickler.get(), Phase::partial);  // its first bytes arrive
  REQUIRE(f.open("c", Phase::idle));
  CHECK(trickler->closed);
  CHECK_FALSE(other->closed);
}

TEST_CASE("with every connection busy a newcomer is refused and nothing is closed",
          "[connection_registry][issue-33][unit]") {
  RegistryFixture f({2, 2});
  auto one = f.open("a", Phase::busy);
  auto two = f.open("b", Phase::busy);
  CHECK_FALSE(f.open("c", Phase::idle));
  CHECK_FALSE(one->closed);
  CHECK_FALSE(two->closed);
  CHECK_FALSE(f.registry.evict_one());
}

TEST_CASE("a client at its own cap makes room among its own connections only",
          "[connection_registry][issue-33][unit]") {
  RegistryFixture f({10, 2});
  auto other = f.open("b", Phase::idle);  // the longest waiting of all
  auto first = f.open("a", Phase::partial);
  auto second = f.open("a", Phase::partial);
  REQUIRE(f.open("a", Phase::partial));
  CHECK(first->closed);
  CHECK_FALSE(second->closed);
  CHECK_FALSE(other->closed);
  f.registry.set_phase(second.get(), Phase::busy);
  auto third = f.all.back();
  f.registry.set_phase(third.get(), Phase::busy);
  CHECK_FALSE(f.open("a", Phase::idle));  // its two are busy: refused, though the total has room
  CHECK(f.open("c", Phase::idle));
}

TEST_CASE("a removed connection frees its place under both caps", "[connection_registry][issue-33][unit]") {
  RegistryFixture f({1, 1});
  auto one = f.open("a", Phase::busy);
  CHECK_FALSE(f.open("a", Phase::idle));
  f.registry.remove(one.get());
  CHECK(f.registry.size() == 0);
  CHECK(f.open("a", Phase::idle));
}

}  // namespace
}  // namespace kinformer
