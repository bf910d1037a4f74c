// Issue 33 (part A): the second hostile probe's connection, HTTP framing and admission
// findings. Each test is the regression test of one finding, named after what must hold.
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "runtime/metrics_server.hpp"
#include "runtime/sanitizers.hpp"
#include "tests/apiserver/test_server.hpp"
#include "tests/apiserver/tls_client.hpp"
#include "tests/support/objects.hpp"

using kinformer::testing::TestServer;
using kinformer::testing::send_all;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// The probe's request: a chunked body whose trailer field is 70 000 bytes (Beast threw
// length_error for a field over 65533 bytes, and nothing caught it).
std::string trailer_bomb(std::size_t field_bytes = 70000) {
  return "GET /version HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: " +
         std::string(field_bytes, 't') + "\r\n\r\n";
}

// What the server sends until it closes the connection or `timeout` passes; `closed`
// tells which.
std::string read_to_close(int fd, std::chrono::milliseconds timeout, bool& closed) {
  std::string got;
  closed = false;
  auto deadline = Clock::now() + timeout;
  char buffer[65536];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      closed = true;
      break;
    }
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

// Connects to 127.0.0.1:port from `source` (another loopback address is another client).
int connect_from(const char* source, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One GET over a fresh connection from `source`; the status, 0 when nothing came back.
int get_from(const char* source, std::uint16_t port, const std::string& target) {
  int fd = connect_from(source, port);
  if (fd < 0) return 0;
  send_all(fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  auto reply = read_to_close(fd, 5s, closed);
  ::close(fd);
  return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(reply.c_str() + 9) : 0;
}

// A metrics endpoint on a free port with an empty registry; `port` is start()'s result.
struct MetricsPort {
  kinformer::MetricsRegistry registry;
  std::optional<kinformer::MetricsServer> server;
  kinformer::Result<std::uint16_t> port;

  explicit MetricsPort(kinformer::MetricsServerOptions options = {}) : port(std::uint16_t{0}) {
    options.registry = &registry;
    server.emplace(options);
    port = server->start();
  }
};

struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) ::close(fd);
  }
};

}  // namespace

// ---- crash ----

TEST_CASE("a chunked trailer over 64 KiB is refused and the API server keeps serving",
          "[apiserver][issue-33][integration]") {
  TestServer t;
  for (std::size_t field : {70000u, 65533u, 1000000u}) {
    int fd = kinformer::testing::connect_loopback(t.port());
    REQUIRE(fd >= 0);
    send_all(fd, trailer_bomb(field));
    bool closed = false;
    auto reply = read_to_close(fd, 5s, closed);
    ::close(fd);
    INFO("trailer field of " << field << " bytes; reply: " << reply.substr(0, 200));
    CHECK(closed);  // the connection ends, answered or not; before the fix the process aborted
    CHECK(reply.rfind("HTTP/1.1 431", 0) == 0);
  }
  CHECK(t.request("GET", "/version").status == 200);
}

TEST_CASE("a chunked trailer over 64 KiB over TLS with a token closes only that connection",
          "[apiserver][issue-33][integration]") {
  kinformer::testing::TestPki pki;
  REQUIRE(pki.made);
  kinformer::apiserver::ServerOptions options;
  options.tls_cert_file = pki.dir + "/server.crt";
  options.tls_key_file = pki.dir + "/server.key";
  options.token = "t0ken";
  TestServer t(options);
  auto reply = kinformer::testing::https_exchange(t.port(), trailer_bomb(), 5s);
  CHECK(reply.rfind("HTTP/1.1 431", 0) == 0);
  CHECK(kinformer::testing::https_get(t.port(), "/version", {}, "Bearer t0ken") == 200);
}

TEST_CASE("a chunked trailer over 8 KiB on the metrics port is refused and it keeps serving",
          "[apiserver][issue-33][integration]") {
  MetricsPort metrics;
  auto& port = metrics.port;
  REQUIRE(port);
  int fd = kinformer::testing::connect_loopback(*port);
  REQUIRE(fd >= 0);
  send_all(fd, trailer_bomb());
  bool closed = false;
  auto reply = read_to_close(fd, 5s, closed);
  ::close(fd);
  CHECK(closed);
  CHECK(reply.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(get_from("127.0.0.1", *port, "/healthz") == 200);
}

// ---- framing ----
namespace {

// Sends a GET whose chunked body is empty, its last chunk in three pieces 50 ms apart:
// Boost 1.74's parser asserted n >= 5 on the second look at it, and aborted any build
// with assertions (runtime/framed_read.hpp). The reply's status, 0 when none.
int get_with_empty_chunked_body_bytewise(std::uint16_t port) {
  int fd = kinformer::testing::connect_loopback(port);
  if (fd < 0) return 0;
  send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
  std::this_thread::sleep_for(50ms);
  send_all(fd, "\r");
  std::this_thread::sleep_for(50ms);
  send_all(fd, "\n");
  bool closed = false;
  auto reply = read_to_close(fd, 5s, closed);
  ::close(fd);
  return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(reply.c_str() + 9) : 0;
}

}  // namespace

TEST_CASE("an empty chunked body sent a byte at a time is answered by the API server and the metrics port",
          "[apiserver][hostile][integration]") {
  TestServer t;
  CHECK(get_with_empty_chunked_body_bytewise(t.port()) == 200);
  CHECK(t.request("GET", "/version").status == 200);
  MetricsPort metrics;
  auto& port = metrics.port;
  REQUIRE(port);
  CHECK(get_with_empty_chunked_body_bytewise(*port) == 200);
}


TEST_CASE("a Transfer-Encoding other than chunked is 501 and closes the connection",
          "[apiserver][issue-33][integration]") {
  TestServer t;
  for (const char* coding : {"gzip, chunked", "identity", "chunked, gzip"}) {
    int fd = kinformer::testing::connect_loopback(t.port());
    REQUIRE(fd >= 0);
    send_all(fd, std::string("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                              "Content-Type: application/json\r\nTransfer-Encoding: ") +
                      coding + "\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n");
    bool closed = false;
    auto reply = read_to_close(fd, 5s, closed);
    ::close(fd);
    INFO("Transfer-Encoding: " << coding << "; reply: " << reply.substr(0, 200));
    CHECK(reply.rfind("HTTP/1.1 501", 0) == 0);
    CHECK(closed);
  }
  SECTION("plain chunked still works") {
    int fd = kinformer::testing::connect_loopback(t.port());
    REQUIRE(fd >= 0);
    std::string body = R"({"metadata":{"name":"chunked"}})";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", body.size());
    send_all(fd, std::string("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                              "Content-Type: application/json\r\nTransfer-Encoding: Chunked\r\n"
                              "Connection: close\r\n\r\n") +
                      size + "\r\n" + body + "\r\n0\r\n\r\n");
    bool closed = false;
    auto reply = read_to_close(fd, 5s, closed);
    ::close(fd);
    CHECK(reply.rfind("HTTP/1.1 201", 0) == 0);
  }
}

// ---- admission ----

TEST_CASE("connections holding a partial header or body or a stalled handshake make room for new clients",
          "[apiserver][issue-33][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.max_connections = 32;
  std::optional<kinformer::testing::TestPki> pki;
  std::string partial;
  SECTION("a partial header") { partial = "GET /version HTTP/1.1\r\nHo"; }
  SECTION("half a body") {
    partial = "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
              "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"metadata\":";
  }
  SECTION("a stalled TLS handshake") {
    pki.emplace();
    REQUIRE(pki->made);
    options.tls_cert_file = pki->dir + "/server.crt";
    options.tls_key_file = pki->dir + "/server.key";
    partial = std::string("\x16\x03\x01\x00", 4);  // the start of a ClientHello record, never finished
  }
  TestServer t(options);
  {
    Sockets attackers;
    for (int i = 0; i < 100; ++i) {
      int fd = kinformer::testing::connect_loopback(t.port());
      REQUIRE(fd >= 0);
      attackers.fds.push_back(fd);
      send_all(fd, partial);
    }
    int served = 0;
    for (int i = 0; i < 4; ++i)
      served += (pki ? kinformer::testing::https_get(t.port(), "/version") : t.request("GET", "/version").status) ==
                200;
    CHECK(served == 4);  // before: 0 of 4 until the attackers' header deadline (30 s)
  }
}

TEST_CASE("one client at its per-client cap makes room among its own connections only",
          "[apiserver][issue-33][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.max_connections = 64;
  options.max_connections_per_client = 8;
  TestServer t(options);
  Sockets flood, others;
  for (int i = 0; i < 4; ++i) {  // another client's waiting connections, older than the flood
    int fd = connect_from("127.0.0.3", t.port());
    REQUIRE(fd >= 0);
    others.fds.push_back(fd);
  }
  for (int i = 0; i < 40; ++i) {
    int fd = connect_from("127.0.0.2", t.port());
    REQUIRE(fd >= 0);
    flood.fds.push_back(fd);
    send_all(fd, "GET /version HTTP/1.1\r\nHo");
  }
  bool closed = false;
  read_to_close(flood.fds.front(), 3s, closed);
  CHECK(closed);  // the flood's oldest connection made room for its newer ones
  read_to_close(others.fds.front(), 300ms, closed);
  CHECK_FALSE(closed);  // the other client's idle connections were not touched
  CHECK(get_from("127.0.0.2", t.port(), "/version") == 200);
  CHECK(get_from("127.0.0.1", t.port(), "/version") == 200);
}

TEST_CASE("the metrics port caps its connections and keeps serving beyond the cap",
          "[apiserver][issue-33][integration]") {
  kinformer::MetricsServerOptions options;
  options.max_connections = 16;
  MetricsPort metrics(options);
  auto& port = metrics.port;
  REQUIRE(port);
  Sockets idle;
  for (int i = 0; i < 100; ++i) {
    int fd = kinformer::testing::connect_loopback(*port);
    REQUIRE(fd >= 0);
    idle.fds.push_back(fd);
  }
  bool closed = false;
  read_to_close(idle.fds.front(), 3s, closed);
  CHECK(closed);  // before: no cap, the connection stays until its 30 s timeout
  CHECK(get_from("127.0.0.1", *port, "/healthz") == 200);
}

// ---- full-state watches ----

namespace {

using kinformer::testing::configmaps_path;

// Starts a watch from `source` and returns its response header; the socket stays open
// (and unread) in `keep`.
std::string open_watch(const char* source, std::uint16_t port, const std::string& query, Sockets& keep) {
  int fd = connect_from(source, port);
  if (fd < 0) return "";
  keep.fds.push_back(fd);
  send_all(fd, "GET " + configmaps_path + "?watch=true" + query + " HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got;
  auto deadline = Clock::now() + 5s;
  char buffer[4096];
  while (got.find("\r\n\r\n") == std::string::npos && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got.substr(0, got.find("\r\n\r\n") + 4);
}

int status_of(const std::string& header) {
  return header.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(header.c_str() + 9) : 0;
}

}  // namespace

TEST_CASE("full-state watches beyond the per-client and total limits get 429 with Retry-After",
          "[apiserver][issue-33][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.full_state_watches = {6, 4};
  TestServer t(options);
  t.create_configmap("one");
  Sockets a, b;
  for (int i = 0; i < 4; ++i) CHECK(status_of(open_watch("127.0.0.2", t.port(), "", a)) == 200);
  auto refused = open_watch("127.0.0.2", t.port(), "", a);
  CHECK(status_of(refused) == 429);
  CHECK(refused.find("Retry-After: 1\r\n") != std::string::npos);
  for (int i = 0; i < 2; ++i) CHECK(status_of(open_watch("127.0.0.3", t.port(), "", b)) == 200);
  CHECK(status_of(open_watch("127.0.0.3", t.port(), "", b)) == 429);  // the total of 6 is reached
  // A watch from a resourceVersion sends events only: no slot.
  auto rv = std::to_string(t.server().store().revision());
  CHECK(status_of(open_watch("127.0.0.2", t.port(), "&resourceVersion=" + rv, a)) == 200);
  // A closed watch gives its slot back.
  ::close(a.fds.front());
  a.fds.erase(a.fds.begin());
  int status = 0;
  for (auto deadline = Clock::now() + 5s; status != 200 && Clock::now() < deadline;) {
    status = status_of(open_watch("127.0.0.2", t.port(), "", a));
    if (status != 200) std::this_thread::sleep_for(20ms);
  }
  CHECK(status == 200);  // else the closed watch's slot was never released
}

TEST_CASE("a GET stays fast while 200 full-state watches are asked for and never read",
          "[apiserver][issue-33][integration][release-bounds]") {
  // 10 per client, so that most of the 200 are refused: without a limit all 200 copy the
  // whole state (3000 objects) into their sockets and the GET waits behind them (the probe:
  // 1000 of them delayed a GET by 28 s; 200, by about 1 s on this machine).
  kinformer::apiserver::ServerOptions options;
  options.full_state_watches = {40, 10};
  TestServer t(options);
  const std::string data(300, 'd');
  for (int i = 0; i < 3000; ++i)
    REQUIRE(t.server()
                .call("POST", configmaps_path,
                      R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("},"data":{"k":")" + data + R"("}})")
                .status == 201);
  Sockets watchers;
  for (int i = 0; i < 200; ++i) {
    int fd = kinformer::testing::connect_loopback(t.port(), 4096);
    REQUIRE(fd >= 0);
    watchers.fds.push_back(fd);
    send_all(fd, "GET " + configmaps_path + "?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  // Measured while the server works through the watches just asked for.
  double slowest = 0;
  for (int i = 0; i < 10; ++i) {
    auto started = Clock::now();
    auto reply = t.request("GET", configmaps_path + "/cm-7");
    slowest = std::max(slowest, std::chrono::duration<double>(Clock::now() - started).count());
    CHECK(reply.status == 200);
  }
  INFO("slowest GET: " << slowest << " s");
  CHECK(slowest < (KINFORMER_UNDER_ASAN ? 5.0 : 0.5));  // ASan runs the server several times slower
}
