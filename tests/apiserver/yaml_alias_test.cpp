// Regression tests for issue 19 (fuzzing): YAML bodies whose aliases refer to anchors
// that hold aliases (the "billion laughs" document) expanded exponentially when turned
// into JSON; decode_body now expands aliases within the object size limit
// (apiserver/object_limits.hpp) and answers 413 past it. Other bodies the fuzzers found
// follow.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "apiserver/body_decoder.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/protobuf_decoder.hpp"

using kinformer::apiserver::BodyFormat;
using kinformer::apiserver::decode_body;

TEST_CASE("issue 19: a YAML body of nested aliases is 413 instead of exhausting memory",
          "[apiserver][item-1][unit]") {
  // 10 levels of 10 aliases each: 10^10 nodes from about 400 bytes.
  std::string body = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    body += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) body += (j ? ", " : "") + prev;
    body += "]\n";
  }
  auto decoded = decode_body(body, BodyFormat::yaml);
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().code == 413);
  CHECK_THAT(decoded.error().message, Catch::Contains("a YAML alias"));
}

TEST_CASE("issue 19: YAML aliases that expand modestly still decode", "[apiserver][item-1][unit]") {
  auto decoded = decode_body("base: &b {app: web, tier: db}\ncopy: *b\nlist: [*b, *b]\n", BodyFormat::yaml);
  REQUIRE(decoded);
  CHECK(decoded.value()["copy"] == nlohmann::json({{"app", "web"}, {"tier", "db"}}));
  CHECK(decoded.value()["list"].size() == 2);
  // Block style, many small nodes: the budget is never hit by an alias-free document.
  std::string block;
  for (int i = 0; i < 500; ++i) block += "k" + std::to_string(i) + ":\n- a\n- \n";
  REQUIRE(decode_body(block, BodyFormat::yaml));
}

// Issue 19 (fuzzing): YAML scalars and protobuf strings may hold bytes that are not
// UTF-8; the decoded document then threw from dump() when the server stored or echoed it.
TEST_CASE("issue 19: YAML and protobuf bodies with strings that are not UTF-8 are 400",
          "[apiserver][item-1][unit]") {
  auto yaml = decode_body("metadata:\n  name: \"a\\xF4\"\ndata:\n  k: \xF4\x93\n", BodyFormat::yaml);
  REQUIRE_FALSE(yaml);
  CHECK(yaml.error().code == 400);
  CHECK_THAT(yaml.error().message, Catch::Contains("UTF-8"));
  // k8s\0 + Unknown{typeMeta{v1, ConfigMap}, raw = ConfigMap{metadata{name "cm1"}, data{"k": "\xF4"}}}
  const std::string body("\x6b\x38\x73\x00\x0a\x0f\x0a\x02\x76\x31\x12\x09\x43\x6f\x6e\x66\x69\x67\x4d\x61\x70\x12\x0f\x0a\x05\x0a\x03\x63\x6d\x31\x12\x06\x0a\x01\x6b\x12\x01\xf4", 38);
  // As api.cpp does: protobuf bodies are decoded, then checked against the object limits.
  auto proto = kinformer::apiserver::decode_protobuf(body);
  REQUIRE(proto);
  auto bad = kinformer::apiserver::check_object_limits(proto.value(), {});
  REQUIRE(bad);
  CHECK(bad->code == 400);
  CHECK_THAT(bad->message, Catch::Contains("UTF-8"));
  // Valid multi-byte text still decodes.
  auto ok = decode_body("name: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\n", BodyFormat::yaml);
  REQUIRE(ok);
  CHECK(ok.value()["name"].get<std::string>().size() == 14);
  // A Status quoting bytes that are not UTF-8 still renders.
  CHECK_NOTHROW(kinformer::apiserver::ApiError::bad_request("bad \xF4").to_status_json());
}

// Issue 19 (fuzz_body_decoder): yaml-cpp 0.7's LoadAll looped forever on a body of a lone
// ",", allocating a null document per turn, so one request of one byte took the server's
// memory. The decode runs in a child process that an alarm stops, so that the old
// behaviour fails this test instead of exhausting the machine.
TEST_CASE("issue 19: a YAML body the parser cannot advance in is 400, not an endless loop",
          "[apiserver][item-1][unit]") {
  for (const char* body : {",", ",,,{", ", a", ",\n"}) {
    INFO("body: " << body);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::alarm(10);
      auto decoded = decode_body(body, BodyFormat::yaml);
      const bool refused = !decoded && decoded.error().code == 400 &&
                           decoded.error().message.find("not valid YAML") != std::string::npos;
      std::_Exit(refused ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    INFO("the decoding child was stopped by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                                   << " (SIGALRM: still looping after 10 s)");
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  // Several documents, and none, are still told apart from a stuck parser.
  auto two = decode_body("a: 1\n---\nb: 2\n", BodyFormat::yaml);
  REQUIRE_FALSE(two);
  CHECK_THAT(two.error().message, Catch::Contains("exactly one YAML document (found more than one)"));
  auto none = decode_body("", BodyFormat::yaml);
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error().message, Catch::Contains("found none"));
  REQUIRE(decode_body("a: 1\n", BodyFormat::yaml));
}
