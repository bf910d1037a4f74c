#include "tests/support/raw_http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace kinformer::testing {
namespace {

// Reads or writes through TLS when `ssl` is set, else the plain socket.
struct Io {
  int fd;
  SSL* ssl;
  long read(char* buffer, int size) const {
    return ssl ? SSL_read(ssl, buffer, size) : ::recv(fd, buffer, size, 0);
  }
  bool write(const std::string& bytes) const {
    std::size_t done = 0;
    while (done < bytes.size()) {
      long n = ssl ? SSL_write(ssl, bytes.data() + done, static_cast<int>(bytes.size() - done))
                   : ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
};

}  // namespace

RawHttpServer::RawHttpServer(Script script, RawTls tls) : script_(std::move(script)), tls_(std::move(tls)) {
  if (!tls_.cert_file.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate_chain_file(ctx, tls_.cert_file.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, tls_.key_file.c_str(), SSL_FILETYPE_PEM);
    if (!tls_.client_ca_file.empty()) {
      SSL_CTX_load_verify_locations(ctx, tls_.client_ca_file.c_str(), nullptr);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    ssl_ctx_ = ctx;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::listen(listen_fd_, 64);
  socklen_t size = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

RawHttpServer::~RawHttpServer() {
  stopping_ = true;
  acceptor_.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections.swap(connections_);
  }
  for (auto& t : connections) t.join();
  ::close(listen_fd_);
  if (ssl_ctx_) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

std::string RawHttpServer::url() const {
  return std::string(ssl_ctx_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<std::string> RawHttpServer::heads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heads_;
}

void RawHttpServer::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void RawHttpServer::serve(int fd) {
  // A client that closes while a part is being written must end this connection, not the
  // test process: SIGPIPE from a write goes to the writing thread, and SSL_write, unlike
  // send(MSG_NOSIGNAL), has no flag to stop it.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  SSL* ssl = nullptr;
  if (ssl_ctx_) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      ++failed_handshakes_;
      SSL_free(ssl);
      ::close(fd);
      return;
    }
  }
  Io io{fd, ssl};
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    long n = io.read(buffer, sizeof buffer);
    if (n <= 0) break;
    head.append(buffer, static_cast<std::size_t>(n));
  }
  if (head.find("\r\n\r\n") != std::string::npos) {
    const std::size_t number = ++requests_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      heads_.push_back(head);
    }
    for (const auto& part : script_(head, number)) {
      if (part.hold) {
        while (!stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        break;
      }
      if (!io.write(part.bytes)) break;
      ++parts_written_;
      std::this_thread::sleep_for(part.then);
    }
  }
  if (ssl) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  ::close(fd);
}

std::string RawHttpServer::chunked_head(int status) {
  return "HTTP/1.1 " + std::to_string(status) +
         " OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
}

std::string RawHttpServer::chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

std::string RawHttpServer::response(int status, const std::string& body, const std::string& extra_headers) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + extra_headers + "\r\n" + body;
}

}  // namespace kinformer::testing
