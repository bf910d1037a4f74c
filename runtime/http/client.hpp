// runtime/http/client.hpp
//
// Client: the HTTP/1.1 client of one API server on its own Boost.Asio io_context
// thread, named "kinformer.io" (never a CAF scheduler thread; it joins the home CPU,
// runtime/home_cpu.hpp): plain requests (list, get, create, update,
// delete) over a small pool of kept-alive connections, and streaming responses
// (watches) on a connection of their own with flow control (deps-notes.md §2).
//
// Contract
//   * request() answers `done` exactly once on the I/O thread: the response (any
//     status; the caller classifies it, api_status.hpp) or Errc::connection_failed.
//     A kept-alive connection the server closed meanwhile is retried once on a
//     fresh one. Responses up to config.max_list_bytes; the body has simdjson's
//     padding reserved past its end.
//   * Every request carries "Authorization: Bearer <token>" when a token is set;
//     the token appears in no error and no log line.
//   * stream() opens a connection of its own, sends a GET (or the given request) and, on a 200, hands the
//     body to the sink as it arrives: on_body() for each piece of a read, then
//     on_read() once per socket read (up to 64 KiB). A non-200 answer is read
//     whole (bounded) and ends the stream with its Error. on_end() runs exactly
//     once unless on_read() returned false or cancel() came first.
//   * StreamHandle::pause() stops reading the socket after the current read (TCP
//     then pushes back on the server); resume() calls the sink's on_resume() and
//     reads again. cancel() closes the socket; no sink call starts after it runs on
//     the I/O thread (callers needing "none after return" guard in the sink).
//   * The destructor stops the I/O thread and joins it: callbacks not yet run are
//     dropped. It must not run on the I/O thread.
// Threading: all public members may be called from any thread.
// Errors: Result / Error values; nothing throws out of the I/O thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/http/client_config.hpp"
#include "runtime/result.hpp"

namespace kinformer::http {

struct Request {
  std::string method = "GET";
  std::string target;  // path and query, without the server's base path
  std::string body;
  std::string content_type = "application/json";
};

struct Response {
  unsigned status = 0;
  std::string body;  // capacity >= size + simdjson::SIMDJSON_PADDING
  std::string retry_after;
};

/// What a stream's body goes to; called on the I/O thread only.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void on_body(std::string_view piece) = 0;
  /// One socket read ended; false ends the stream here (the sink has reported why).
  virtual bool on_read() = 0;
  /// resume() was called: deliver what was held back.
  virtual void on_resume() = 0;
  /// The stream ended: cleanly (the body's end) or with the Error.
  virtual void on_end(Result<void> result) = 0;
};

class StreamHandle {
 public:
  virtual ~StreamHandle() = default;
  virtual void pause() = 0;
  virtual void resume() = 0;
  virtual void cancel() = 0;
};

class Client : public std::enable_shared_from_this<Client> {
 public:
  /// Errors: a bad server URL or unreadable TLS material (Errc::server_error / connection_failed).
  [[nodiscard]] static Result<std::shared_ptr<Client>> create(ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void request(Request request, std::function<void(Result<Response>)> done);
  /// request() that blocks for its answer; never call it on the I/O thread.
  Result<Response> request_sync(Request request);
  /// Opens a stream for GET `target`; the body's read stops after `deadline`
  /// (0 = never), which ends the stream with Errc::connection_failed.
  std::shared_ptr<StreamHandle> stream(std::string target, std::shared_ptr<StreamSink> sink,
                                       std::chrono::milliseconds deadline = std::chrono::milliseconds(0));
  /// stream() for any method with a body (etcd's v3 watch is a POST whose answer streams).
  std::shared_ptr<StreamHandle> stream(Request request, std::shared_ptr<StreamSink> sink,
                                       std::chrono::milliseconds deadline = std::chrono::milliseconds(0));

  const ClientConfig& config() const;
  /// Connections opened so far (a test sees keep-alive reuse in it).
  std::uint64_t connections_opened() const;

  struct Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinformer::http
