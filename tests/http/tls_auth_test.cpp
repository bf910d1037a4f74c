// TLS and authentication over real loopback (issue 8, items 2 and 5): the CA and
// the hostname (SAN) are verified, bearer tokens are accepted and refused without
// ever appearing in an error, and client certificates are presented. Certificates
// come from the openssl CLI. The embedded API server has no client-CA option yet,
// so client certificates are checked against a raw TLS server (tests/support).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "tests/apiserver/test_server.hpp"
#include "tests/http/http_fixture.hpp"
#include "tests/support/raw_http_server.hpp"
#include "tests/support/test_certs.hpp"
#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::testing::make_client;
using kinformer::testing::RawHttpServer;
using kinformer::testing::RawPart;
using kinformer::testing::TestCerts;
using kinformer::testing::TestServer;

namespace {

using kinformer::testing::configmaps_path;

kinformer::Result<kinformer::ObjectList> list_once(kinformer::http::ClientConfig config) {
  auto client = make_client(std::move(config));
  kinformer::http::HttpListWatch lw(client, configmaps_path);
  std::promise<kinformer::Result<kinformer::ObjectList>> answer;
  lw.list({}, [&](kinformer::Result<kinformer::ObjectList> r) { answer.set_value(std::move(r)); });
  auto result = answer.get_future().get();
  if (!result) UNSCOPED_INFO("list failed: " << result.error().to_string());
  return result;
}

}  // namespace

TEST_CASE("TLS verifies the CA and the hostname and refuses either mismatch clearly",
          "[http][tls][item-5][integration]") {
  TestCerts certs;
  REQUIRE(certs.ok());
  kinformer::apiserver::ServerOptions options;
  options.tls_cert_file = certs.path("server.crt");
  options.tls_key_file = certs.path("server.key");
  TestServer t(options);
  t.server().call("POST", configmaps_path, R"({"metadata":{"name":"x"},"data":{}})");
  kinformer::http::ClientConfig config;
  config.server = "https://127.0.0.1:" + std::to_string(t.port());
  config.ca_pem = certs.read("ca.crt");

  SECTION("the right CA and the IP in the SAN") {
    auto list = list_once(config);
    REQUIRE(list);
    CHECK(list->items.size() == 1);
  }
  SECTION("the right CA and a DNS name in the SAN") {
    config.server = "https://localhost:" + std::to_string(t.port());
    CHECK(list_once(config));
  }
  SECTION("a CA that did not sign the server's certificate") {
    config.ca_pem = certs.read("other-ca.crt");
    auto list = list_once(config);
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::connection_failed);
    CHECK(list.error().message.find("certificate verify failed") != std::string::npos);
    CHECK(list.error().message.find("local issuer") != std::string::npos);
  }
  SECTION("a hostname the certificate does not name") {
    config.tls_server_name = "wrong.example";
    auto list = list_once(config);
    REQUIRE_FALSE(list);
    CHECK(list.error().message.find("certificate verify failed (hostname mismatch)") != std::string::npos);
  }
  SECTION("verification switched off by insecure-skip-tls-verify") {
    config.ca_pem = certs.read("other-ca.crt");
    config.insecure_skip_tls_verify = true;
    CHECK(list_once(config));
  }
}

TEST_CASE("a bearer token is accepted and a wrong one refused without showing either",
          "[http][auth][item-5][integration]") {
  kinformer::apiserver::ServerOptions options;
  options.token = "the-right-token-1234";
  TestServer t(options);
  kinformer::http::ClientConfig config;
  config.server = t.server().url();
  config.token = "the-right-token-1234";
  CHECK(list_once(config));
  config.token = "a-wrong-token-5678";
  auto refused = list_once(config);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::server_error);
  CHECK(refused.error().message.find("HTTP 401") == 0);
  CHECK(refused.error().message.find("a-wrong-token-5678") == std::string::npos);
  CHECK(refused.error().message.find("the-right-token-1234") == std::string::npos);
  CHECK(config.describe().find("a-wrong-token-5678") == std::string::npos);
}

TEST_CASE("a client certificate is presented to a server that demands one",
          "[http][tls][item-5][integration]") {
  TestCerts certs;
  REQUIRE(certs.ok());
  RawHttpServer server(
      [](const std::string&, std::size_t) -> std::vector<RawPart> {
        return {{RawHttpServer::response(
            200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"3"},"items":[]})")}};
      },
      {certs.path("server.crt"), certs.path("server.key"), certs.path("ca.crt")});
  kinformer::http::ClientConfig config;
  config.server = server.url();
  config.ca_pem = certs.read("ca.crt");
  SECTION("with the certificate") {
    config.client_cert_pem = certs.read("client.crt");
    config.client_key_pem = certs.read("client.key");
    auto list = list_once(config);
    REQUIRE(list);
    CHECK(list->resource_version == "3");
  }
  SECTION("without it") {
    auto list = list_once(config);
    REQUIRE_FALSE(list);
    CHECK(list.error().code == Errc::connection_failed);
    CHECK(server.failed_handshakes() >= 1);
  }
  SECTION("with a key that is not PEM") {
    config.client_cert_pem = certs.read("client.crt");
    config.client_key_pem = "not a key";
    auto client = kinformer::http::Client::create(config);
    REQUIRE_FALSE(client);
    CHECK(client.error().message.find("client key is not a readable PEM key") != std::string::npos);
  }
}

TEST_CASE("a token file rewritten in place is sent from the next request on",
          "[http][auth][item-2][integration]") {
  RawHttpServer server([](const std::string&, std::size_t) -> std::vector<RawPart> {
    return {{RawHttpServer::response(
        200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"1"},"items":[]})")}};
  });
  char pattern[] = "/tmp/kinformer-token-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string token_file = dir + "/token";
  std::ofstream(token_file) << "first-token\n";
  kinformer::http::ClientConfig config;
  config.server = server.url();
  config.token_file = token_file;
  auto client = make_client(config);  // one client: its token is re-read, not rebuilt
  const auto request = [&] {
    auto response = client->request_sync({"GET", configmaps_path, "", "application/json"});
    REQUIRE(response);
    CHECK(response->status == 200);
  };
  request();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new mtime even on coarse clocks
  std::ofstream(token_file) << "second-token-rotated\n";
  request();
  const auto heads = server.heads();
  REQUIRE(heads.size() == 2);
  CHECK(heads[0].find("Authorization: Bearer first-token\r\n") != std::string::npos);
  CHECK(heads[1].find("Authorization: Bearer second-token-rotated\r\n") != std::string::npos);
  std::system(("rm -rf '" + dir + "'").c_str());
}
