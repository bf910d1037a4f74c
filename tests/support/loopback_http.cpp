#include "tests/support/loopback_http.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kinformer::testing {

bool send_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    auto n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// 1 = got bytes, 0 = EOF, -1 = error or deadline
int read_some(int fd, std::string& into, Clock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  int ready = ::poll(&p, 1, remaining_ms(deadline));
  if (ready <= 0) return -1;
  char buffer[65536];
  auto n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : -1;
  if (n == 0) return 0;
  into.append(buffer, static_cast<std::size_t>(n));
  return 1;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n...\r\n\r\n" out of `raw`; false until complete.
bool parse_head(std::string& raw, int& status, std::map<std::string, std::string>& headers) {
  auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  std::string head = raw.substr(0, end);
  raw.erase(0, end + 4);
  auto line_end = head.find("\r\n");
  std::string status_line = head.substr(0, line_end);
  auto space = status_line.find(' ');
  status = space == std::string::npos ? 0 : std::atoi(status_line.c_str() + space + 1);
  std::size_t at = line_end == std::string::npos ? head.size() : line_end + 2;
  while (at < head.size()) {
    auto next = head.find("\r\n", at);
    if (next == std::string::npos) next = head.size();
    auto line = head.substr(at, next - at);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      auto value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      headers[lower(line.substr(0, colon))] = value;
    }
    at = next + 2;
  }
  return true;
}

// Moves complete chunks from raw to body; returns true once the last chunk was seen.
bool decode_chunks(std::string& raw, std::string& body) {
  while (true) {
    auto line_end = raw.find("\r\n");
    if (line_end == std::string::npos) return false;
    std::size_t size = std::strtoul(raw.c_str(), nullptr, 16);
    if (size == 0) {
      if (raw.size() < line_end + 4) return false;
      raw.erase(0, line_end + 4);
      return true;
    }
    if (raw.size() < line_end + 2 + size + 2) return false;
    body.append(raw, line_end + 2, size);
    raw.erase(0, line_end + 2 + size + 2);
  }
}

std::string request_text(const std::string& method, const std::string& target, const std::string& body,
                         const std::string& content_type, const Headers& headers, bool close) {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  bool has_accept = std::any_of(headers.begin(), headers.end(), [](const auto& h) { return lower(h.first) == "accept"; });
  if (!has_accept) out += "Accept: application/json\r\n";
  if (close) out += "Connection: close\r\n";
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    out += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  out += "\r\n" + body;
  return out;
}

}  // namespace

int connect_loopback(std::uint16_t port, int receive_buffer) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // before connect, so that the advertised window stays that small
  if (receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& body, const std::string& content_type, const Headers& headers,
                       std::chrono::milliseconds timeout) {
  HttpReply reply;
  auto deadline = Clock::now() + timeout;
  int fd = connect_loopback(port);
  if (fd < 0) {
    reply.error = "connect failed: " + std::string(std::strerror(errno));
    return reply;
  }
  if (!send_all(fd, request_text(method, target, body, content_type, headers, true))) {
    // The server may answer (413) and close before taking the whole body; read what it said.
  }
  std::string raw;
  int status = 0;
  while (!parse_head(raw, status, reply.headers)) {
    if (read_some(fd, raw, deadline) != 1) {
      ::close(fd);
      reply.error = "no complete response header before the deadline or EOF";
      return reply;
    }
  }
  bool chunked = lower(reply.headers["transfer-encoding"]) == "chunked";
  bool sized = reply.headers.count("content-length") != 0;
  std::size_t length = sized ? std::stoul(reply.headers["content-length"]) : 0;
  while (true) {
    if (chunked && decode_chunks(raw, reply.body)) break;
    if (sized && raw.size() >= length) {
      reply.body = raw.substr(0, length);
      break;
    }
    int got = read_some(fd, raw, deadline);
    if (got == 0 && !chunked && !sized) {
      reply.body = raw;
      break;
    }
    if (got != 1) {
      ::close(fd);
      reply.error = "the response body did not complete before the deadline";
      return reply;
    }
  }
  ::close(fd);
  reply.status = status;
  return reply;
}

HttpConnection::HttpConnection(std::uint16_t port) : fd_(connect_loopback(port)) {}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

HttpReply HttpConnection::request(const std::string& method, const std::string& target, const std::string& body,
                                  const std::string& content_type, std::chrono::milliseconds timeout) {
  HttpReply reply;
  auto deadline = Clock::now() + timeout;
  if (fd_ < 0 || !send_all(fd_, request_text(method, target, body, content_type, {}, false))) {
    reply.error = "not connected";
    return reply;
  }
  int status = 0;
  while (!parse_head(raw_, status, reply.headers))
    if (read_some(fd_, raw_, deadline) != 1) {
      reply.error = "no response header";
      return reply;
    }
  std::size_t length = reply.headers.count("content-length") ? std::stoul(reply.headers["content-length"]) : 0;
  while (raw_.size() < length)
    if (read_some(fd_, raw_, deadline) != 1) {
      reply.error = "incomplete response body";
      return reply;
    }
  reply.body = raw_.substr(0, length);
  raw_.erase(0, length);
  reply.status = status;
  return reply;
}

WatchStream::WatchStream(std::uint16_t port, const std::string& target, const Headers& headers,
                         std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  fd_ = connect_loopback(port);
  if (fd_ < 0) {
    ended_ = true;
    return;
  }
  if (!send_all(fd_, request_text("GET", target, "", "", headers, false))) {
    ended_ = true;
    return;
  }
  std::map<std::string, std::string> response_headers;
  while (!parse_head(raw_, status_, response_headers)) {
    if (read_some(fd_, raw_, deadline) != 1) {
      ended_ = true;
      status_ = 0;
      return;
    }
  }
  chunked_ = lower(response_headers["transfer-encoding"]) == "chunked";
  if (status_ != 200) {  // an error Status: read it whole
    std::size_t length = response_headers.count("content-length") ? std::stoul(response_headers["content-length"]) : 0;
    while (raw_.size() < length && read_some(fd_, raw_, deadline) == 1) {
    }
    body_ = raw_;
    ended_ = true;
  }
}

WatchStream::~WatchStream() {
  if (fd_ >= 0) ::close(fd_);
}

void WatchStream::decode() {
  if (!chunked_) {
    body_ += raw_;
    raw_.clear();
    return;
  }
  if (decode_chunks(raw_, body_)) ended_ = true;
}

bool WatchStream::fill(Clock::time_point deadline) {
  if (fd_ < 0) return false;
  int got = read_some(fd_, raw_, deadline);
  if (got == 0) ended_ = true;
  decode();
  return got == 1;
}

std::optional<std::string> WatchStream::next_line(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  decode();
  while (true) {
    auto nl = body_.find('\n');
    if (nl != std::string::npos) {
      std::string line = body_.substr(0, nl);
      body_.erase(0, nl + 1);
      return line;
    }
    if (ended_ || Clock::now() >= deadline) return std::nullopt;
    fill(deadline);
  }
}

std::optional<std::string> WatchStream::bookmark_past(std::uint64_t rv, std::chrono::milliseconds within) {
  const auto end = Clock::now() + within;
  while (Clock::now() < end) {
    auto line = next_line(std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()));
    if (!line) break;
    auto event = nlohmann::json::parse(*line, nullptr, false);
    if (!event.is_object() || event.value("type", "") != "BOOKMARK")
      return "an event that is not a bookmark: " + *line;
    const auto& version = event["object"]["metadata"]["resourceVersion"];
    if (version.is_string() && std::stoull(version.get<std::string>()) >= rv) return std::nullopt;
  }
  return "no bookmark at or past resourceVersion " + std::to_string(rv) + " within " +
         std::to_string(within.count()) + " ms";
}

long WatchStream::drain_count() {
  if (ended_ || fd_ < 0) return -1;
  char buffer[65536];
  auto n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n == 0) {
    ended_ = true;
    return -1;
  }
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
  raw_.append(buffer, static_cast<std::size_t>(n));
  decode();
  long lines = 0;
  std::size_t last = std::string::npos;
  for (std::size_t i = 0; i < body_.size(); ++i)
    if (body_[i] == '\n') {
      ++lines;
      last = i;
    }
  if (last != std::string::npos) body_.erase(0, last + 1);
  return lines;
}

}  // namespace kinformer::testing
