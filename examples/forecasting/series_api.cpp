#include "examples/forecasting/series_api.hpp"

#include "examples/forecasting/metric_series.hpp"

namespace kinformer::forecasting {

Result<std::unique_ptr<apiserver::Server>> start_embedded_server() {
  auto registry = apiserver::ResourceRegistry::with_builtins();
  auto type = apiserver::ResourceRegistry::parse_spec(metric_series_spec);
  if (!type) return type.error();
  if (auto added = registry.add(type.value()); !added) return added.error();
  auto server = std::make_unique<apiserver::Server>(apiserver::ServerOptions{}, std::move(registry));
  auto port = server->start();
  if (!port) return port.error();
  return server;
}

Result<http::Response> call(http::Client& client, const std::string& method, const std::string& target,
                            const std::string& body, const std::string& content_type) {
  auto response = client.request_sync({method, target, body, content_type});
  if (!response) return response.error();
  if (response->status / 100 != 2)
    return Error{Errc::server_error, method + " " + target + ": HTTP " + std::to_string(response->status) +
                                         " " + response->body.substr(0, 300)};
  return response;
}

Result<void> ensure_namespace(http::Client& client, const std::string& name) {
  auto response =
      client.request_sync({"POST", "/api/v1/namespaces", namespace_body(name), "application/json"});
  if (!response) return response.error();
  if (response->status / 100 != 2 && response->status != 409)
    return Error{Errc::server_error, "creating namespace " + name + ": HTTP " +
                                         std::to_string(response->status) + " " +
                                         response->body.substr(0, 300)};
  return {};
}

}  // namespace kinformer::forecasting
