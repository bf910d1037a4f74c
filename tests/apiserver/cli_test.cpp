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

#include "tests/apiserver/loopback_http.hpp"

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

Child spawn(std::vector<std::string> args) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  Child child;
  child.pid = ::fork();
  REQUIRE(child.pid >= 0);
  if (child.pid == 0) {
    ::dup2(pipe_fds[1], 1);
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
                             "--watch-history", "--resource"})
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
