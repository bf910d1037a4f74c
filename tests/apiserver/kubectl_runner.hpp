// tests/apiserver/kubectl_runner.hpp
//
// Kubectl: the installed kubectl run against a test server, with an isolated HOME,
// no kubeconfig and a fresh cache directory (kube-api-protocol.md §B1), for the
// real-client tests (kubectl_test.cpp, kubectl_output_test.cpp), and the manifests
// they share. REQUIRE_KUBECTL skips a test, with a warning, only where kubectl is not
// installed.
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/apiserver/test_server.hpp"

namespace kinformer::testing {

/// The installed kubectl, or "" when there is none.
inline std::string find_kubectl() {
  for (const char* candidate : {"/usr/bin/kubectl", "/usr/local/bin/kubectl"})
    if (::access(candidate, X_OK) == 0) return candidate;
  return {};
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct KubectlRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class Kubectl {
 public:
  Kubectl(std::string kubectl, std::string server_url, std::string extra = "")
      : kubectl_(std::move(kubectl)), url_(std::move(server_url)), extra_(std::move(extra)) {
    char pattern[] = "/tmp/kinformer-kubectl-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  ~Kubectl() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  Kubectl(const Kubectl&) = delete;
  Kubectl& operator=(const Kubectl&) = delete;

  std::string file(const std::string& name, const std::string& content) const {
    auto path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  std::string command(const std::string& args) const {
    return "env HOME='" + dir_ + "' KUBECONFIG=/dev/null timeout 60 " + kubectl_ + " --server " + url_ +
           " --cache-dir '" + dir_ + "/cache' " + extra_ + " " + args;
  }

  KubectlRun run(const std::string& args) const {
    auto out = dir_ + "/out.txt", err = dir_ + "/err.txt";
    int status = std::system((command(args) + " > '" + out + "' 2> '" + err + "' < /dev/null").c_str());
    KubectlRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  /// run() that must succeed; kubectl's stderr is shown when it does not.
  KubectlRun run_ok(const std::string& args) const {
    auto r = run(args);
    INFO("kubectl " << args << " said: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  }

  /// Starts `kubectl <args>` (a watch: `get -w`) in the background and returns the
  /// file its output goes to, once `server` has one more open watch. It ends when the
  /// server closes the stream (kubectl get -w does not re-watch): stop the server.
  std::string watch_in_background(TestServer& server, const std::string& args) const {
    auto before = server.server().stats().watches_active;
    auto out = dir_ + "/watch.txt";
    std::system((command(args) + " > '" + out + "' 2>&1 < /dev/null &").c_str());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (server.server().stats().watches_active <= before && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    INFO("kubectl " << args << " did not open a watch within 30 s; it printed: " << slurp(out));
    REQUIRE(server.server().stats().watches_active > before);
    return out;
  }

  const std::string& dir() const { return dir_; }
  /// Later commands go to this server (another process, or the same one restarted).
  void use_server(std::string server_url) { url_ = std::move(server_url); }

 private:
  std::string kubectl_, url_, extra_, dir_;
};

/// What the file holds once it contains `text`, or after 30 s: the caller's checks then
/// show what arrived instead.
inline std::string wait_for_text(const std::string& path, const std::string& text) {
  std::string seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = slurp(path);
  }
  return seen;
}

/// The stored object default/<name> of `plural` in group/v1, or null when absent.
inline nlohmann::json stored(TestServer& t, const std::string& plural, const std::string& name,
                             const std::string& group = "") {
  const auto* type = t.server().registry().find(group, "v1", plural);
  REQUIRE(type);
  auto object = t.server().store().get(*type, "default", name);
  if (!object) return nullptr;
  return nlohmann::json::parse((*object)->json);
}

/// A pod named web with the label app=<app>, one busybox container.
inline std::string pod_manifest(const char* app) {
  return std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: ") + app +
         "\nspec:\n  containers:\n  - name: main\n    image: busybox\n";
}

/// A Deployment (nginx:1.27, 2 replicas), a Service, a ConfigMap and a Secret, all
/// named web* and labelled app=demo.
inline const char* const app_manifest = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: demo}
spec:
  replicas: 2
  selector:
    matchLabels: {app: demo}
  template:
    metadata:
      labels: {app: demo}
    spec:
      containers:
      - name: main
        image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {app: demo}
spec:
  selector: {app: demo}
  ports:
  - port: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  labels: {app: demo}
data:
  mode: fast
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  labels: {app: demo}
stringData:
  password: s3cr3t
)";

}  // namespace kinformer::testing

#define REQUIRE_KUBECTL(path)                                                            \
  auto path = kinformer::testing::find_kubectl();                                        \
  if (path.empty()) {                                                                    \
    WARN("skipped: kubectl is not installed (looked in /usr/bin and /usr/local/bin)");   \
    return;                                                                              \
  }
