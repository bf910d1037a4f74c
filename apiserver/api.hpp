// apiserver/api.hpp
//
// Api: the HTTP-independent request handler of the embedded API server. It maps a
// request (method, target, headers, body) to the Kubernetes API verb and answers
// with a complete response, or with a WatchPlan the HTTP layer streams
// (kube-api-protocol.md §A1-§A9).
//
// Contract
//   * Every failure is a Kubernetes Status body with the matching HTTP code; an
//     unexpected exception becomes 500 InternalError, never a crash, and the store
//     is only changed by a complete, validated write.
//   * Lists honour limit/continue (one snapshot for all pages), resourceVersion and
//     resourceVersionMatch, labelSelector and fieldSelector; built-in list items omit
//     kind/apiVersion. A resourceVersion newer than the store is 504 Timeout at once
//     (kube-apiserver waits up to ~3 s first).
//   * Watches: unset or "0" resourceVersion starts with synthetic ADDED events; an
//     RV older than the history is an ERROR 410 event (HTTP 200), as kube-apiserver.
//   * Writes: create/update/patch (merge, strategic merge for built-ins, JSON patch,
//     server-side apply), delete, deletecollection.
//   * Server-side apply without managedFields: the object is created if absent, else
//     the configuration is merged in (strategic for built-ins), and what the same
//     fieldManager applied before but no longer applies is removed. Those last applied
//     configurations live in this object's memory only (keyed by object uid), so
//     conflicts between managers are not detected and a restart forgets them.
// Threading: const and thread-safe (the Store locks).
// Not here: sockets, chunking, auth, TLS, body size limits (server.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "apiserver/store.hpp"
#include "apiserver/watch_filter.hpp"

namespace kinformer::apiserver {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, still URL-encoded
  std::string content_type;
  std::string accept;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// What a watch request asks the HTTP layer to stream.
struct WatchPlan {
  ObjectFilter filter;
  std::uint64_t start_after = 0;            // stream store events with RV > this
  std::vector<std::string> initial_lines;   // synthetic ADDEDs (and the initial-events-end bookmark)
  std::optional<std::string> final_error;   // send only this ERROR line, then end the stream
  bool bookmarks = false;                   // allowWatchBookmarks
  std::chrono::seconds timeout{0};          // end the stream cleanly after this long
};

using ApiReply = std::variant<HttpResponse, WatchPlan>;

/// The configuration each field manager last applied to each object (server-side apply).
class AppliedConfigurations {
 public:
  std::optional<std::string> get(const std::string& uid, const std::string& manager) const;
  void set(const std::string& uid, const std::string& manager, std::string config);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> configs_;  // guarded by mu_; "uid/manager" -> configuration JSON
};

class Api {
 public:
  Api(const ResourceRegistry& registry, Store& store) : registry_(registry), store_(store) {}

  /// `server_address` ("127.0.0.1:8080") goes into /api's serverAddressByClientCIDRs.
  ApiReply handle(const HttpRequest& request, const std::string& server_address) const;

 private:
  ApiReply route(const HttpRequest& request, const std::string& server_address) const;

  const ResourceRegistry& registry_;
  Store& store_;
  mutable AppliedConfigurations applied_;
};

/// A Status rendered as a response.
HttpResponse error_response(const ApiError& error);

}  // namespace kinformer::apiserver
