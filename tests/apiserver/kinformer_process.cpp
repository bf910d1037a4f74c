#include "tests/apiserver/kinformer_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>

namespace kinformer::testing {

const std::string& kinformer_binary() {
  static const std::string path = std::string(KINFORMER_BIN_DIR) + "/kinformer";
  return path;
}

bool kinformer_binary_built() { return ::access(kinformer_binary().c_str(), X_OK) == 0; }

KinformerProcess::KinformerProcess(std::vector<std::string> args) {
  int out_pipe[2], err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);  // dup2() below clears it on the child's 1 and 2
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  pid_ = ::fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kinformer_binary().c_str()));
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(kinformer_binary().c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  out_ = out_pipe[0];
  err_ = err_pipe[0];
  err_reader_ = std::thread([this] {
    char buffer[4096];
    for (ssize_t n; (n = ::read(err_, buffer, sizeof buffer)) > 0;) {
      std::lock_guard lock(err_mu_);
      err_text_.append(buffer, static_cast<std::size_t>(n));
    }
  });
}

KinformerProcess::~KinformerProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (err_reader_.joinable()) err_reader_.join();
  ::close(out_);
  ::close(err_);
}

std::string KinformerProcess::first_line(std::chrono::milliseconds timeout) {
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (text.find('\n') == std::string::npos) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
    char c;  // byte by byte: nothing after the banner is consumed
    if (::read(out_, &c, 1) != 1) return {};
    text.push_back(c);
  }
  return text.substr(0, text.find('\n'));
}

int KinformerProcess::wait_exit(std::chrono::milliseconds timeout) {
  if (reaped_) return -1;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      if (err_reader_.joinable()) err_reader_.join();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  if (err_reader_.joinable()) err_reader_.join();
  return -1;
}

std::string KinformerProcess::stderr_text() {
  std::lock_guard lock(err_mu_);
  return err_text_;
}

std::uint16_t port_of(const std::string& banner) {
  auto at = banner.find("127.0.0.1:");
  if (at == std::string::npos) return 0;
  return static_cast<std::uint16_t>(std::atoi(banner.c_str() + at + 10));
}

namespace {
std::vector<std::string> with_port_zero(std::vector<std::string> flags) {
  std::vector<std::string> out{"apiserver", "--port", "0"};
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

std::vector<std::string> replica_flags(const std::string& etcd, std::vector<std::string> extra) {
  std::vector<std::string> out{"--etcd-endpoints", etcd};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}
}  // namespace

ServingApiserver::ServingApiserver(std::vector<std::string> flags) : process(with_port_zero(std::move(flags))) {
  port = port_of(process.first_line(std::chrono::seconds(30)));
  INFO("the API server did not start: " << process.stderr_text());
  REQUIRE(port != 0);
}

EtcdReplica::EtcdReplica(const std::string& etcd, std::vector<std::string> extra)
    : ServingApiserver(replica_flags(etcd, std::move(extra))) {}

}  // namespace kinformer::testing
