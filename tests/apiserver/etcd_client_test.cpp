// EtcdClient (apiserver/storage/etcd/etcd_client.hpp) against a real etcd the test starts, next
// to an endpoint where nothing listens.
#include "apiserver/storage/etcd/etcd_client.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/etcd_process.hpp"
#include "tests/support/eventually.hpp"

namespace kinformer::apiserver {
namespace {

using nlohmann::json;
using testing::eventually;

TEST_CASE("Watches that fail together on one etcd endpoint move the next watch to the next endpoint",
          "[apiserver][etcd][item-16][integration]") {
  testing::EtcdProcess etcd;
  if (!etcd.ready()) FAIL("etcd did not start: " << etcd.log());
  const std::string dead = "http://127.0.0.1:" + std::to_string(testing::free_loopback_port());
  auto created = EtcdClient::create({{dead, etcd.endpoint()}, std::chrono::milliseconds(2000),
                                     std::chrono::milliseconds(1000)});
  REQUIRE(created);
  auto& client = *created.value();
  const json request = {{"key", EtcdClient::encode("/k")}};

  // Four watches at once on the dead endpoint, as a server's per-type watches
  // reconnect together: four moves on would turn full circle, back to it.
  std::atomic<int> settled{0};
  std::vector<std::unique_ptr<EtcdClient::Watch>> watches;
  for (int i = 0; i < 4; ++i)
    watches.push_back(client.watch(
        request, [&](const json& message) { settled += message.value("created", false) ? 1 : 0; },
        [&](Result<void> result) { settled += result ? 0 : 1; }));
  eventually([&] { return settled.load() >= 4; }, "each of the four watches to fail or open");
  CHECK(client.current_endpoint() == etcd.endpoint());

  std::atomic<bool> open{false};
  auto next = client.watch(
      request, [&](const json& message) { open = open || message.value("created", false); }, [](Result<void>) {});
  eventually([&] { return open.load(); }, "the next watch to open on the live endpoint");
  for (auto& w : watches) w->cancel();
  next->cancel();
}

}  // namespace
}  // namespace kinformer::apiserver
