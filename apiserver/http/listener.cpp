// One of the two translation units with Beast/Asio (with http/session.cpp; deps-notes §7).
#include "apiserver/http/listener.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <sys/resource.h>

#include "apiserver/http/session.hpp"
#include "apiserver/server.hpp"
#include "runtime/accept_loop.hpp"
#include "runtime/connection_registry.hpp"
#include "runtime/io_loop.hpp"
#include "runtime/tcp_listen.hpp"

namespace kinformer::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t fd_reserve = 64;  // descriptors kept free for files, the listener, TLS

ConnectionLimits connection_limits(const ServerOptions& options) {
  ConnectionLimits out{options.max_connections, options.max_connections_per_client};
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return out;
  auto usable = limit.rlim_cur > 2 * fd_reserve ? limit.rlim_cur - fd_reserve : limit.rlim_cur / 2;
  out.max_total = std::max<std::size_t>(1, std::min<std::size_t>(options.max_connections, usable));
  return out;
}

}  // namespace

struct Listener::Impl {
  ServerCounters counters;
  SessionContext context;
  std::optional<net::thread_pool> handlers;  // with storage threads, between start() and stop()
  ConnectionRegistry sessions;
  net::io_context ioc;
  std::optional<ssl::context> tls;
  std::optional<tcp::acceptor> acceptor;
  std::optional<AcceptLoop> accept_loop;  // on the acceptor's strand, between start() and stop()
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;

  Result<void> load_tls(const ServerOptions& options) {
    if (options.tls_cert_file.empty() != options.tls_key_file.empty())
      return Error{Errc::server_error, "TLS needs both a certificate and a key file"};
    if (!options.client_ca_file.empty() && options.tls_cert_file.empty())
      return Error{Errc::server_error, "client certificates (--client-ca) need TLS (--tls-cert and --tls-key)"};
    try {
      if (!options.tls_cert_file.empty()) {
        tls.emplace(ssl::context::tls_server);
        tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
        tls->use_certificate_chain_file(options.tls_cert_file);
        tls->use_private_key_file(options.tls_key_file, ssl::context::pem);
        if (!options.client_ca_file.empty()) {
          // Ask for a certificate and verify it when sent; clients without one may still
          // authenticate with the bearer token (kube-apiserver's --client-ca-file).
          tls->load_verify_file(options.client_ca_file);
          tls->set_verify_mode(ssl::verify_peer);
        }
      }
    } catch (const std::exception& e) {
      // Paths only: never the key's content.
      return Error{Errc::server_error, "cannot load the TLS files (" + options.tls_cert_file + ", " +
                                           options.tls_key_file + ", client CA \"" + options.client_ca_file +
                                           "\"): " + e.what()};
    }
    return {};
  }
};

Listener::Listener() : impl_(std::make_unique<Impl>()) {}

Listener::~Listener() { stop(); }

Result<std::uint16_t> Listener::start(SessionContext context, unsigned storage_threads) {
  auto& s = *impl_;
  const ServerOptions& options = *context.options;
  if (auto loaded = s.load_tls(options); !loaded) return loaded.error();
  s.acceptor.emplace(net::make_strand(s.ioc));  // accept handlers and stop()'s close never overlap
  auto address = listen_on(*s.acceptor, options.bind_address, options.port);
  if (!address) {
    s.acceptor.reset();
    return address.error();
  }
  const auto port = s.acceptor->local_endpoint().port();
  auto host = address->is_v6() ? "[" + address->to_string() + "]" : address->to_string();
  if (storage_threads > 0) s.handlers.emplace(storage_threads);
  s.context = std::move(context);
  s.context.counters = &s.counters;
  s.context.address = host + ":" + std::to_string(port);
  s.context.handlers = s.handlers ? &*s.handlers : nullptr;
  s.sessions.set_limits(connection_limits(options));
  s.accept_loop.emplace(*s.acceptor, s.ioc, s.sessions, "apiserver", [&s](tcp::socket socket, std::string client) {
    start_session(std::move(socket), s.tls ? &*s.tls : nullptr, s.context, s.sessions, std::move(client));
  });
  s.accept_loop->start();
  s.work.emplace(s.ioc.get_executor());
  for (unsigned i = 0; i < std::max(1u, options.threads); ++i)
    s.threads.emplace_back([&s] { run_io_loop(s.ioc, "apiserver"); });
  return port;
}

void Listener::stop() {
  auto& s = *impl_;
  if (!s.acceptor) return;
  net::post(s.acceptor->get_executor(), [&s] {
    boost::system::error_code ignored;
    s.acceptor->close(ignored);
    s.accept_loop->stop();
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
  if (s.handlers) {
    s.handlers->join();  // the requests waiting for etcd end within its request timeout
    s.handlers.reset();
  }
  s.accept_loop.reset();
  s.acceptor.reset();
  s.ioc.restart();
}

const std::string& Listener::address() const { return impl_->context.address; }
bool Listener::tls() const { return impl_->tls.has_value(); }
const ServerCounters& Listener::counters() const { return impl_->counters; }

}  // namespace kinformer::apiserver
