// runtime/tcp_listen.hpp
//
// listen_on(): opens, binds and listens an Asio TCP acceptor on "address:port" — the one
// sequence every server of ours starts with (the API server, the metrics endpoint).
//
// Contract
//   * `address` is a literal IP (IPv4 or IPv6); port 0 picks a free port (read it back from
//     acceptor.local_endpoint()). SO_REUSEADDR is set, so a restart on the same port works
//     while old connections linger in TIME_WAIT.
//   * On success the acceptor is open and listening, and the parsed address is returned. On
//     failure the acceptor is closed and the error names the address and the cause.
// Threading: call before the acceptor's executor runs. Errors: Errc::server_error. Never throws.
#pragma once

#include <cstdint>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include "runtime/result.hpp"

namespace kinformer {

inline Result<boost::asio::ip::address> listen_on(boost::asio::ip::tcp::acceptor& acceptor,
                                                  const std::string& address, std::uint16_t port) {
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(address, ec);
  if (ec) return Error{Errc::server_error, "invalid bind address \"" + address + "\": " + ec.message()};
  boost::asio::ip::tcp::endpoint endpoint(ip, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    return Error{Errc::server_error,
                 "cannot listen on " + address + ":" + std::to_string(port) + ": " + ec.message()};
  }
  return ip;
}

}  // namespace kinformer
