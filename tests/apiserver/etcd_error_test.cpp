// EtcdError (apiserver/storage/etcd/etcd_error.hpp): etcd's answers as typed errors.
#include "apiserver/storage/etcd/etcd_error.hpp"

#include <catch2/catch.hpp>

namespace kinformer::apiserver {
namespace {

TEST_CASE("etcd's gateway errors are classified by what etcd meant", "[apiserver][etcd][etcd_error][unit]") {
  SECTION("a compacted revision is 410 Expired") {
    auto error = gateway_error(400, R"({"error":"x","message":"etcdserver: mvcc: required revision has been compacted","code":11})");
    CHECK(error.code == EtcdErrc::compacted);
    CHECK(error.to_error().code == Errc::gone);
    CHECK(error.to_api_error().code == 410);
  }
  SECTION("a future revision is 504 with the ResourceVersionTooLarge cause") {
    auto error = gateway_error(400, R"({"message":"etcdserver: mvcc: required revision is a future revision","code":11})");
    CHECK(error.code == EtcdErrc::future_revision);
    CHECK(error.to_error().code == Errc::too_large_rv);
    auto api = error.to_api_error();
    CHECK(api.code == 504);
    REQUIRE(api.causes.size() == 1);
    CHECK(api.causes[0].type == "ResourceVersionTooLarge");
  }
  SECTION("no leader, a deadline or HTTP 503 is 503 unavailable") {
    CHECK(gateway_error(500, R"({"message":"etcdserver: no leader","code":14})").code == EtcdErrc::unavailable);
    CHECK(gateway_error(500, R"({"message":"context deadline exceeded","code":4})").code == EtcdErrc::unavailable);
    auto proxy = gateway_error(503, "Service Unavailable");
    CHECK(proxy.code == EtcdErrc::unavailable);
    CHECK(proxy.to_api_error().code == 503);
    CHECK(proxy.to_error().code == Errc::connection_failed);
  }
  SECTION("any other error is refused, 500 with etcd's message") {
    auto error = gateway_error(400, R"({"message":"etcdserver: request is too large","code":3})");
    CHECK(error.code == EtcdErrc::refused);
    CHECK(error.message.find("request is too large") != std::string::npos);
    CHECK(error.to_api_error().code == 500);
  }
}

TEST_CASE("a request without an answer is a timeout or unavailable", "[apiserver][etcd][etcd_error][unit]") {
  auto timed_out = transport_error("http://127.0.0.1:2379", Error{Errc::connection_failed, "read: timed out"});
  CHECK(timed_out.code == EtcdErrc::timed_out);
  CHECK(timed_out.to_api_error().code == 504);
  CHECK(timed_out.to_api_error().reason == "Timeout");
  auto refused = transport_error("http://127.0.0.1:2379", Error{Errc::connection_failed, "connection refused"});
  CHECK(refused.code == EtcdErrc::unavailable);
  CHECK(refused.message.find("http://127.0.0.1:2379") != std::string::npos);
  CHECK(refused.to_api_error().code == 503);
}

}  // namespace
}  // namespace kinformer::apiserver
