// runtime/metrics_server.cpp: runtime's only Beast translation unit (deps-notes §7).
#include "runtime/metrics_server.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/accept_loop.hpp"
#include "runtime/connection_registry.hpp"
#include "runtime/framed_read.hpp"
#include "runtime/http_framing.hpp"
#include "runtime/io_loop.hpp"
#include "runtime/tcp_listen.hpp"

namespace kinformer {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t max_request_bytes = 8 * 1024;
constexpr auto idle_timeout = std::chrono::seconds(30);

struct Answer {
  bhttp::status status;
  std::string content_type;
  std::string body;
};

// One connection: read a request, answer it, repeat while keep-alive. While it reads
// a request it is partial: at a connection cap it can make room (connection_registry.hpp).
class Session : public Connection, public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const MetricsServerOptions& options, MetricsRegistry& registry,
          ConnectionRegistry& connections)
      : stream_(std::move(socket)), options_(options), registry_(registry), connections_(connections) {}
  ~Session() override { connections_.remove(this); }

  void start(const std::string& client) {
    connections_.add(this, shared_from_this(), client);
    read();
  }

  void close() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->shutdown(); });
  }

 private:
  void read() {
    connections_.set_phase(this, ConnectionRegistry::Phase::partial);
    parser_.emplace();
    parser_->header_limit(max_request_bytes);
    parser_->body_limit(max_request_bytes);
    stream_.expires_after(idle_timeout);
    async_read_message(stream_, buffer_, *parser_,
                       [self = shared_from_this()](beast::error_code ec) { self->on_read(ec); });
  }

  void shutdown() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  void on_read(beast::error_code ec) {
    connections_.set_phase(this, ConnectionRegistry::Phase::busy);
    // buffer_overflow: a chunked trailer larger than the read buffer (http_framing.hpp).
    if (ec == bhttp::error::header_limit || ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow)
      return send({bhttp::status::payload_too_large, "text/plain", "request too large\n"}, false);
    if (ec) return shutdown();  // end of stream, timeout, reset, malformed: nothing to answer
    const auto& request = parser_->get();
    if (!transfer_encoding_supported(request))
      return send({bhttp::status::not_implemented, "text/plain", "only the chunked transfer encoding\n"}, false);
    send(answer(request), request.keep_alive());
  }

  Answer answer(const bhttp::request<bhttp::string_body>& request) const {
    if (request.method() != bhttp::verb::get && request.method() != bhttp::verb::head)
      return {bhttp::status::method_not_allowed, "text/plain", "only GET\n"};
    auto target = std::string_view(request.target().data(), request.target().size());
    target = target.substr(0, target.find('?'));  // Prometheus may add query parameters
    if (target == "/metrics")
      return {bhttp::status::ok, "text/plain; version=0.0.4; charset=utf-8", registry_.render()};
    if (target == "/healthz") return {bhttp::status::ok, "text/plain", "ok\n"};
    if (target == "/readyz") {
      try {
        if (options_.ready && !options_.ready())
          return {bhttp::status::service_unavailable, "text/plain", "not ready\n"};
      } catch (const std::exception& e) {
        return {bhttp::status::service_unavailable, "text/plain",
                std::string("not ready: ") + e.what() + "\n"};
      }
      auto waiting = registry_.not_ready();  // e.g. informers that have not synced
      if (waiting.empty()) return {bhttp::status::ok, "text/plain", "ok\n"};
      std::string body = "not ready:";
      for (const auto& name : waiting) body += "\n  " + name;
      return {bhttp::status::service_unavailable, "text/plain", body + "\n"};
    }
    return {bhttp::status::not_found, "text/plain", "not found: try /metrics, /healthz or /readyz\n"};
  }

  void send(Answer answer, bool keep_alive) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(answer.status, 11);
    res->set(bhttp::field::content_type, answer.content_type);
    res->keep_alive(keep_alive);
    res->body() = std::move(answer.body);
    res->prepare_payload();
    bhttp::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !res->keep_alive()) return self->shutdown();
      self->read();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{2 * max_request_bytes};  // bounds the unparsed bytes: header and trailer
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  const MetricsServerOptions& options_;
  MetricsRegistry& registry_;
  ConnectionRegistry& connections_;
};

}  // namespace

struct MetricsServer::Impl {
  MetricsServerOptions options;
  MetricsRegistry& registry;
  net::io_context ioc{1};
  std::optional<tcp::acceptor> acceptor;
  std::optional<AcceptLoop> accept_loop;  // between start() and stop()
  ConnectionRegistry sessions;
  std::thread thread;
  std::atomic<std::uint16_t> port{0};
  bool running = false;

  explicit Impl(MetricsServerOptions o)
      : options(std::move(o)),
        registry(options.registry ? *options.registry : default_registry()),
        sessions({options.max_connections, options.max_connections_per_client}) {}

  void serve(tcp::socket socket, const std::string& client) {
    std::make_shared<Session>(std::move(socket), options, registry, sessions)->start(client);
  }
};

MetricsServer::MetricsServer(MetricsServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

MetricsServer::~MetricsServer() { stop(); }

Result<std::uint16_t> MetricsServer::start() {
  auto& s = *impl_;
  if (s.running) return s.port.load();
  s.acceptor.emplace(s.ioc);
  if (auto listening = listen_on(*s.acceptor, s.options.bind_address, s.options.port); !listening) {
    s.acceptor.reset();
    return Error{Errc::server_error, "metrics: " + listening.error().message};
  }
  s.port = s.acceptor->local_endpoint().port();
  s.ioc.restart();
  s.accept_loop.emplace(*s.acceptor, s.ioc, s.sessions, "metrics",
                        [&s](tcp::socket socket, std::string client) { s.serve(std::move(socket), client); });
  s.accept_loop->start();
  s.thread = std::thread([&s] { run_io_loop(s.ioc, "metrics"); });
  s.running = true;
  return s.port.load();
}

void MetricsServer::stop() {
  auto& s = *impl_;
  if (!s.running) return;
  // Closing on the I/O thread: the acceptor and the sessions' streams are not thread-safe.
  net::post(s.ioc, [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
    s.accept_loop->stop();
  });
  s.sessions.close_all();
  s.thread.join();  // run() returns once the closed sessions' handlers have finished
  s.accept_loop.reset();
  s.acceptor.reset();
  s.running = false;
}

std::uint16_t MetricsServer::port() const { return impl_->port.load(); }

}  // namespace kinformer
