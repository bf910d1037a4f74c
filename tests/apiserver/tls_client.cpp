#include "tests/apiserver/tls_client.hpp"

#include <cstdlib>
#include <memory>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/support/loopback_http.hpp"

namespace kinformer::testing {

namespace {

bool run(const std::string& command) { return std::system((command + " > /dev/null 2>&1").c_str()) == 0; }

// A key and a certificate signing request for `name`, then the certificate signed by `ca`.
bool make_signed(const std::string& dir, const std::string& name, const std::string& subject, const std::string& ca,
                 const std::string& extensions) {
  auto base = "'" + dir + "/" + name;
  return run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj " + subject + " -keyout " + base +
             ".key' -out " + base + ".csr'") &&
         run("openssl x509 -req -days 2 -in " + base + ".csr' -CA '" + dir + "/" + ca + ".crt' -CAkey '" + dir + "/" +
             ca + ".key' -CAcreateserial -out " + base + ".crt'" + extensions);
}

bool make_ca(const std::string& dir, const std::string& name) {
  auto base = "'" + dir + "/" + name;
  return run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=" + name +
             " -keyout " + base + ".key' -out " + base + ".crt'");
}

}  // namespace

bool make_test_pki(const std::string& dir) {
  std::string san = dir + "/san.ext";
  if (!run("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > '" + san + "'")) return false;
  return make_ca(dir, "ca") && make_ca(dir, "rogue-ca") &&
         make_signed(dir, "server", "/CN=localhost", "ca", " -extfile '" + san + "'") &&
         make_signed(dir, "client", "/CN=alice", "ca", "") &&
         make_signed(dir, "rogue-client", "/CN=mallory", "rogue-ca", "");
}

namespace {

// Connects with `identity`, writes `request`, reads until `enough(reply)` or the end.
std::string exchange(std::uint16_t port, const std::string& request, const TlsClientIdentity& identity,
                     std::chrono::milliseconds timeout, bool (*enough)(const std::string&)) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!context) return "";
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_NONE, nullptr);
  if (!identity.certificate_file.empty() &&
      (SSL_CTX_use_certificate_file(context.get(), identity.certificate_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
       SSL_CTX_use_PrivateKey_file(context.get(), identity.key_file.c_str(), SSL_FILETYPE_PEM) != 1))
    return "";
  int fd = connect_loopback(port);
  if (fd < 0) return "";
  timeval limit{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  std::string reply;
  if (SSL_connect(ssl.get()) == 1) {
    char buffer[4096];
    if (SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) > 0) {
      for (int n; !enough(reply) && (n = SSL_read(ssl.get(), buffer, sizeof buffer)) > 0;)
        reply.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ERR_clear_error();
  ::close(fd);
  return reply;
}

}  // namespace

TestPki::TestPki() {
  char pattern[] = "/tmp/kinformer-pki-XXXXXX";
  dir = ::mkdtemp(pattern);
  made = make_test_pki(dir);
}

TestPki::~TestPki() { std::system(("rm -rf '" + dir + "'").c_str()); }

int https_get(std::uint16_t port, const std::string& target, const TlsClientIdentity& identity,
              const std::string& authorization, std::chrono::milliseconds timeout) {
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
  if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
  request += "\r\n";
  auto reply = exchange(port, request, identity, timeout,
                        [](const std::string& got) { return got.find("\r\n") != std::string::npos; });
  return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(reply.c_str() + 9) : 0;
}

std::string https_exchange(std::uint16_t port, const std::string& request, std::chrono::milliseconds timeout) {
  return exchange(port, request, {}, timeout, [](const std::string&) { return false; });
}

}  // namespace kinformer::testing
