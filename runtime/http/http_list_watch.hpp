// runtime/http/http_list_watch.hpp
//
// HttpListWatch: the ListWatch of one resource collection on a real API server
// (or the embedded one) over runtime/http/client.hpp — what a Reflector reads when
// it watches a cluster (client-go's ListWatch from a RESTClient;
// kube-api-protocol.md A4–A5; informer-semantics.md §5).
//
//   auto client = http::Client::create(config).value();
//   auto pods = std::make_shared<http::HttpListWatch>(client, http::collection_path("", "v1", "pods",
//   "default")); options.source = pods;   // SharedInformerOptions
//
// Contract (runtime/list_watch.hpp's, and)
//   * list(): GET with limit, continue, resourceVersion, resourceVersionMatch and
//     the selectors; the body is decoded by list_decoder.hpp; non-2xx answers map
//     through api_status.hpp (410 → gone, 429 → too_many_requests, 504 too large
//     → too_large_rv, else server_error); a transport failure is connection_failed.
//   * watch(): GET ?watch=true with resourceVersion, allowWatchBookmarks,
//     timeoutSeconds, the selectors and sendInitialEvents +
//     resourceVersionMatch. Every socket read's complete events go to on_events
//     as one batch (in order; empty batches are not sent).
//   * A malformed line, an event over config.max_event_bytes, an ERROR event, a
//     truncated chunk or a reset ends the watch: the events before it are
//     delivered, then on_closed(Error) — decode_failed for bad input (the Reflector
//     relists: the skipped event cannot be trusted to come again), the Status's
//     code for ERROR (410 → gone), connection_failed for the transport. Never a
//     crash; memory stays bounded by max_event_bytes plus one 64 KiB read.
//   * pause(): no delivery and no socket reads after the current read (TCP
//     back-pressure reaches the server); resume() delivers what was held, in order,
//     then reads on. stop(): after it returns no callback of that watch runs (a
//     callback already running finishes first); it may be called from a callback.
// Threading: list()/watch() from any thread; callbacks run on the Client's I/O
//   thread.
#pragma once

#include <memory>
#include <string>

#include "runtime/http/client.hpp"
#include "runtime/list_watch.hpp"

namespace kinformer::http {

/// "/api/v1/namespaces/default/pods", "/apis/apps/v1/deployments" (namespace "" = all).
std::string collection_path(const std::string& group, const std::string& version, const std::string& resource,
                            const std::string& namespace_ = "");
/// Percent-encodes a query value (selectors, continue tokens).
std::string url_encode(std::string_view text);

class HttpListWatch final : public ListWatch {
 public:
  HttpListWatch(std::shared_ptr<Client> client, std::string collection_path);

  void list(const ListOptions& options, ListCallback done) override;
  [[nodiscard]] std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) override;

  const std::shared_ptr<Client>& client() const { return client_; }
  /// The collection path's last segment ("pods").
  std::string resource() const override;

 private:
  std::shared_ptr<Client> client_;
  std::string path_;
};

}  // namespace kinformer::http
