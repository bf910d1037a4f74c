// The only translation unit with Beast/Asio (deps-notes §7).
#include "apiserver/server.hpp"

#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "apiserver/api.hpp"
#include "apiserver/storage/persistence.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t max_events_per_batch = 512;
constexpr std::size_t max_batch_bytes = 1 << 20;
constexpr auto request_idle_timeout = std::chrono::minutes(5);

struct Counters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> watches_started{0};
  std::atomic<std::uint64_t> watches_active{0};
  std::atomic<std::uint64_t> slow_watchers_closed{0};
};

// What every session shares: set up by Server::start(), read-only while serving.
struct Shared {
  const ServerOptions* options;
  Api* api;
  Store* store;
  Counters* counters;
  std::string address;  // "127.0.0.1:PORT", for /api
  storage::Persistence* persistence;  // nullptr without a data file
};

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  /// Closes the connection from its own strand; safe from any thread.
  virtual void close() = 0;
};

class SessionRegistry {
 public:
  void add(SessionBase* s, std::weak_ptr<SessionBase> w) {
    std::lock_guard lock(mu_);
    live_[s] = std::move(w);
  }
  void remove(SessionBase* s) {
    std::lock_guard lock(mu_);
    live_.erase(s);
  }
  void close_all() {
    std::vector<std::shared_ptr<SessionBase>> all;
    {
      std::lock_guard lock(mu_);
      for (auto& [ptr, weak] : live_)
        if (auto s = weak.lock()) all.push_back(std::move(s));
    }
    for (auto& s : all) s->close();
  }

 private:
  std::mutex mu_;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> live_;  // guarded by mu_
};

ApiError not_persisted() {
  return ApiError::internal("the write-ahead log failed: this request's effect may not survive a restart");
}

std::string chunk_header(std::size_t size) {
  char out[24];
  std::snprintf(out, sizeof out, "%zx\r\n", size);
  return out;
}

// One connection. Stream is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
// All handlers run on the connection's strand (the stream's executor).
template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const Shared& shared, SessionRegistry& registry, std::string peer)
      : stream_(std::move(stream)),
        shared_(shared),
        registry_(registry),
        peer_(std::move(peer)),
        watch_timeout_(stream_.get_executor()),
        bookmark_timer_(stream_.get_executor()),
        write_timer_(stream_.get_executor()) {}

  ~Session() override { registry_.remove(this); }

  void run() {
    registry_.add(this, this->shared_from_this());
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read_request();
    } else {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->shutdown();
                                self->read_request();
                              });
    }
  }

  void close() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->shutdown(); });
  }

 private:
  void shutdown() {
    if (closed_) return;
    closed_ = true;
    if (watching_) shared_.counters->watches_active--;
    watch_observer_.reset();
    watching_ = false;
    if (wait_ticket_) shared_.store->cancel_wait(wait_ticket_);
    wait_ticket_ = 0;
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    write_timer_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(stream_).close();
  }

  void read_request() {
    if (closed_) return;
    parser_.emplace();
    parser_->body_limit(shared_.options->max_body_bytes);
    parser_->header_limit(64 * 1024);
    beast::get_lowest_layer(stream_).expires_after(request_idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (closed_) return;
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::operation_aborted ||
        ec == beast::error::timeout || ec == net::error::connection_reset)
      return shutdown();
    if (ec == http::error::body_limit)
      return send_error_and_close(ApiError::too_large(shared_.options->max_body_bytes));
    request_started_ = std::chrono::steady_clock::now();
    if (ec) return send_error_and_close(ApiError::bad_request("malformed HTTP request: " + ec.message()));
    shared_.counters->requests++;
    auto& message = parser_->get();
    if (shared_.options->observer) {
      observed_method_ = std::string(message.method_string());
      observed_target_ = std::string(message.target());
    }
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.content_type = std::string(message[http::field::content_type]);
    request.accept = std::string(message[http::field::accept]);
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive();
    if (shared_.options->log_requests)
      log::info("apiserver", "request", {{"peer", peer_}, {"method", request.method}, {"target", request.target}});
    if (!shared_.options->token.empty() &&
        message[http::field::authorization] != "Bearer " + shared_.options->token)
      return send_response(error_response(ApiError::unauthorized()));
    auto reply = shared_.api->handle(request, shared_.address);
    if (shared_.persistence) return answer_when_durable(std::move(reply));
    answer(std::move(reply));
  }

  void answer(ApiReply reply) {
    if (auto* response = std::get_if<HttpResponse>(&reply)) return send_response(std::move(*response));
    start_watch(std::move(std::get<WatchPlan>(reply)));
  }

  // An answer leaves once everything it could have seen is durable (storage/persistence.hpp):
  // a write's 2xx only after its log record is fsynced, and no read shows a revision a
  // crash could take back. The wait is asynchronous, so concurrent writers share an fsync.
  void answer_when_durable(ApiReply reply) {
    auto held = std::make_shared<ApiReply>(std::move(reply));
    auto caller = std::this_thread::get_id();
    auto* persistence = shared_.persistence;
    auto self = this->shared_from_this();
    persistence->when_durable(persistence->sync_point(), [self, held, caller](bool durable) {
      auto go = [self, held, durable] {
        if (self->closed_) return;
        if (!durable) return self->send_error_and_close(not_persisted());
        self->answer(std::move(*held));
      };
      // Already durable: called back on this strand, before when_durable() returned.
      if (std::this_thread::get_id() == caller) return go();
      net::post(self->stream_.get_executor(), std::move(go));
    });
  }

  void send_error_and_close(const ApiError& error) {
    keep_alive_ = false;
    send_response(error_response(error));
  }

  // The one place a request's outcome reaches ServerOptions::observer.
  void observe(int status) {
    if (!shared_.options->observer) return;
    shared_.options->observer->on_request(observed_method_, observed_target_, status,
                                          std::chrono::steady_clock::now() - request_started_);
    observed_method_.clear();
    observed_target_.clear();
  }

  void send_response(HttpResponse response) {
    observe(response.status);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
    res->set(http::field::content_type, response.content_type);
    res->set(http::field::cache_control, "no-cache, private");
    res->keep_alive(keep_alive_);
    res->body() = std::move(response.body);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !self->keep_alive_) return self->shutdown();
      self->read_request();
    });
  }

  // ---- watch streaming ----

  void start_watch(WatchPlan plan) {
    plan_.emplace(std::move(plan));
    watching_ = true;
    shared_.counters->watches_started++;
    shared_.counters->watches_active++;
    observe(200);
    if (shared_.options->observer)
      watch_observer_ = shared_.options->observer->on_watch_started(plan_->filter.type().plural);
    position_ = plan_->start_after;
    beast::get_lowest_layer(stream_).expires_never();  // write stalls are timed by write_timer_
    pending_.push_back(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\n"
        "Transfer-Encoding: chunked\r\n\r\n");
    if (plan_->final_error) {
      queue_lines({*plan_->final_error});
      finish_watch();
      return;
    }
    initial_events_ = plan_->initial_lines.size();  // written with the first batch
    queue_lines(std::move(plan_->initial_lines));
    watch_timeout_.expires_after(plan_->timeout);
    watch_timeout_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      if (self->plan_->bookmarks) self->queue_lines({bookmark_line(self->plan_->filter.type(), self->position_, false)});
      self->finish_watch();
    });
    if (plan_->bookmarks) arm_bookmark();
    watch_for_hangup();
    pump();
  }

  // A watch only writes; this read notices a client that went away while no events flow.
  void watch_for_hangup() {
    stream_.async_read_some(net::buffer(hangup_probe_), [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->shutdown();
      self->watch_for_hangup();  // stray bytes from the client are ignored
    });
  }

  void arm_bookmark() {
    bookmark_timer_.expires_after(shared_.options->bookmark_interval);
    bookmark_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      self->queue_lines({bookmark_line(self->plan_->filter.type(), self->position_, false)});
      self->arm_bookmark();
      self->pump();
    });
  }

  // Lines become chunks in pending_; pump() writes them.
  void queue_lines(std::vector<std::string> lines) {
    std::string chunk;
    for (auto& line : lines) chunk += line;
    if (chunk.empty()) return;
    pending_.push_back(chunk_header(chunk.size()) + chunk + "\r\n");
  }

  void finish_watch() {
    ending_ = true;
    pending_.push_back("0\r\n\r\n");
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    if (wait_ticket_) shared_.store->cancel_wait(wait_ticket_);
    wait_ticket_ = 0;
    pump();
  }

  void close_slow(const char* why, WatchDrop drop) {
    shared_.counters->slow_watchers_closed++;
    if (watch_observer_) watch_observer_->dropped(drop);
    log::warn("apiserver", std::string("closing a watch: ") + why,
              {{"resource", plan_->filter.type().plural}, {"peer", peer_}});
  }

  // Moves store events into a batch and writes it; waits for the store when idle.
  void pump() {
    if (closed_ || writing_) return;
    std::vector<net::const_buffer> buffers;
    batch_strings_.clear();
    batch_events_.clear();
    batch_scratch_.clear();
    for (auto& p : pending_) batch_strings_.push_back(std::move(p));
    pending_.clear();
    for (auto& s : batch_strings_) buffers.push_back(net::buffer(s));
    if (!ending_) collect_events(buffers);
    if (buffers.empty()) {
      if (ending_) return after_watch();
      if (!wait_ticket_)
        wait_ticket_ = shared_.store->notify_after(position_, [weak = this->weak_from_this()] {
          if (auto self = weak.lock())
            net::post(self->stream_.get_executor(), [self] {
              self->wait_ticket_ = 0;
              self->pump();
            });
        });
      return;
    }
    writing_ = true;
    write_timer_.expires_after(shared_.options->watch_write_timeout);
    write_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || !self->writing_ || self->closed_) return;
      self->close_slow("the client has not read for the whole watch write timeout", WatchDrop::write_timeout);
      self->shutdown();
    });
    net::async_write(stream_, buffers, [self = this->shared_from_this(), events = batch_events_.size() + std::exchange(initial_events_, 0)](
                                           beast::error_code ec, std::size_t) {
      self->writing_ = false;
      self->write_timer_.cancel();
      if (ec) return self->shutdown();
      if (self->watch_observer_ && events) self->watch_observer_->events_sent(events);
      self->pump();
    });
  }

  void collect_events(std::vector<net::const_buffer>& buffers) {
    std::vector<EventPtr> events;
    if (!shared_.store->events_after(position_, max_events_per_batch, events)) {
      close_slow("it fell behind the watch history (it reads too slowly); sending 410 Expired",
                 WatchDrop::fell_behind);
      auto line = error_line(ApiError::expired("too old resource version: " + std::to_string(position_) + " (" +
                                               std::to_string(shared_.store->compacted_through() + 1) +
                                               "): the watcher fell behind the server's watch history"));
      batch_strings_.push_back(chunk_header(line.size()) + line + "\r\n");
      buffers.push_back(net::buffer(batch_strings_.back()));
      ending_ = true;
      batch_strings_.push_back("0\r\n\r\n");
      buffers.push_back(net::buffer(batch_strings_.back()));
      return;
    }
    std::size_t bytes = 0;
    std::size_t header_slot = 0;
    for (const auto& event : events) {
      position_ = event->resource_version;
      const std::string* line = line_for(*event, plan_->filter, batch_scratch_);
      if (!line) continue;
      if (bytes == 0) {
        batch_strings_.emplace_back();  // the chunk header, sized below
        header_slot = buffers.size();
        buffers.emplace_back();
      }
      buffers.push_back(net::buffer(*line));
      bytes += line->size();
      batch_events_.push_back(event);  // keeps event->line alive while it is written
      if (bytes >= max_batch_bytes) break;
    }
    if (bytes == 0) return;
    batch_strings_.back() = chunk_header(bytes);
    buffers[header_slot] = net::buffer(batch_strings_.back());
    static const std::string crlf = "\r\n";
    buffers.push_back(net::buffer(crlf));
  }

  // The connection ends with the watch: the hang-up probe still owns the read side.
  void after_watch() { shutdown(); }

  Stream stream_;
  const Shared& shared_;
  SessionRegistry& registry_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  bool closed_ = false;

  // watch state (only while watching_)
  bool watching_ = false;
  bool ending_ = false;     // the terminating chunk is queued
  bool writing_ = false;    // one async_write in flight at most: the per-watcher memory bound
  char hangup_probe_[64];
  std::optional<WatchPlan> plan_;
  std::uint64_t position_ = 0;         // RV of the last store event taken from the history
  std::uint64_t wait_ticket_ = 0;      // store wake-up registration, 0 = none
  std::vector<std::string> pending_;   // raw bytes queued for the next write
  std::deque<std::string> batch_strings_;  // owned bytes of the write in flight (deque: stable)
  std::deque<std::string> batch_scratch_;  // lines rendered for this watcher only
  std::vector<EventPtr> batch_events_;     // shared lines of the write in flight
  // For ServerOptions::observer: the request being answered, and the open watch's sink.
  std::chrono::steady_clock::time_point request_started_;
  std::string observed_method_;
  std::string observed_target_;
  std::unique_ptr<WatchObserver> watch_observer_;
  std::size_t initial_events_ = 0;  // the initial ADDED lines queued in pending_, not yet counted
  net::steady_timer watch_timeout_;
  net::steady_timer bookmark_timer_;
  net::steady_timer write_timer_;
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  ResourceRegistry registry;
  Store store;
  Api api;
  std::unique_ptr<storage::Persistence> persistence;  // with a data file, between start() and stop()
  Counters counters;
  Shared shared{};
  SessionRegistry sessions;
  net::io_context ioc;
  std::optional<ssl::context> tls;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool running = false;

  Impl(ServerOptions o, ResourceRegistry r)
      : options(std::move(o)), registry(std::move(r)), store(registry, StoreOptions{options.watch_history}),
        api(registry, store) {}

  void accept() {
    acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
      if (!ec) {
        beast::error_code ignored;
        auto remote = socket.remote_endpoint(ignored);
        std::string peer = remote.address().to_string() + ":" + std::to_string(remote.port());
        socket.set_option(tcp::no_delay(true), ignored);
        if (tls)
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls), shared, sessions, peer)
              ->run();
        else
          std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared, sessions, peer)
              ->run();
      }
      accept();
    });
  }
};

Server::Server(ServerOptions options, ResourceRegistry registry)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(registry))) {}

Server::~Server() { (void)stop(); }

Result<std::uint16_t> Server::start() {
  auto& s = *impl_;
  if (s.running) return s.port;
  if (!s.options.data_file.empty() && !s.persistence) {
    auto opened = storage::Persistence::open(
        s.store, s.registry, {s.options.data_file, s.options.wal_compact_bytes, s.options.repair});
    if (!opened) return std::move(opened).error();
    s.persistence = std::move(opened).value();
  }
  if (s.options.tls_cert_file.empty() != s.options.tls_key_file.empty())
    return Error{Errc::server_error, "TLS needs both a certificate and a key file"};
  try {
    if (!s.options.tls_cert_file.empty()) {
      s.tls.emplace(ssl::context::tls_server);
      s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      s.tls->use_certificate_chain_file(s.options.tls_cert_file);
      s.tls->use_private_key_file(s.options.tls_key_file, ssl::context::pem);
    }
  } catch (const std::exception& e) {
    return Error{Errc::server_error, "cannot load the TLS certificate/key (" + s.options.tls_cert_file + ", " +
                                         s.options.tls_key_file + "): " + e.what()};
  }
  beast::error_code ec;
  auto address = net::ip::make_address(s.options.bind_address, ec);
  if (ec) return Error{Errc::server_error, "invalid bind address \"" + s.options.bind_address + "\": " + ec.message()};
  tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.emplace(net::make_strand(s.ioc));  // accept handlers and stop()'s close never overlap
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    s.acceptor.reset();
    return Error{Errc::server_error, "cannot listen on " + s.options.bind_address + ":" +
                                         std::to_string(s.options.port) + ": " + ec.message()};
  }
  s.port = s.acceptor->local_endpoint().port();
  auto host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  s.shared = Shared{&s.options, &s.api, &s.store, &s.counters, host + ":" + std::to_string(s.port),
                    s.persistence.get()};
  s.accept();
  s.work.emplace(s.ioc.get_executor());
  for (unsigned i = 0; i < std::max(1u, s.options.threads); ++i) s.threads.emplace_back([&s] { s.ioc.run(); });
  s.running = true;
  return s.port;
}

Result<void> Server::stop() {
  auto& s = *impl_;
  if (!s.running) return {};
  s.running = false;
  net::post(s.acceptor->get_executor(), [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
  });
  s.sessions.close_all();
  s.work.reset();
  // Sessions finish their handlers and go; give them a moment, then stop the loop.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!s.ioc.stopped() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.acceptor.reset();
  s.ioc.restart();
  if (!s.persistence) return {};
  auto closed = s.persistence->close();  // the final snapshot
  s.persistence.reset();
  return closed;
}

std::uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return std::string(impl_->tls ? "https://" : "http://") + impl_->shared.address;
}

Store& Server::store() { return impl_->store; }

HttpResponse Server::call(const std::string& method, const std::string& target, const std::string& body,
                          const std::string& content_type) {
  HttpRequest request{method, target, content_type, "application/json", body};
  auto reply = impl_->api.handle(request, impl_->shared.address);
  if (auto& p = impl_->persistence; p && !p->wait_durable(p->sync_point()))
    return error_response(not_persisted());
  if (auto* response = std::get_if<HttpResponse>(&reply)) return std::move(*response);
  return error_response(ApiError::bad_request("a watch needs the HTTP endpoint (" + url() + "), not Server::call()"));
}
const ResourceRegistry& Server::registry() const { return impl_->registry; }

ServerStats Server::stats() const {
  const auto& c = impl_->counters;
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
