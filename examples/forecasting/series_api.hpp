// examples/forecasting/series_api.hpp
//
// What the forecasting programs ask of the API server besides the informer: an
// embedded server that serves MetricSeries, and plain requests whose non-2xx
// answers become errors.
//
// Contract
//   * start_embedded_server(): an apiserver::Server on a free 127.0.0.1 port with
//     the built-in kinds plus MetricSeries (metric_series_spec), started.
//   * call(): one blocking request; a non-2xx answer is Errc::server_error with
//     the method, target, status and the start of the body. Never call it on the
//     client's I/O thread.
//   * ensure_namespace(): creates it; an existing one (409) is fine.
// Threading: any thread but the client's I/O thread. Errors: Result.
#pragma once

#include <memory>
#include <string>

#include "apiserver/server.hpp"
#include "runtime/http/client.hpp"
#include "runtime/result.hpp"

namespace kinformer::forecasting {

Result<std::unique_ptr<apiserver::Server>> start_embedded_server();

Result<http::Response> call(http::Client& client, const std::string& method, const std::string& target,
                            const std::string& body = "",
                            const std::string& content_type = "application/json");

Result<void> ensure_namespace(http::Client& client, const std::string& name);

}  // namespace kinformer::forecasting
