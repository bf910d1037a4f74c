#include "tests/support/test_storage.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "tests/support/etcd_process.hpp"

namespace kinformer::testing {

const std::string& test_storage() {
  static const std::string storage = [] {
    const char* chosen = std::getenv("KINFORMER_TEST_STORAGE");
    return std::string(chosen && std::string(chosen) == "etcd" ? "etcd" : "memory");
  }();
  return storage;
}

Result<apiserver::ServerOptions> on_test_storage(apiserver::ServerOptions options) {
  if (test_storage() != "etcd") return options;
  if (!options.etcd.endpoints.empty()) return options;  // placed before: a restart on the same keys
  static std::mutex mu;
  static std::unique_ptr<EtcdProcess> etcd;  // guarded by mu; lives until the process exits
  static std::atomic<int> servers{0};
  {
    std::lock_guard lock(mu);
    if (!etcd)
      etcd = std::make_unique<EtcdProcess>(std::chrono::milliseconds(500),
                                           ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!etcd->ready()) return Error{Errc::connection_failed, "the test's etcd did not start: " + etcd->log()};
    options.etcd.endpoints = {etcd->endpoint()};
  }
  options.etcd.prefix = "/test-" + std::to_string(::getpid()) + "-" + std::to_string(++servers);
  return options;
}

}  // namespace kinformer::testing
