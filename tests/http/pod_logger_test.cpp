// The acceptance check, automated (issue 8, item 6): `kinformer apiserver`, then
// build/bin/pod_logger --server URL, then the installed kubectl applies, labels and
// deletes examples/manifests/nginx-pod.yaml and pod_logger logs ADD, UPDATE and
// DELETE for default/nginx-pod. Skipped, with a message, only where kubectl is not
// installed (as tests/apiserver/kubectl_test.cpp does).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <string>

#include "tests/http/http_fixture.hpp"
#include "tests/support/child_process.hpp"

using kinformer::testing::ChildProcess;
using kinformer::testing::eventually;

namespace {

const std::string bin_dir = KINFORMER_BIN_DIR;
const std::string manifest = std::string(KINFORMER_SOURCE_DIR) + "/examples/manifests/nginx-pod.yaml";

std::string find_kubectl() {
  for (const char* candidate : {"/usr/bin/kubectl", "/usr/local/bin/kubectl"})
    if (::access(candidate, X_OK) == 0) return candidate;
  return {};
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kinformer-pod-logger-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// kubectl against `url` with an isolated HOME and no kubeconfig; its exit code.
int kubectl(const std::string& path, const TempDir& dir, const std::string& url, const std::string& args) {
  const std::string command = "env HOME='" + dir.path() + "' KUBECONFIG=/dev/null timeout 60 " + path +
                              " --server " + url + " --cache-dir '" + dir.path() + "/cache' " + args +
                              " > '" + dir / "kubectl.out" + "' 2>&1 < /dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("pod_logger logs ADD, UPDATE and DELETE for the pod kubectl applies, labels and deletes",
          "[http][pod_logger][item-6][integration]") {
  const auto kubectl_path = find_kubectl();
  if (kubectl_path.empty()) {
    WARN("skipped: kubectl is not installed (looked in /usr/bin and /usr/local/bin)");
    return;
  }
  TempDir dir;
  ChildProcess server(bin_dir + "/kinformer", {"apiserver", "--port", "0"}, dir / "server.out",
                      dir / "server.err");
  REQUIRE(server.started());
  std::string url;
  eventually(
      [&] {
        std::smatch m;
        const std::string out = server.out();
        if (!std::regex_search(out, m, std::regex("serving on (http://127\\.0\\.0\\.1:[0-9]+)")))
          return false;
        url = m[1];
        return true;
      },
      "kinformer apiserver to print the URL it serves on", std::chrono::seconds(20));
  REQUIRE_FALSE(url.empty());

  ChildProcess logger(bin_dir + "/pod_logger", {"--server", url}, dir / "logger.out", dir / "logger.err");
  REQUIRE(logger.started());
  eventually([&] { return logger.err().find("synced") != std::string::npos; },
             "pod_logger to sync its (empty) cache");

  INFO("pod_logger stdout: " << logger.out() << "\npod_logger stderr: " << logger.err());
  REQUIRE(kubectl(kubectl_path, dir, url, "apply -f " + manifest) == 0);
  eventually([&] { return logger.out().find("ADD event for default/nginx-pod\n") != std::string::npos; },
             "the ADD line after kubectl apply");
  REQUIRE(kubectl(kubectl_path, dir, url, "label pod nginx-pod tier=web") == 0);
  eventually([&] { return logger.out().find("UPDATE event for default/nginx-pod\n") != std::string::npos; },
             "the UPDATE line after kubectl label");
  REQUIRE(kubectl(kubectl_path, dir, url, "delete pod nginx-pod") == 0);
  eventually([&] { return logger.out().find("DELETE event for default/nginx-pod\n") != std::string::npos; },
             "the DELETE line after kubectl delete");
  CHECK(logger.running());
  CHECK(logger.stop() == 0);
  CHECK(server.stop() == 0);
  CHECK(logger.out() ==
        "ADD event for default/nginx-pod\nUPDATE event for default/nginx-pod\nDELETE event for "
        "default/nginx-pod\n");
}
