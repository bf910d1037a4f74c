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
  std::smatch m;
  const std::string out = loadgen.out();
  REQUIRE(std::regex_search(out, m,
                            std::regex("loadgen: ([0-9]+) operations .*: ([0-9]+) creates, ([0-9]+) updates, "
                                       "([0-9]+) deletes, 0 errors; .* ([0-9]+) objects live")));
  const int ops = std::stoi(m[1]), creates = std::stoi(m[2]), updates = std::stoi(m[3]),
            deletes = std::stoi(m[4]);
  const int live = std::stoi(m[5]);
  CHECK(ops >= 300);  // 2 s at 200/s on a loaded box: most of the 400
  CHECK(ops <= 400);
  CHECK(creates + updates + deletes == ops);
  CHECK(updates > 0);
  CHECK(deletes > 0);
  CHECK(live == creates - deletes);
  CHECK(live <= 20);
  auto list = t.request("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dloadgen");
  REQUIRE(list.status == 200);
  CHECK(TestServer::json_of(list)["items"].size() == static_cast<std::size_t>(live));
  std::remove(temp_file("out").c_str());
  std::remove(temp_file("err").c_str());
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
