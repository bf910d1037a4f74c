#include "runtime/http/connection.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>

namespace kinformer::http::detail {
namespace {

using tcp = net::ip::tcp;

std::string where(const ServerAddress& address) { return address.host + ":" + address.port; }

}  // namespace

Result<std::shared_ptr<net::ssl::context>> make_tls_context(const ClientConfig& config) {
  auto context = std::make_shared<net::ssl::context>(net::ssl::context::tls_client);
  boost::system::error_code ec;
  if (config.insecure_skip_tls_verify) {
    context->set_verify_mode(net::ssl::verify_none);
  } else {
    context->set_verify_mode(net::ssl::verify_peer);
    if (!config.ca_pem.empty()) {
      context->add_certificate_authority(net::buffer(config.ca_pem), ec);
      if (ec)
        return Error{Errc::connection_failed,
                     "the certificate authority is not a readable PEM certificate: " + ec.message()};
    } else {
      context->set_default_verify_paths(ec);
      if (ec)
        return Error{Errc::connection_failed, "cannot load the system's CA certificates: " + ec.message()};
    }
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    if (config.client_cert_pem.empty() || config.client_key_pem.empty())
      return Error{Errc::connection_failed, "a client certificate needs both the certificate and its key"};
    context->use_certificate_chain(net::buffer(config.client_cert_pem), ec);
    if (ec)
      return Error{Errc::connection_failed,
                   "the client certificate is not a readable PEM certificate: " + ec.message()};
    context->use_private_key(net::buffer(config.client_key_pem), net::ssl::context::pem, ec);
    if (ec)
      return Error{Errc::connection_failed, "the client key is not a readable PEM key: " + ec.message()};
  }
  return context;
}

Connection::Connection(net::io_context& io, std::shared_ptr<net::ssl::context> tls)
    : tls_(std::move(tls)),
      stream_(
          tls_ ? std::variant<PlainStream, TlsStream>(std::in_place_type<TlsStream>, io.get_executor(), *tls_)
               : std::variant<PlainStream, TlsStream>(std::in_place_type<PlainStream>, io.get_executor())) {
  buffer_.reserve(64 * 1024);
}

beast::tcp_stream& Connection::tcp() {
  return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); }, stream_);
}

void Connection::close() {
  boost::system::error_code ignored;
  tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  tcp().socket().close(ignored);
}

void Connection::open(net::io_context& io, std::shared_ptr<net::ssl::context> tls,
                      const ServerAddress& address, std::string server_name,
                      std::chrono::milliseconds timeout, Opened done) {
  auto connection = std::make_shared<Connection>(io, tls);
  auto resolver = std::make_shared<tcp::resolver>(io);
  auto shared_done = std::make_shared<Opened>(std::move(done));
  resolver->async_resolve(
      address.host, address.port,
      [resolver, address, server_name = std::move(server_name), timeout, shared_done, connection](
          const boost::system::error_code& ec, tcp::resolver::results_type results) mutable {
        if (ec) {
          (*shared_done)(
              Error{Errc::connection_failed, "cannot resolve " + where(address) + ": " + ec.message()});
          return;
        }
        connection->tcp().expires_after(timeout);
        connection->tcp().async_connect(results, [address, server_name, shared_done, connection](
                                                     const boost::system::error_code& ec,
                                                     const tcp::endpoint&) mutable {
          if (ec) {
            (*shared_done)(
                Error{Errc::connection_failed,
                      "cannot connect to " + where(address) + ": " +
                          (ec == beast::error::timeout ? std::string("timed out") : ec.message())});
            return;
          }
          connection->tcp().socket().set_option(tcp::no_delay(true));
          auto* tls_stream = std::get_if<TlsStream>(&connection->stream_);
          if (!tls_stream) {
            connection->tcp().expires_never();
            (*shared_done)(std::shared_ptr<Connection>(connection));
            return;
          }
          SSL* ssl = tls_stream->native_handle();
          SSL_set_tlsext_host_name(ssl, server_name.c_str());
          X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
          boost::system::error_code not_ip;
          net::ip::make_address(server_name, not_ip);
          if (!not_ip)
            X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str());
          else
            X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), 0);
          tls_stream->async_handshake(
              net::ssl::stream_base::client,
              [address, shared_done, connection, tls_stream](const boost::system::error_code& ec) mutable {
                if (ec) {
                  std::string reason = ec == beast::error::timeout ? std::string("timed out") : ec.message();
                  const long verify = SSL_get_verify_result(tls_stream->native_handle());
                  if (verify != X509_V_OK)
                    reason += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
                  (*shared_done)(Error{Errc::connection_failed,
                                       "TLS handshake with " + where(address) + " failed: " + reason});
                  return;
                }
                connection->tcp().expires_never();
                (*shared_done)(std::shared_ptr<Connection>(connection));
              });
        });
      });
}

}  // namespace kinformer::http::detail
