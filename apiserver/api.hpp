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
//     kind/apiVersion. A list resourceVersion newer than the store is 504 Timeout at
//     once; a continue token newer than the store is 400.
//   * Watches: unset or "0" resourceVersion starts with synthetic ADDED events; an
//     RV older than the history is an ERROR 410 event (HTTP 200), as kube-apiserver.
//     An RV newer than the store sets wait_for_revision: the HTTP layer waits up to
//     future_watch_wait for it, then answers 504 "Too large resource version".
//     timeoutSeconds is clamped to max_watch_timeout_seconds.
//   * Every decoded body and every patched result fits the ObjectLimits (size, depth,
//     JSON Patch operations); patches are computed outside the store lock and written
//     only if the object is still at the version read (retried on a race).
//   * Every request has a WorkBudget (apiserver/work_budget.hpp) of limits.work: CPU
//     time in proportion to its body and the stored object it patches. The patch
//     engines and schema validation charge it; once spent the request is 413 and
//     nothing is written, so one request holds an I/O thread for at most that long.
//   * A DELETE's body is DeleteOptions (apiserver/delete_options.hpp): wrong types
//     are 400, unsupported values 422, for one object and for a collection.
//   * The default, kube-system, kube-public and kube-node-lease namespaces cannot be
//     deleted (403 Forbidden, as kube-apiserver's NamespaceLifecycle admission).
//   * Writes: create/update/patch (merge, strategic merge for built-ins, JSON patch,
//     server-side apply), delete, deletecollection. Every object a write would store
//     first passes admit() (apiserver/admission.hpp: defaults, secrets, custom schemas,
//     CRDs).
//   * A list, get or watch whose Accept asks for a meta.k8s.io Table gets one
//     (apiserver/table_printer.hpp); <resource>/<name>/scale serves an autoscaling/v1
//     Scale where the kind has one (apiserver/scale_subresource.hpp).
//   * A written CustomResourceDefinition serves its kind before the response is sent
//     (discovery and the new resource's URLs); deleting it stops serving the kind and
//     then deletes every object of it (one event each).
//   * Server-side apply (apiserver/managed_fields.hpp): the object is created if
//     absent, else the configuration is merged in (strategic for built-ins), and what
//     the same fieldManager applied before, no longer applies and no other manager
//     owns is removed. Each manager's applied fields live in the object's own
//     metadata.managedFields, so they survive restarts and are shared by replicas on
//     one etcd. Conflicts between managers are not detected (every apply is forced).
//     A configuration that carries managedFields is 400, as in kube-apiserver.
// Threading: const and thread-safe (the Store locks).
// Not here: sockets, chunking, auth, TLS, body size limits (server.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "apiserver/object_limits.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/watch_filter.hpp"

namespace kinformer::apiserver {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, still URL-encoded
  std::string content_type;
  std::string accept;
  std::string body;
};

/// A list body that shares the stored objects instead of copying them: head, the
/// items separated by ',', tail. Immutable once built, so one snapshot serves a
/// client that reads slowly without a per-client copy of the text.
struct ListBody {
  std::string head;
  std::vector<StoredPtr> items;
  bool untyped = false;  // items without apiVersion/kind (built-in kinds, §A3)
  std::string tail;

  /// Item i as (at most) two pieces of text that live as long as the item.
  std::pair<std::string_view, std::string_view> item_pieces(std::size_t i) const {
    return untyped ? items[i]->untyped_pieces()
                   : std::pair<std::string_view, std::string_view>{items[i]->json, {}};
  }
  std::size_t size() const;
  std::string render() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::shared_ptr<const ListBody> list;  // when set, the body (the HTTP layer streams it)
  int retry_after_seconds = 0;           // > 0: sent as Retry-After (429, 507)
};

/// What a watch request asks the HTTP layer to stream.
struct WatchPlan {
  ObjectFilter filter;
  std::uint64_t start_after = 0;            // stream store events with RV > this
  std::vector<StoredPtr> initial_objects;   // synthetic ADDEDs, rendered as they are written
  std::vector<std::string> initial_lines;   // after them: the initial-events-end bookmark
  std::optional<std::string> final_error;   // send only this ERROR line, then end the stream
  bool bookmarks = false;                   // allowWatchBookmarks
  std::chrono::seconds timeout{0};          // end the stream cleanly after this long
  std::uint64_t wait_for_revision = 0;      // > 0: the RV is in the future; wait for it (then 504)
  /// Set for a Table watch: every live event and bookmark line as this watcher sends it
  /// (apiserver/table_printer.hpp); the initial lines are already rendered.
  std::function<std::string(const std::string&)> rewrite_line;
};

/// timeoutSeconds is clamped to this (a year): longer deadlines overflow the clock.
constexpr std::uint64_t max_watch_timeout_seconds = 365ull * 24 * 3600;
/// How long a watch from a future resourceVersion waits for the store (kube-apiserver: ~3 s).
constexpr std::chrono::seconds future_watch_wait{3};

using ApiReply = std::variant<HttpResponse, WatchPlan>;

class Api {
 public:
  /// `registry` changes at run time when CustomResourceDefinitions are written.
  Api(ResourceRegistry& registry, Storage& store, ObjectLimits limits = {})
      : registry_(registry), store_(store), limits_(limits) {}

  /// `server_address` ("127.0.0.1:8080") goes into /api's serverAddressByClientCIDRs.
  ApiReply handle(const HttpRequest& request, const std::string& server_address) const;

 private:
  ApiReply route(const HttpRequest& request, const std::string& server_address) const;

  ResourceRegistry& registry_;
  Storage& store_;
  ObjectLimits limits_;
};

/// A Status rendered as a response.
HttpResponse error_response(const ApiError& error);

}  // namespace kinformer::apiserver
