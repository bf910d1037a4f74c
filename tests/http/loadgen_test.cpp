// `kinformer loadgen` against the embedded API server (issue 8, item 7): the real
// binary, a short run, its progress line, its report, and the server's state.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/apiserver/test_server.hpp"
#include "tests/support/child_process.hpp"

using kinformer::testing::ChildProcess;
using kinformer::testing::TestServer;

namespace {

const std::string kinformer_bin = std::string(KINFORMER_BIN_DIR) + "/kinformer";

std::string temp_file(const char* name) {
  return "/tmp/kinformer-loadgen-" + std::to_string(::getpid()) + "-" + name;
}

// The counts of loadgen's final report line, which must say "0 errors".
struct Report {
  int ops = 0, creates = 0, updates = 0, deletes = 0, live = 0;
};

Report report_of(const std::string& out) {
  std::smatch m;
  REQUIRE(std::regex_search(out, m,
                            std::regex("loadgen: ([0-9]+) operations .*: ([0-9]+) creates, ([0-9]+) updates, "
                                       "([0-9]+) deletes, 0 errors; .* ([0-9]+) objects live")));
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5])};
}

std::size_t loadgen_objects_on(TestServer& t) {
  auto list = t.request("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dloadgen");
  REQUIRE(list.status == 200);
  return TestServer::json_of(list)["items"].size();
}

}  // namespace

TEST_CASE("loadgen creates updates and deletes at its rate and reports what it did",
          "[http][loadgen][item-7][integration]") {
  TestServer t;
  ChildProcess loadgen(
      kinformer_bin,
      {"loadgen", "--server", t.server().url(), "--objects", "20", "--rate", "200", "--duration", "2",
       "--update-ratio", "0.5", "--delete-ratio", "0.2", "--object-size", "100"},
      temp_file("out"), temp_file("err"));
  REQUIRE(loadgen.started());
  const int code = loadgen.wait_exit(std::chrono::seconds(30));
  INFO("stdout: " << loadgen.out() << "\nstderr: " << loadgen.err());
  REQUIRE(code == 0);
  CHECK(std::regex_search(loadgen.err(),
                          std::regex("info loadgen progress elapsed_s=1\\.[0-9] ops=[0-9]+ creates=")));  // progress
  const Report r = report_of(loadgen.out());
  CHECK(r.ops >= 300);  // 2 s at 200/s on a loaded box: most of the 400
  CHECK(r.ops <= 400);
  CHECK(r.creates + r.updates + r.deletes == r.ops);
  CHECK(r.updates > 0);
  CHECK(r.deletes > 0);
  CHECK(r.live == r.creates - r.deletes);
  CHECK(r.live <= 20);
  CHECK(loadgen_objects_on(t) == static_cast<std::size_t>(r.live));
  std::remove(temp_file("out").c_str());
  std::remove(temp_file("err").c_str());
}

// issue 31: the second run got 409 Conflict creating loadgen-0, loadgen-1, ... again.
TEST_CASE("a second loadgen run takes over the first run's objects instead of colliding with them",
          "[http][loadgen][integration]") {
  TestServer t;
  const std::vector<std::string> args = {"loadgen", "--server", t.server().url(), "--objects", "10", "--rate",
                                         "100", "--duration", "1", "--update-ratio", "0.3", "--delete-ratio", "0.1"};
  ChildProcess first(kinformer_bin, args, temp_file("out4"), temp_file("err4"));
  REQUIRE(first.started());
  const int first_code = first.wait_exit(std::chrono::seconds(30));
  INFO("first run's stdout: " << first.out() << "\nstderr: " << first.err());
  REQUIRE(first_code == 0);
  const Report earlier = report_of(first.out());
  REQUIRE(earlier.live > 0);

  ChildProcess second(kinformer_bin, args, temp_file("out5"), temp_file("err5"));
  REQUIRE(second.started());
  const int second_code = second.wait_exit(std::chrono::seconds(30));
  INFO("second run's stdout: " << second.out() << "\nstderr: " << second.err());
  CHECK(second_code == 0);
  CHECK(second.err().find("taking over an earlier run's objects objects=" + std::to_string(earlier.live)) !=
        std::string::npos);
  const Report r = report_of(second.out());  // "0 errors": no 409 on a name the first run made
  CHECK(r.live == earlier.live + r.creates - r.deletes);
  CHECK(loadgen_objects_on(t) == static_cast<std::size_t>(r.live));
  for (const char* name : {"out4", "err4", "out5", "err5"}) std::remove(temp_file(name).c_str());
}

TEST_CASE("loadgen rejects bad options with a usage error", "[http][loadgen][item-7][integration]") {
  ChildProcess loadgen(
      kinformer_bin,
      {"loadgen", "--update-ratio", "0.9", "--delete-ratio", "0.5", "--server", "http://127.0.0.1:1"},
      temp_file("out2"), temp_file("err2"));
  CHECK(loadgen.wait_exit(std::chrono::seconds(10)) == 2);
  CHECK(loadgen.err().find("must be at most 1") != std::string::npos);
  ChildProcess refused(kinformer_bin, {"loadgen", "--server", "http://127.0.0.1:1", "--duration", "1"},
                       temp_file("out3"), temp_file("err3"));
  CHECK(refused.wait_exit(std::chrono::seconds(20)) == 1);
  CHECK(refused.err().find("refused") != std::string::npos);
  for (const char* name : {"out2", "err2", "out3", "err3"}) std::remove(temp_file(name).c_str());
}
