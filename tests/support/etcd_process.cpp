#include "tests/support/etcd_process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "runtime/http/client.hpp"

namespace kinformer::testing {

std::uint16_t free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

EtcdProcess::EtcdProcess(std::chrono::milliseconds progress_interval, const std::string& parent_dir)
    : progress_interval_(progress_interval) {
  std::string pattern = parent_dir + "/kinformer-etcd-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return;
  data_dir_ = pattern;
  client_port_ = free_loopback_port();
  peer_port_ = free_loopback_port();
  if (client_port_ == 0 || peer_port_ == 0 || client_port_ == peer_port_) return;
  ready_ = start();
}

EtcdProcess::~EtcdProcess() {
  stop();
  if (!data_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_, ignored);
  }
}

std::string EtcdProcess::endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }

std::string EtcdProcess::log() const {
  return process_ ? process_->err().substr(0, 4000)
                  : std::string("etcd was not started (no temp dir or port)");
}

bool EtcdProcess::start() {
  stop();
  const std::string client = endpoint();
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  const std::string log_base = data_dir_ + "/etcd-" + std::to_string(++generation_);
  process_ = std::make_unique<ChildProcess>(
      "/usr/bin/etcd",
      std::vector<std::string>{"--name", "test", "--data-dir", data_dir_ + "/data", "--listen-client-urls",
                               client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
                               "--initial-advertise-peer-urls", peer, "--initial-cluster", "test=" + peer,
                               "--experimental-watch-progress-notify-interval",
                               std::to_string(progress_interval_.count()) + "ms"},
      log_base + ".out", log_base + ".err");
  ready_ = process_->started() && wait_ready(std::chrono::seconds(20));
  return ready_;
}

bool EtcdProcess::wait_ready(std::chrono::milliseconds timeout) {
  http::ClientConfig config;
  config.server = endpoint();
  config.connect_timeout = std::chrono::milliseconds(500);
  config.request_timeout = std::chrono::milliseconds(1000);
  auto client = http::Client::create(config);
  if (!client) return false;
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end && process_->running()) {
    auto answer = client.value()->request_sync({"POST", "/v3/maintenance/status", "{}", "application/json"});
    if (answer && answer->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void EtcdProcess::stop() {
  if (process_) process_->stop();
  ready_ = false;
}

void EtcdProcess::kill() {
  if (process_) process_->kill();
  ready_ = false;
}

}  // namespace kinformer::testing
