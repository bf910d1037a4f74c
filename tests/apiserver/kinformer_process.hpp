// tests/apiserver/kinformer_process.hpp
//
// The real `kinformer` binary as a child process, for the CLI and crash tests:
// spawn it with arguments, read its banner line, send it signals, collect its exit
// status and its stderr.
//
// Contract
//   * spawn() forks and execs KINFORMER_BIN_DIR/kinformer with stdout and stderr on
//     pipes. stderr is drained by a thread, so a chatty child never blocks on it.
//   * first_line() waits up to `timeout` for the first stdout line ("" on timeout/EOF).
//   * wait_exit() returns the exit status (128+signal when killed), or -1 at the
//     deadline, after which the child is SIGKILLed and reaped: no process outlives it.
//   * The destructor SIGKILLs and reaps a child still running.
// Threading: one object per test thread. Errors: spawn() fails the test (REQUIRE).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::testing {

/// KINFORMER_BIN_DIR/kinformer.
const std::string& kinformer_binary();
/// True when the binary is built (the tests that need it say so when it is not).
bool kinformer_binary_built();

class KinformerProcess {
 public:
  explicit KinformerProcess(std::vector<std::string> args);
  ~KinformerProcess();
  KinformerProcess(const KinformerProcess&) = delete;
  KinformerProcess& operator=(const KinformerProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return out_; }
  std::string first_line(std::chrono::milliseconds timeout);
  int wait_exit(std::chrono::milliseconds timeout);
  /// Everything the child wrote on stderr so far (all of it once wait_exit() returned).
  std::string stderr_text();

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  bool reaped_ = false;
  std::mutex err_mu_;
  std::string err_text_;  // guarded by err_mu_
  std::thread err_reader_;
};

/// The port in a "serving on http://127.0.0.1:PORT" banner, 0 when absent.
std::uint16_t port_of(const std::string& banner);

/// `kinformer apiserver --port 0 <flags...>`, started and serving; fails the test when it
/// does not start.
struct ServingApiserver {
  explicit ServingApiserver(std::vector<std::string> flags);
  KinformerProcess process;
  std::uint16_t port = 0;
};

/// `kinformer apiserver --port 0 --etcd-endpoints <etcd> <extra...>`: a replica of the
/// API server on a shared etcd.
struct EtcdReplica : ServingApiserver {
  explicit EtcdReplica(const std::string& etcd, std::vector<std::string> extra = {});
};

}  // namespace kinformer::testing

/// In a test case: return with a warning when the kinformer binary is not built.
#define REQUIRE_BINARY()                                                                              \
  if (!kinformer::testing::kinformer_binary_built()) {                                                \
    WARN("skipped: " << kinformer::testing::kinformer_binary() << " is not built (build the kinformer target)"); \
    return;                                                                                           \
  }
