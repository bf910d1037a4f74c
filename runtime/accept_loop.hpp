// runtime/accept_loop.hpp
//
// AcceptLoop: the accept side every server of ours shares (the API server, the metrics
// endpoint): admission against a ConnectionRegistry, and a back-off when accept() fails
// (issues 11 and 33).
//
//   AcceptLoop loop(acceptor, ioc, registry, [&](tcp::socket s, std::string client) { ... });
//   loop.start();   // on the acceptor's executor, or before the io_context runs
//   ... post to the acceptor's executor: acceptor.close(); loop.stop();
//
// Contract
//   * Each accepted socket is handed to `serve` with its client's IP address, on a strand
//     of its own, once registry.admit(client) agreed; a refused one is closed at once.
//   * accept() failing (EMFILE/ENFILE, ENOBUFS) would fail again at once, since the
//     pending connection stays ready: the loop closes the registry's longest-waiting
//     connection and retries after 5 ms, or, with none to close, waits twice as long
//     each time (runtime/backoff.hpp without jitter: 10 ms up to 500 ms, a warning logged
//     at 500 ms; an accept that succeeds starts it over). So it never spins, and the
//     connections already open go on being served meanwhile.
//   * It stops once the acceptor is closed and stop() cancelled its timer.
// Threading: start(), stop() and every handler run on the acceptor's executor (a strand
//   when the io_context has several threads). Errors: none; failures are logged.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "runtime/backoff.hpp"
#include "runtime/connection_registry.hpp"
#include "runtime/log.hpp"

namespace kinformer {

class AcceptLoop {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using Serve = std::function<void(Socket socket, std::string client)>;

  AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, boost::asio::io_context& ioc, ConnectionRegistry& registry,
             std::string component, Serve serve)
      : acceptor_(acceptor),
        ioc_(ioc),
        registry_(registry),
        component_(std::move(component)),
        serve_(std::move(serve)),
        timer_(acceptor.get_executor()),
        backoff_(BackoffOptions{2 * min_backoff, 2.0, max_backoff, 0.0, std::chrono::hours(24)}, nullptr) {}

  void start() { accept(); }
  void stop() { timer_.cancel(); }

 private:
  static constexpr auto min_backoff = std::chrono::milliseconds(5);
  static constexpr auto max_backoff = std::chrono::milliseconds(500);

  void accept() {
    acceptor_.async_accept(boost::asio::make_strand(ioc_), [this](boost::system::error_code ec, Socket socket) {
      if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (ec) return back_off(ec);
      backoff_.reset();
      boost::system::error_code ignored;
      auto client = socket.remote_endpoint(ignored).address().to_string();
      if (ignored || !registry_.admit(client)) {
        socket.close(ignored);
        return accept();
      }
      serve_(std::move(socket), std::move(client));
      accept();
    });
  }

  void back_off(const boost::system::error_code& ec) {
    const bool freed = registry_.evict_one();
    const auto wait = freed ? std::chrono::milliseconds(min_backoff) : backoff_.next(std::chrono::steady_clock::now());
    if (wait == max_backoff)
      log::warn(component_, "accept failed; retrying",
                {{"error", ec.message()}, {"retry_ms", static_cast<long long>(wait.count())}});
    timer_.expires_after(wait);
    timer_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec || !acceptor_.is_open()) return;
      accept();
    });
  }

  boost::asio::ip::tcp::acceptor& acceptor_;
  boost::asio::io_context& ioc_;
  ConnectionRegistry& registry_;
  const std::string component_;
  const Serve serve_;
  boost::asio::steady_timer timer_;
  Backoff backoff_;  // the waits while no connection can be closed to make room
};

}  // namespace kinformer
