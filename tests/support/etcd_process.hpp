// tests/support/etcd_process.hpp
//
// EtcdProcess: a real etcd 3.4 (Debian's etcd-server, scripts/install-deps) for the
// tests of the etcd storage: started on two free loopback ports with a temporary
// data directory, stopped and the directory removed when the object goes, so CI
// runs these tests and skips none.
//
// Contract
//   * The constructor starts etcd and waits (up to 20 s) until its v3 gateway answers;
//     ready() says whether it did, log() has etcd's output for the failure message.
//   * Progress notifications come every `progress_interval` (etcd's experimental
//     flag), so bookmarks from the watch's progress are seen within a test.
//   * stop() ends etcd (SIGTERM); start() brings it back on the same ports and data;
//     kill() is SIGKILL. The data survives both (an acknowledged write is fsynced).
// Threading: one owning thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "tests/support/child_process.hpp"

namespace kinformer::testing {

class EtcdProcess {
 public:
  /// etcd keeps its data in a fresh directory under `parent_dir`.
  explicit EtcdProcess(std::chrono::milliseconds progress_interval = std::chrono::milliseconds(500),
                       const std::string& parent_dir = "/tmp");
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  bool ready() const { return ready_; }
  /// http://127.0.0.1:PORT
  std::string endpoint() const;
  std::uint16_t client_port() const { return client_port_; }
  std::string log() const;

  void stop();
  void kill();
  /// Starts it again on the same ports and data directory; true once it answers.
  bool start();

 private:
  bool wait_ready(std::chrono::milliseconds timeout);

  std::chrono::milliseconds progress_interval_;
  std::string data_dir_;
  std::uint16_t client_port_ = 0;
  std::uint16_t peer_port_ = 0;
  std::unique_ptr<ChildProcess> process_;
  int generation_ = 0;  // log file per start
  bool ready_ = false;
};

/// A loopback TCP port nothing listens on now (the OS picked it; it may be taken later).
std::uint16_t free_loopback_port();

}  // namespace kinformer::testing
