// tests/apiserver/test_server.hpp
//
// A started apiserver::Server on a free loopback port plus JSON request helpers,
// for the API server's integration tests. It runs on the storage under test
// (tests/support/test_storage.hpp): memory, or etcd when KINFORMER_TEST_STORAGE=etcd.
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apiserver/server.hpp"
#include "tests/support/loopback_http.hpp"
#include "tests/support/test_storage.hpp"

namespace kinformer::testing {

class TestServer {
 public:
  explicit TestServer(apiserver::ServerOptions options = {},
                      apiserver::ResourceRegistry registry = apiserver::ResourceRegistry::with_builtins())
      : server_(on_storage(std::move(options)), std::move(registry)) {
    auto port = server_.start();
    if (!port) FAIL("the test API server did not start: " << port.error().message);
    port_ = port.value();
  }

  std::uint16_t port() const { return port_; }
  apiserver::Server& server() { return server_; }

  HttpReply request(const std::string& method, const std::string& target, const std::string& body = "",
                    const std::string& content_type = "application/json", const Headers& headers = {}) {
    return http_request(port_, method, target, body, content_type, headers);
  }

  /// The reply's body as JSON (null when it is not JSON).
  static nlohmann::json json_of(const HttpReply& reply) { return nlohmann::json::parse(reply.body, nullptr, false); }

  nlohmann::json create_configmap(const std::string& name, const std::map<std::string, std::string>& labels = {},
                                  const std::string& ns = "default") {
    nlohmann::json object = {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                             {"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
    if (!labels.empty()) object["metadata"]["labels"] = labels;
    auto reply = request("POST", "/api/v1/namespaces/" + ns + "/configmaps", object.dump());
    REQUIRE(reply.status == 201);
    return json_of(reply);
  }

 private:
  static apiserver::ServerOptions on_storage(apiserver::ServerOptions options) {
    auto chosen = on_test_storage(std::move(options));
    if (!chosen) FAIL(chosen.error().message);
    return std::move(chosen).value();
  }

  apiserver::Server server_;
  std::uint16_t port_ = 0;
};

}  // namespace kinformer::testing
