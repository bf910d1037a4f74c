// tests/support/loopback_http.hpp
//
// A tiny blocking HTTP/1.1 client over POSIX sockets for the API server's tests
// and bench: one request per connection, and watch streams read line by line.
// Deliberately not Beast (a Beast TU costs 5-12 s to compile, deps-notes §7), and
// only for 127.0.0.1.
//
// Contract
//   * Every call takes a deadline; a timeout is reported, never waited out forever.
//   * Bodies may be Content-Length, chunked, or end at EOF; chunked is decoded.
//   * WatchStream::next_line() returns one newline-terminated event (without the
//     '\n'), or nullopt when the stream ended or the deadline passed (ended() tells).
// Threading: one object per thread. Errors: failures set status 0 and error text.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kinformer::testing {

struct HttpReply {
  int status = 0;                              // 0 = no response (see error)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

/// Sends one request (Connection: close) to 127.0.0.1:port and reads the whole reply.
HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& body = "", const std::string& content_type = "application/json",
                       const Headers& headers = {}, std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Connects to 127.0.0.1:port; -1 on failure. For raw-socket tests. receive_buffer > 0
/// keeps the receive window that small (a client that cannot take a large response).
int connect_loopback(std::uint16_t port, int receive_buffer = 0);
/// Sends all of `data` on a raw socket (retrying short sends, no SIGPIPE); false once the
/// peer is gone.
bool send_all(int fd, const std::string& data);

/// One kept-alive connection for many sequential requests (bench: no connect per request).
class HttpConnection {
 public:
  explicit HttpConnection(std::uint16_t port);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  bool connected() const { return fd_ >= 0; }
  /// Content-Length replies only (every non-watch reply of the API server).
  HttpReply request(const std::string& method, const std::string& target, const std::string& body = "",
                    const std::string& content_type = "application/json",
                    std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  int fd_ = -1;
  std::string raw_;
};

class WatchStream {
 public:
  /// Sends GET target and reads the response header (up to `timeout`).
  WatchStream(std::uint16_t port, const std::string& target, const Headers& headers = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  int status() const { return status_; }
  /// The next event line, or nullopt at the end of the stream or at the deadline.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Reads events until a BOOKMARK at or past `rv` arrives, within `within`: nullopt then,
  /// else what happened instead (no event in time, or an event that is not a bookmark).
  std::optional<std::string> bookmark_past(std::uint64_t rv,
                                           std::chrono::milliseconds within = std::chrono::seconds(15));
  /// True once the server ended the stream (last chunk or EOF).
  bool ended() const { return ended_; }
  /// The whole non-event body of a non-200 response.
  const std::string& error_body() const { return body_; }
  int fd() const { return fd_; }

  /// Decodes whatever bytes are available without blocking; counts complete lines.
  /// For the bench: returns the number of new lines, -1 on end/error.
  long drain_count();

 private:
  bool fill(std::chrono::steady_clock::time_point deadline);  // reads more raw bytes
  void decode();                                               // raw_ -> body_ (chunked)

  int fd_ = -1;
  int status_ = 0;
  bool chunked_ = false;
  bool ended_ = false;
  std::string raw_;   // undecoded bytes
  std::string body_;  // decoded bytes not yet returned as lines
};

}  // namespace kinformer::testing
