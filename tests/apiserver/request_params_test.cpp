// Unit tests of request target parsing and continue tokens (apiserver/request_params.hpp).
#include "apiserver/request_params.hpp"

#include <catch2/catch.hpp>

using namespace kinformer::apiserver;

TEST_CASE("query booleans are true unless absent, false or 0, as kube-apiserver reads them",
          "[apiserver][params][unit]") {
  auto q = parse_query("watch=True&a=false&b=0&c=&d=FALSE&e=1");
  CHECK(flag(q, "watch"));
  CHECK_FALSE(flag(q, "a"));
  CHECK_FALSE(flag(q, "b"));
  CHECK(flag(q, "c"));
  CHECK_FALSE(flag(q, "d"));
  CHECK(flag(q, "e"));
  CHECK_FALSE(flag(q, "absent"));
}

TEST_CASE("query values and path segments are percent-decoded", "[apiserver][params][unit]") {
  auto q = parse_query("labelSelector=app%3Ddemo%2Ctier+in+(a%2Cb)&limit=5");
  CHECK(param(q, "labelSelector") == "app=demo,tier in (a,b)");
  CHECK(param(q, "limit") == "5");
  CHECK(param(q, "missing").empty());
  CHECK(split_path("/api//v1/namespaces/my%2Dns/pods/") ==
        std::vector<std::string>{"api", "v1", "namespaces", "my-ns", "pods"});
}

TEST_CASE("resourceVersion parameters are absent or unsigned integers", "[apiserver][params][unit]") {
  auto absent = resource_version_param("");
  REQUIRE(absent);
  CHECK_FALSE(absent.value().has_value());
  auto seven = resource_version_param("7");
  REQUIRE(seven);
  CHECK(seven.value() == std::optional<std::uint64_t>(7));
  // 9223372036854775808: one past etcd's int64 revisions (apiserver/resource_version.hpp)
  for (const char* bad : {"-1", "abc", "1.5", "99999999999999999999", "9223372036854775808"}) {
    auto r = resource_version_param(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == 400);
  }
}

TEST_CASE("continue tokens round-trip their revision and key and reject foreign text", "[apiserver][params][unit]") {
  auto token = encode_continue(42, "default/cm-3");
  CHECK(token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos);
  auto decoded = decode_continue(token);
  REQUIRE(decoded);
  CHECK(decoded->first == 42);
  CHECK(decoded->second == "default/cm-3");
  CHECK_FALSE(decode_continue("not a token!"));
  CHECK_FALSE(decode_continue(encode_continue(1, "x").substr(0, 1)));
}
