// `kinformer apiserver`: options, SIGTERM shutdown and the --data-file snapshot,
// run as the real binary.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/loopback_http.hpp"
#include "tests/apiserver/tls_client.hpp"

using namespace std::chrono_literals;

namespace {

const std::string kinformer_bin = std::string(KINFORMER_BIN_DIR) + "/kinformer";

// The child process with its stdout on a pipe.
struct Child {
  pid_t pid = -1;
  int out = -1;

  // The first stdout line (the "serving on URL" banner), or "" at the deadline.
  std::string first_line(std::chrono::milliseconds timeout) {
    std::string text;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (text.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{out, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
      char buffer[256];
      auto n = ::read(out, buffer, sizeof buffer);
      if (n <= 0) return {};
      text.append(buffer, static_cast<std::size_t>(n));
    }
    return text.substr(0, text.find('\n'));
  }

  // Exit status after SIGTERM-free exit or a signal, -1 at the deadline (the child is then killed).
  int wait_exit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ::close(out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ::close(out);
    return -1;
  }
};

// stderr_file: "" keeps the test's stderr; else the child's stderr goes to that file.
Child spawn(std::vector<std::string> args, const std::string& stderr_file = "") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  Child child;
  child.pid = ::fork();
  REQUIRE(child.pid >= 0);
  if (child.pid == 0) {
    ::dup2(pipe_fds[1], 1);
    if (!stderr_file.empty()) {
      int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (err >= 0) ::dup2(err, 2);
    }
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kinformer_bin.c_str()));
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(kinformer_bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  child.out = pipe_fds[0];
  return child;
}

std::uint16_t port_of(const std::string& banner) {
  auto at = banner.find("127.0.0.1:");
  if (at == std::string::npos) return 0;
  return static_cast<std::uint16_t>(std::atoi(banner.c_str() + at + 10));
}

#define REQUIRE_BINARY()                                                                 \
  if (::access(kinformer_bin.c_str(), X_OK) != 0) {                                      \
    WARN("skipped: " << kinformer_bin << " is not built (build the kinformer target)");  \
    return;                                                                              \
  }

}  // namespace

TEST_CASE("kinformer apiserver --help explains every option and bad options are usage errors",
          "[apiserver][cli][integration]") {
  REQUIRE_BINARY();
  auto help = spawn({"apiserver", "--help"});
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(help.out, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  CHECK(help.wait_exit(10s) == 0);
  for (const char* option : {"--port", "--bind", "--token-file", "--tls-cert", "--tls-key", "--data-file",
                             "--watch-history", "--resource", "--client-ca", "--max-body-bytes", "--max-object-bytes",
                             "--max-depth", "--max-patch-ops", "--max-connections", "--idle-timeout",
                             "--header-timeout", "--read-timeout", "--write-timeout", "--watch-history-bytes"})
    CHECK(text.find(option) != std::string::npos);
  CHECK(spawn({"apiserver", "--port", "99999"}).wait_exit(10s) == 2);
  CHECK(spawn({"apiserver", "--resource", "not-a-spec"}).wait_exit(10s) == 2);
  CHECK(spawn({"apiserver", "--frobnicate"}).wait_exit(10s) == 2);
}

TEST_CASE("kinformer apiserver stops cleanly on SIGTERM and keeps its objects in the data file",
          "[apiserver][cli][integration]") {
  REQUIRE_BINARY();
  char pattern[] = "/tmp/kinformer-cli-XXXXXX";
  std::string dir = ::mkdtemp(pattern);
  std::string data = dir + "/state.json";
  std::ofstream(dir + "/resources.txt") << "# extra kinds\nmetrics.kinformer.io/v1/MetricSeries/metricseries\n";
  std::vector<std::string> args = {"apiserver", "--port", "0", "--data-file", data, "--resources-file", dir + "/resources.txt"};

  auto first = spawn(args);
  auto port = port_of(first.first_line(10s));
  REQUIRE(port != 0);
  auto created = kinformer::testing::http_request(
      port, "POST", "/apis/metrics.kinformer.io/v1/namespaces/default/metricseries",
      R"({"apiVersion":"metrics.kinformer.io/v1","kind":"MetricSeries","metadata":{"name":"cpu"},"spec":{"v":[1,2]}})");
  REQUIRE(created.status == 201);
  auto rv = nlohmann::json::parse(created.body)["metadata"]["resourceVersion"].get<std::string>();
  ::kill(first.pid, SIGTERM);
  REQUIRE(first.wait_exit(15s) == 0);
  REQUIRE(::access(data.c_str(), R_OK) == 0);

  auto second = spawn(args);
  port = port_of(second.first_line(10s));
  REQUIRE(port != 0);
  auto got = kinformer::testing::http_request(port, "GET", "/apis/metrics.kinformer.io/v1/namespaces/default/metricseries/cpu");
  CHECK(got.status == 200);
  CHECK(nlohmann::json::parse(got.body)["spec"]["v"][1] == 2);
  // Revisions continue after the saved one; older watches are 410 (the history starts empty).
  auto next = kinformer::testing::http_request(port, "POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"x"}})");
  CHECK(std::stoull(nlohmann::json::parse(next.body)["metadata"]["resourceVersion"].get<std::string>()) == std::stoull(rv) + 1);
  ::kill(second.pid, SIGINT);
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
  std::string log = dir + "/stderr.log";
  auto server = spawn({"apiserver", "--port", "0", "--log-requests", "--token-file", dir + "/token", "--tls-cert",
                       dir + "/server.crt", "--tls-key", dir + "/server.key", "--client-ca", dir + "/ca.crt"},
                      log);
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
  ::kill(server.pid, SIGTERM);
  CHECK(server.wait_exit(15s) == 0);
  std::stringstream text;
  text << banner << "\n" << std::ifstream(log).rdbuf();
  const std::string logged = text.str();
  CHECK(logged.find("GET /api/v1/namespaces") != std::string::npos);  // requests are logged...
  CHECK(logged.find("SECRET") == std::string::npos);                  // ...their credentials never
  std::ifstream key(dir + "/server.key");
  for (std::string line; std::getline(key, line);)
    if (line.rfind("-----", 0) != 0) CHECK(logged.find(line) == std::string::npos);
  std::system(("rm -rf '" + dir + "'").c_str());
}
