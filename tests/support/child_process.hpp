// tests/support/child_process.hpp
//
// ChildProcess: a program the test runs (the `kinformer` tool, an example) with
// stdout and stderr going to files the test polls, stopped with SIGTERM (then
// SIGKILL) when the object goes, or with SIGTERM when the thread that started it
// ends (its process killed by ctest's or CI's timeout), so that no child is left
// running. Start it from a thread that outlives it.
#pragma once

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::testing {

class ChildProcess {
 public:
  /// Starts `program` with `args`; output goes to out_file / err_file (created).
  ChildProcess(const std::string& program, std::vector<std::string> args, std::string out_file,
               std::string err_file)
      : out_file_(std::move(out_file)), err_file_(std::move(err_file)) {
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with its parent; a parent gone before the prctl is seen by getppid().
      if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(127);
      int out = ::open(out_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open(err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(err, 2);
      int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      std::vector<char*> argv{const_cast<char*>(program.c_str())};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(program.c_str(), argv.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() { stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  /// Its process id while it runs (for /proc/PID reads); -1 if the fork failed.
  pid_t pid() const { return pid_; }
  std::string out() const { return slurp(out_file_); }
  std::string err() const { return slurp(err_file_); }
  /// Still running (not yet exited).
  bool running() {
    if (pid_ <= 0 || exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return !exited_;
  }
  /// Waits up to `timeout` for the process to exit by itself; its exit code, or -1 still running.
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (running() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return running() ? -1 : exit_code_;
  }
  /// SIGKILL at once (a crash), then reaps it.
  void kill() {
    if (pid_ <= 0 || !running()) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    exited_ = true;
    exit_code_ = -1;
  }
  /// SIGTERM, up to 10 s to exit, then SIGKILL. Returns the exit code (-1 if killed).
  int stop() {
    if (pid_ <= 0 || !running()) return exit_code_;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 1000 && running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      exited_ = true;
      exit_code_ = -1;
    }
    return exit_code_;
  }

 private:
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string out_file_, err_file_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace kinformer::testing
