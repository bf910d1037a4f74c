#include "apiserver/server.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "apiserver/auth.hpp"
#include "apiserver/http/listener.hpp"
#include "apiserver/http/refusals.hpp"
#include "apiserver/storage/persistence.hpp"

namespace kinformer::apiserver {

namespace {

StoreOptions store_options(const ServerOptions& options) {
  StoreOptions out;
  out.watch_history = options.watch_history;
  out.watch_history_bytes = options.watch_history_bytes;
  return out;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  ResourceRegistry registry;
  std::unique_ptr<Store> memory;     // without etcd endpoints
  std::unique_ptr<EtcdStorage> etcd;  // with them, opened by start()
  Storage* storage = nullptr;         // one of the two
  std::optional<Api> api;             // over *storage
  Authenticator auth;
  std::unique_ptr<storage::Persistence> persistence;  // with a data file, between start() and stop()
  WatchAdmission full_state_watches;
  Listener listener;  // declared last: its sessions use everything above, and it stops first
  std::uint16_t port = 0;
  bool running = false;

  Impl(ServerOptions o, ResourceRegistry r)
      : options(std::move(o)),
        registry(std::move(r)),
        auth(options.token, !options.client_ca_file.empty()),
        full_state_watches(options.full_state_watches) {
    if (!options.etcd.endpoints.empty()) return;
    memory = std::make_unique<Store>(registry, store_options(options));
    storage = memory.get();
    api.emplace(registry, *storage, options.limits);
  }
};

Server::Server(ServerOptions options, ResourceRegistry registry)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(registry))) {}

Server::~Server() { (void)stop(); }

Result<std::uint16_t> Server::start() {
  auto& s = *impl_;
  if (s.running) return s.port;
  if (!s.options.etcd.endpoints.empty() && !s.options.data_file.empty())
    return Error{Errc::server_error, "a data file and etcd endpoints exclude each other: objects live in one place"};
  if (!s.storage) {
    EtcdOptions etcd = s.options.etcd;
    etcd.watch_history = s.options.watch_history;  // one knob for both storages (per type on etcd)
    auto opened = EtcdStorage::open(s.registry, etcd);
    if (!opened) return std::move(opened).error();
    s.etcd = std::move(opened).value();
    s.storage = s.etcd.get();
    s.api.emplace(s.registry, *s.storage, s.options.limits);
  }
  if (!s.options.data_file.empty() && !s.persistence) {
    auto opened = storage::Persistence::open(
        *s.memory, s.registry, {s.options.data_file, s.options.wal_compact_bytes, s.options.repair});
    if (!opened) return std::move(opened).error();
    s.persistence = std::move(opened).value();
  }
  SessionContext context;
  context.options = &s.options;
  context.api = &*s.api;
  context.store = s.storage;
  context.auth = &s.auth;
  context.persistence = s.persistence.get();
  context.full_state_watches = &s.full_state_watches;
  auto port = s.listener.start(std::move(context), s.etcd ? std::max(1u, s.options.storage_threads) : 0);
  if (!port) return port.error();
  s.port = port.value();
  s.running = true;
  return s.port;
}

Result<void> Server::stop() {
  auto& s = *impl_;
  if (!s.running) return {};
  s.running = false;
  s.listener.stop();
  if (!s.persistence) return {};
  auto closed = s.persistence->close();  // the final snapshot
  s.persistence.reset();
  return closed;
}

std::uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return std::string(impl_->listener.tls() ? "https://" : "http://") + impl_->listener.address();
}

Storage& Server::store() { return *impl_->storage; }

HttpResponse Server::call(const std::string& method, const std::string& target, const std::string& body,
                          const std::string& content_type) {
  HttpRequest request{method, target, content_type, "application/json", body};
  if (auto refused = answer_while_disk_full(impl_->persistence.get(), method, target)) return std::move(*refused);
  if (!impl_->api)
    return error_response(ApiError{503, "ServiceUnavailable", "the server's etcd storage opens in start()", {}, {}, {}, {}, {}});
  auto reply = impl_->api->handle(request, impl_->listener.address());
  if (auto& p = impl_->persistence; p && !p->wait_durable(p->sync_point()))
    return error_response(not_persisted());
  if (auto* response = std::get_if<HttpResponse>(&reply)) {
    if (response->list) response->body = response->list->render();
    response->list.reset();
    return std::move(*response);
  }
  return error_response(ApiError::bad_request("a watch needs the HTTP endpoint (" + url() + "), not Server::call()"));
}
const ResourceRegistry& Server::registry() const { return impl_->registry; }

ServerStats Server::stats() const {
  const auto& c = impl_->listener.counters();
  ServerStats out{c.requests.load(), c.watches_started.load(), c.watches_active.load(),
                  c.slow_watchers_closed.load()};
  if (impl_->persistence) {
    auto log = impl_->persistence->log_stats();
    out.log_records = log.records;
    out.log_syncs = log.syncs;
  }
  return out;
}

}  // namespace kinformer::apiserver
