// runtime/http/connection.hpp
//
// Connection: one HTTP/1.1 connection to the API server — plain TCP or TLS — with
// its read buffer, opened asynchronously on the client's io_context (deps-notes.md
// §2). Internal to runtime/http: only client.cpp uses it, so Beast is compiled in
// two translation units.
//
// Contract
//   * open() resolves, connects (within `timeout`) and, for https, does the TLS
//     handshake: SNI set to the server name, the chain checked against the
//     context's CAs and the name checked against the certificate's SAN (an IP
//     address against its IP entries), unless verification is off.
//   * Failures are Errc::connection_failed naming host:port and the reason
//     ("connection refused", "TLS handshake failed: certificate verify failed
//     (hostname mismatch)"); the token is never part of them.
//   * make_tls_context() builds the client context once per Client: CA PEM (or the
//     system's paths), client certificate and key, verification mode.
//   * The read buffer reserves 64 KiB, so one read takes up to 64 KiB of the stream.
//   * The read buffer holds at most max_buffered (1 MiB) that the parser has not used yet
//     (a header, a chunk header and its extensions): past that, a read fails with
//     http::error::buffer_overflow instead of growing, so a server that never ends a line
//     cannot grow the client's memory (Beast's reads size themselves with read_size()).
// Threading: every member runs on the io_context's thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "runtime/http/client_config.hpp"
#include "runtime/result.hpp"

namespace kinformer::http::detail {

namespace net = boost::asio;
namespace beast = boost::beast;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

/// The TLS settings of `config` as an OpenSSL client context.
[[nodiscard]] Result<std::shared_ptr<net::ssl::context>> make_tls_context(const ClientConfig& config);

class Connection {
 public:
  static constexpr std::size_t max_buffered = 1024 * 1024;

  using Opened = std::function<void(Result<std::shared_ptr<Connection>>)>;

  /// Opens a connection; `done` runs on the io_context's thread exactly once.
  static void open(net::io_context& io, std::shared_ptr<net::ssl::context> tls, const ServerAddress& address,
                   std::string server_name, std::chrono::milliseconds timeout, Opened done);

  Connection(net::io_context& io, std::shared_ptr<net::ssl::context> tls);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Calls f(stream) with the PlainStream or the TlsStream.
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), stream_);
  }
  beast::tcp_stream& tcp();
  /// Whether the stream is TLS (false: plain TCP).
  bool is_tls() const { return std::holds_alternative<TlsStream>(stream_); }
  beast::flat_buffer& buffer() { return buffer_; }
  /// Closes the socket at once; pending operations complete with operation_aborted.
  void close();

 private:
  std::shared_ptr<net::ssl::context> tls_;  // outlives stream_'s SSL object
  std::variant<PlainStream, TlsStream> stream_;
  beast::flat_buffer buffer_{max_buffered};
};

}  // namespace kinformer::http::detail
