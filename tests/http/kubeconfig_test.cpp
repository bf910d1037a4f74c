// Unit tests of kubeconfig and in-cluster configuration (issue 8, item 2).
#include "runtime/http/kubeconfig.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "runtime/http/client_config.hpp"

using kinformer::http::BearerToken;
using kinformer::http::ClientConfig;
using kinformer::http::KubeconfigOptions;
using kinformer::http::load_kubeconfig;

namespace {

constexpr const char* secret = "s3cr3t-token-value";

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kinformer-kubeconfig-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string write(const std::string& name, const std::string& text) const {
    auto file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* first_file =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: dev\n"
    "clusters:\n"
    "- name: dev-cluster\n"
    "  cluster:\n"
    "    server: https://10.0.0.1:6443\n"
    "    certificate-authority: ca.pem\n"
    "contexts:\n"
    "- name: dev\n"
    "  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}\n"
    "users:\n"
    "- name: dev-user\n"
    "  user:\n"
    "    token: s3cr3t-token-value\n";

const char* second_file =
    "current-context: prod\n"
    "clusters:\n"
    "- name: dev-cluster\n"
    "  cluster: {server: https://shadowed.example:1}\n"
    "- name: prod-cluster\n"
    "  cluster:\n"
    "    server: https://prod.example\n"
    "    certificate-authority-data: UEVNLUNB\n"  // "PEM-CA"
    "    insecure-skip-tls-verify: true\n"
    "contexts:\n"
    "- name: prod\n"
    "  context: {cluster: prod-cluster, user: prod-user}\n"
    "users:\n"
    "- name: prod-user\n"
    "  user:\n"
    "    client-certificate-data: Q0VSVA==\n"  // "CERT"
    "    client-key: keys/client.key\n"
    "    tokenFile: token.txt\n";

}  // namespace

TEST_CASE("the first kubeconfig's current-context and entries win when files are merged",
          "[http][kubeconfig][item-2][unit]") {
  TempDir dir;
  dir.write("ca.pem", "CA-FROM-FILE");
  auto first = dir.write("first.yaml", first_file);
  auto second = dir.write("second.yaml", second_file);
  auto config = load_kubeconfig(KubeconfigOptions{{first, second}, ""});
  REQUIRE(config);
  CHECK(config->server == "https://10.0.0.1:6443");
  CHECK(config->ca_pem == "CA-FROM-FILE");
  CHECK(config->token == secret);
  CHECK(config->namespace_ == "team-a");
  CHECK_FALSE(config->insecure_skip_tls_verify);
  CHECK(config->describe().find(secret) == std::string::npos);
  CHECK(config->describe().find("<redacted>") != std::string::npos);
}

TEST_CASE("a named context reads data fields, files relative to their kubeconfig and tokenFile",
          "[http][kubeconfig][item-2][unit]") {
  TempDir dir;
  ::mkdir((dir.path() + "/keys").c_str(), 0700);
  dir.write("keys/client.key", "KEY");
  dir.write("token.txt", "file-token\n");
  auto first = dir.write("first.yaml", first_file);
  auto second = dir.write("second.yaml", second_file);
  auto config = load_kubeconfig(KubeconfigOptions{{first, second}, "prod"});
  REQUIRE(config);
  CHECK(config->server == "https://prod.example");
  CHECK(config->ca_pem == "PEM-CA");
  CHECK(config->insecure_skip_tls_verify);
  CHECK(config->client_cert_pem == "CERT");
  CHECK(config->client_key_pem == "KEY");
  CHECK(config->token_file == dir.path() + "/token.txt");
  CHECK(config->namespace_ == "default");
  BearerToken token(config->token, config->token_file);
  CHECK(token.current() == "file-token");
}

TEST_CASE("KUBECONFIG lists several files and skips missing ones", "[http][kubeconfig][item-2][unit]") {
  TempDir dir;
  dir.write("ca.pem", "CA");
  ::mkdir((dir.path() + "/keys").c_str(), 0700);
  dir.write("keys/client.key", "KEY");
  dir.write("token.txt", "file-token\n");
  auto first = dir.write("first.yaml", first_file);
  auto second = dir.write("second.yaml", second_file);
  const char* old = std::getenv("KUBECONFIG");
  std::string saved = old ? old : "";
  ::setenv("KUBECONFIG", (dir.path() + "/missing.yaml:" + second + ":" + first).c_str(), 1);
  auto config = load_kubeconfig();
  if (old)
    ::setenv("KUBECONFIG", saved.c_str(), 1);
  else
    ::unsetenv("KUBECONFIG");
  REQUIRE(config);
  CHECK(config->server == "https://prod.example");  // second.yaml came first this time
}

TEST_CASE("malformed or incomplete kubeconfigs fail with a clear error and never show the token",
          "[http][kubeconfig][item-2][unit]") {
  TempDir dir;
  SECTION("malformed YAML") {
    auto file =
        dir.write("bad.yaml", std::string("users:\n- name: u\n  user: {token: ") + secret + "\n  : [\n");
    auto config = load_kubeconfig(KubeconfigOptions{{file}, ""});
    REQUIRE_FALSE(config);
    CHECK(config.error().message.find("is not valid YAML (line") != std::string::npos);
    CHECK(config.error().message.find(secret) == std::string::npos);
  }
  SECTION("an unknown context") {
    auto file = dir.write("c.yaml", first_file);
    auto config = load_kubeconfig(KubeconfigOptions{{file}, "nope"});
    REQUIRE_FALSE(config);
    CHECK(config.error().message == "context 'nope' is not in the kubeconfig");
  }
  SECTION("a missing certificate-authority file") {
    auto file = dir.write("c.yaml", first_file);
    auto config = load_kubeconfig(KubeconfigOptions{{file}, ""});
    REQUIRE_FALSE(config);
    CHECK(config.error().message.find("certificate-authority file " + dir.path() + "/ca.pem") !=
          std::string::npos);
    CHECK(config.error().message.find(secret) == std::string::npos);
  }
  SECTION("base64 data with a byte outside the alphabet") {
    // Issue 19, found by fuzz_kubeconfig: yaml-cpp's decoder read before its table on a
    // byte >= 0x80 (SIGSEGV under ASan; garbage bytes otherwise).
    auto file = dir.write("c.yaml",
                          "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
                          "    certificate-authority-data: LS0tLS1CRUdJTi\xa6\xff\x80\n"
                          "users:\n- name: u\n  user: {}\n"
                          "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
    auto config = load_kubeconfig(KubeconfigOptions{{file}, ""});
    REQUIRE_FALSE(config);
    CHECK(config.error().message.find("is not valid base64") != std::string::npos);
  }
  SECTION("a kubeconfig that is a list") {
    auto file = dir.write("c.yaml", "- a\n- b\n");
    CHECK_FALSE(load_kubeconfig(KubeconfigOptions{{file}, ""}));
  }
  SECTION("a missing file") {
    auto config = load_kubeconfig(KubeconfigOptions{{dir.path() + "/none.yaml"}, ""});
    REQUIRE_FALSE(config);
    CHECK(config.error().message == "cannot read kubeconfig " + dir.path() + "/none.yaml");
  }
}

TEST_CASE("in-cluster config reads the service account and re-reads a rotated token",
          "[http][kubeconfig][item-2][unit]") {
  TempDir dir;
  dir.write("ca.crt", "SA-CA");
  dir.write("token", "token-1\n");
  dir.write("namespace", "kube-system\n");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = kinformer::http::in_cluster_config(dir.path());
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE(config);
  CHECK(config->server == "https://10.96.0.1:443");
  CHECK(config->ca_pem == "SA-CA");
  CHECK(config->namespace_ == "kube-system");
  BearerToken token(config->token, config->token_file);
  CHECK(token.current() == "token-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new mtime even on coarse clocks
  dir.write("token", "token-2-longer\n");
  CHECK(token.current() == "token-2-longer");

  CHECK_FALSE(kinformer::http::in_cluster_config(dir.path()));  // outside a cluster: no env
}

TEST_CASE("server URLs parse into scheme, host, port and prefix", "[http][item-2][unit]") {
  using kinformer::http::parse_server_url;
  auto a = parse_server_url("https://10.0.0.1:6443");
  REQUIRE(a);
  CHECK(a->tls);
  CHECK(a->host == "10.0.0.1");
  CHECK(a->port == "6443");
  auto b = parse_server_url("http://localhost/k8s/");
  REQUIRE(b);
  CHECK(b->port == "80");
  CHECK(b->base_path == "/k8s");
  auto c = parse_server_url("https://[::1]:8443");
  REQUIRE(c);
  CHECK(c->host == "::1");
  CHECK_FALSE(parse_server_url("ftp://x"));
  CHECK_FALSE(parse_server_url("http://host:12ab"));
}

TEST_CASE("the server flags of every command line are taken in one place", "[http][item-2][unit]") {
  kinformer::http::ServerFlags flags;
  CHECK(flags.take("--server", "https://10.0.0.1:6443"));
  CHECK(flags.take("--token-file", "/run/token"));
  CHECK(flags.take("--kubeconfig", "/etc/kube.yaml"));
  CHECK(flags.take("--context", "prod"));
  CHECK_FALSE(flags.take("--namespace", "default"));
  CHECK_FALSE(flags.take("--serverx", "x"));
  CHECK(flags.server == "https://10.0.0.1:6443");
  CHECK(flags.token_file == "/run/token");
  CHECK(flags.kubeconfig == "/etc/kube.yaml");
  CHECK(flags.context == "prod");
}
