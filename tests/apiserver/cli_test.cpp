// `kinformer apiserver`: options, SIGTERM shutdown and the --data-file snapshot,
// run as the real binary.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/kinformer_process.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/apiserver/tls_client.hpp"

using namespace std::chrono_literals;

namespace {

using kinformer::testing::KinformerProcess;
using kinformer::testing::port_of;

}  // namespace

TEST_CASE("kinformer apiserver --help explains every option and bad options are usage errors",
          "[apiserver][cli][integration]") {
  REQUIRE_BINARY();
  KinformerProcess help({"apiserver", "--help"});
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(help.stdout_fd(), buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  CHECK(help.wait_exit(10s) == 0);
  for (const char* option : {"--port", "--bind", "--token-file", "--tls-cert", "--tls-key", "--data-file",
                             "--watch-history", "--resource", "--repair", "--wal-max-bytes", "--client-ca",
                             "--max-body-bytes", "--max-object-bytes", "--max-depth", "--max-patch-ops",
                             "--request-cpu-ms", "--request-cpu-ns-per-byte",
                             "--max-connections", "--idle-timeout", "--header-timeout", "--read-timeout",
                             "--write-timeout", "--watch-history-bytes", "--max-connections-per-client",
                             "--max-full-state-watches", "--max-full-state-watches-per-client"})
    CHECK(text.find(option) != std::string::npos);
  CHECK(KinformerProcess({"apiserver", "--port", "99999"}).wait_exit(10s) == 2);
  CHECK(KinformerProcess({"apiserver", "--resource", "not-a-spec"}).wait_exit(10s) == 2);
  CHECK(KinformerProcess({"apiserver", "--frobnicate"}).wait_exit(10s) == 2);
}

TEST_CASE("kinformer apiserver stops cleanly on SIGTERM and keeps its objects in the data file",
          "[apiserver][cli][integration]") {
  REQUIRE_BINARY();
  char pattern[] = "/tmp/kinformer-cli-XXXXXX";
  std::string dir = ::mkdtemp(pattern);
  std::string data = dir + "/state.json";
  std::ofstream(dir + "/resources.txt") << "# extra kinds\nmetrics.kinformer.io/v1/MetricSeries/metricseries\n";
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", data, "--resources-file", dir + "/resources.txt"};

  KinformerProcess first(args);
  auto port = port_of(first.first_line(10s));
  REQUIRE(port != 0);
  auto created = kinformer::testing::http_request(
      port, "POST", "/apis/metrics.kinformer.io/v1/namespaces/default/metricseries",
      R"({"apiVersion":"metrics.kinformer.io/v1","kind":"MetricSeries","metadata":{"name":"cpu"},"spec":{"v":[1,2]}})");
  REQUIRE(created.status == 201);
  auto rv = nlohmann::json::parse(created.body)["metadata"]["resourceVersion"].get<std::string>();
  ::kill(first.pid(), SIGTERM);
  REQUIRE(first.wait_exit(15s) == 0);
  REQUIRE(::access(data.c_str(), R_OK) == 0);

  KinformerProcess second(args);
  port = port_of(second.first_line(10s));
  REQUIRE(port != 0);
  auto got = kinformer::testing::http_request(port, "GET", "/apis/metrics.kinformer.io/v1/namespaces/default/metricseries/cpu");
  CHECK(got.status == 200);
  CHECK(nlohmann::json::parse(got.body)["spec"]["v"][1] == 2);
  // Revisions continue after the saved one; older watches are 410 (the history starts empty).
  auto next = kinformer::testing::http_request(port, "POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"x"}})");
  CHECK(std::stoull(nlohmann::json::parse(next.body)["metadata"]["resourceVersion"].get<std::string>()) == std::stoull(rv) + 1);
  ::kill(second.pid(), SIGINT);
  CHECK(second.wait_exit(15s) == 0);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("kinformer apiserver never logs tokens or keys whatever the requests carry",
          "[apiserver][cli][item-11][integration]") {
  REQUIRE_BINARY();
  char pattern[] = "/tmp/kinformer-secrets-XXXXXX";
  std::string dir = ::mkdtemp(pattern);
  REQUIRE(kinformer::testing::make_test_pki(dir));
  const std::string token = "tok-SECRET-7f3a9c";
  std::ofstream(dir + "/token") << token << "\n";
  KinformerProcess server({"apiserver", "--port", "0", "--log-requests", "--token-file", dir + "/token", "--tls-cert",
                           dir + "/server.crt", "--tls-key", dir + "/server.key", "--client-ca", dir + "/ca.crt"});
  std::string banner = server.first_line(10s);
  auto port = port_of(banner);
  REQUIRE(port != 0);
  using kinformer::testing::https_get;
  CHECK(https_get(port, "/api/v1/namespaces", {}, "Bearer " + token) == 200);
  CHECK(https_get(port, "/api/v1/namespaces", {}, "bearer " + token) == 200);
  CHECK(https_get(port, "/api/v1/namespaces", {}, "Bearer wrong-" + token) == 401);
  CHECK(https_get(port, "/api/v1/namespaces", {}, "Basic " + token) == 401);
  CHECK(https_get(port, "/api/v1/namespaces", {dir + "/client.crt", dir + "/client.key"}) == 200);
  CHECK(https_get(port, "/api/v1/namespaces", {dir + "/rogue-client.crt", dir + "/rogue-client.key"}) == 0);
  ::kill(server.pid(), SIGTERM);
  CHECK(server.wait_exit(15s) == 0);
  const std::string logged = banner + "\n" + server.stderr_text();
  CHECK(logged.find("method=GET target=/api/v1/namespaces") != std::string::npos);  // requests are logged...
  CHECK(logged.find("SECRET") == std::string::npos);                  // ...their credentials never
  std::ifstream key(dir + "/server.key");
  for (std::string line; std::getline(key, line);)
    if (line.rfind("-----", 0) != 0) CHECK(logged.find(line) == std::string::npos);
  std::system(("rm -rf '" + dir + "'").c_str());
}
