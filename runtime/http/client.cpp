#include "runtime/http/client.hpp"

#include <pthread.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http.hpp>
#include <future>
#include <limits>
#include <thread>
#include <vector>

#include "runtime/http/api_status.hpp"
#include "runtime/http/connection.hpp"
#include "runtime/framed_read.hpp"
#include "runtime/home_cpu.hpp"

namespace kinformer::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using detail::Connection;

constexpr std::size_t padding = 64;  // simdjson::SIMDJSON_PADDING, without its header here
constexpr std::size_t max_error_body = 64 * 1024;

// A string body whose reader leaves simdjson's padding after the bytes: Beast's
// string_body reserves exactly Content-Length, so padding it after the read
// reallocated and copied every list page (about 10 % of a 150k-pod list's CPU).
struct PaddedStringBody {
  using value_type = std::string;

  class reader {
   public:
    template <bool is_request, class Fields>
    reader(bhttp::header<is_request, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
      ec = {};
      if (!length) return;
      if (*length > body_.max_size() - padding) {
        ec = bhttp::error::buffer_overflow;
        return;
      }
      body_.reserve(static_cast<std::size_t>(*length) + padding);
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      const std::size_t size = net::buffer_size(buffers);
      if (size > body_.max_size() - padding - body_.size()) {
        ec = bhttp::error::buffer_overflow;
        return 0;
      }
      for (auto piece : beast::buffers_range_ref(buffers))
        body_.append(static_cast<const char*>(piece.data()), piece.size());
      ec = {};
      return size;
    }

    // Only a body without Content-Length (chunked) can end without its padding.
    void finish(beast::error_code& ec) {
      ec = {};
      if (body_.capacity() < body_.size() + padding) body_.reserve(body_.size() + padding);
    }

   private:
    value_type& body_;
  };
};

std::string describe_read_error(const beast::error_code& ec) {
  if (ec == beast::error::timeout) return "timed out";
  if (ec == bhttp::error::partial_message) return "the stream was cut off inside a chunk (truncated)";
  if (ec == net::error::eof || ec == bhttp::error::end_of_stream) return "the server closed the connection";
  if (ec == bhttp::error::buffer_overflow)
    return "the server sent over " + std::to_string(Connection::max_buffered >> 20) +
           " MiB the parser could not use (a header or chunk header without its end)";
  return ec.message();
}

}  // namespace

struct Client::Impl {
  explicit Impl(ClientConfig c, ServerAddress a, std::shared_ptr<net::ssl::context> t)
      : config(std::move(c)),
        address(std::move(a)),
        tls(std::move(t)),
        token(config.token, config.token_file),
        server_name(config.tls_server_name.empty() ? address.host : config.tls_server_name) {}

  struct RequestOp {
    bhttp::request<bhttp::string_body> request;
    std::unique_ptr<bhttp::response_parser<PaddedStringBody>> parser;
    std::function<void(Result<Response>)> done;
    bool retried = false;
  };

  struct StreamOp {
    Impl* impl = nullptr;
    std::shared_ptr<StreamSink> sink;
    std::shared_ptr<Connection> connection;
    bhttp::request<bhttp::string_body> request;  // a GET, or a POST with a body (etcd watch)
    std::chrono::milliseconds deadline{0};
    // The body's deadline, one wait for the whole stream (I/O thread). Not basic_stream's
    // expiry: that one starts and cancels a timer wait around every read, one
    // timerfd_settime() per watch event (issue 29).
    std::unique_ptr<net::steady_timer> deadline_timer;
    bool ok_status = false;
    std::string error_body;
    // Declared before the parser: Beast keeps a pointer to it.
    std::function<std::size_t(std::uint64_t, beast::string_view, beast::error_code&)> on_chunk;
    std::unique_ptr<bhttp::response_parser<bhttp::string_body>> parser;
    BufferedPut put_body;  // the body's bytes into `parser`
    std::atomic<bool> paused{false};
    bool parked = false;     // I/O thread: paused between reads
    bool cancelled = false;  // I/O thread
    bool ended = false;      // I/O thread: the sink got its end
  };

  class Handle final : public StreamHandle {
   public:
    Handle(std::shared_ptr<Client> client, std::shared_ptr<StreamOp> op)
        : client_(std::move(client)), op_(std::move(op)) {}
    ~Handle() override { cancel(); }
    void pause() override { op_->paused = true; }
    void resume() override {
      op_->paused = false;
      auto op = op_;
      net::post(client_->impl_->io, [op] { op->impl->resumed(op); });
    }
    void cancel() override {
      auto op = op_;
      net::post(client_->impl_->io, [op] {
        op->cancelled = true;
        if (op->deadline_timer) op->deadline_timer->cancel();
        if (op->connection) op->connection->close();
      });
    }

   private:
    std::shared_ptr<Client> client_;  // keeps the I/O thread up while the stream lives
    std::shared_ptr<StreamOp> op_;
  };

  // The one place a Request becomes the message on the wire, for requests and streams alike.
  void build(bhttp::request<bhttp::string_body>& out, Request&& in) {
    out.method_string(in.method);
    out.target(address.base_path + in.target);
    out.version(11);
    out.keep_alive(true);
    out.set(bhttp::field::host, address.host + ":" + address.port);
    out.set(bhttp::field::user_agent, "kinformer/0.1");
    out.set(bhttp::field::accept, "application/json");
    const std::string bearer = token.current();
    if (!bearer.empty()) out.set(bhttp::field::authorization, "Bearer " + bearer);
    if (!in.body.empty() || in.method != "GET") {
      out.set(bhttp::field::content_type, in.content_type);
      out.body() = std::move(in.body);
      out.prepare_payload();
    }
  }

  void open(Connection::Opened done) {
    ++opened;
    Connection::open(io, tls, address, server_name, config.connect_timeout, std::move(done));
  }

  // -- plain requests over kept-alive connections --
  void start(std::shared_ptr<RequestOp> op) {
    if (!idle.empty()) {
      auto connection = std::move(idle.back());
      idle.pop_back();
      return send(std::move(op), std::move(connection), true);
    }
    open([this, op](Result<std::shared_ptr<Connection>> connection) {
      if (!connection) return op->done(std::move(connection).error());
      send(op, std::move(connection).value(), false);
    });
  }

  void send(std::shared_ptr<RequestOp> op, std::shared_ptr<Connection> connection, bool reused) {
    op->parser = std::make_unique<bhttp::response_parser<PaddedStringBody>>();
    op->parser->body_limit(config.max_list_bytes);
    connection->tcp().expires_after(config.request_timeout);
    connection->visit([&](auto& stream) {
      bhttp::async_write(
          stream, op->request, [this, op, connection, reused](beast::error_code ec, std::size_t) {
            if (ec) return failed(op, connection, reused, ec);
            connection->visit([&](auto& s) {
              async_read_message(s, connection->buffer(), *op->parser,
                                 [this, op, connection, reused](beast::error_code ec) {
                                   if (ec) return failed(op, connection, reused, ec);
                                   received(op, connection);
                                 });
            });
          });
    });
  }

  void received(const std::shared_ptr<RequestOp>& op, const std::shared_ptr<Connection>& connection) {
    connection->tcp().expires_never();
    auto& message = op->parser->get();
    Response response;
    response.status = message.result_int();
    response.retry_after = std::string(message[bhttp::field::retry_after]);
    response.body = std::move(message.body());  // padded by its reader
    if (message.keep_alive() && idle.size() < config.max_idle_connections)
      idle.push_back(connection);
    else
      connection->close();
    op->done(std::move(response));
  }

  void failed(const std::shared_ptr<RequestOp>& op, const std::shared_ptr<Connection>& connection,
              bool reused, const beast::error_code& ec) {
    connection->close();
    if (reused && !op->retried && ec != beast::error::timeout) {  // the server closed an idle connection
      op->retried = true;
      open([this, op](Result<std::shared_ptr<Connection>> fresh) {
        if (!fresh) return op->done(std::move(fresh).error());
        send(op, std::move(fresh).value(), false);
      });
      return;
    }
    std::string target(op->request.target());
    target = target.substr(0, target.find('?'));
    op->done(Error{Errc::connection_failed, std::string(op->request.method_string()) + " " + target + " on " +
                                                address.host + ":" + address.port +
                                                " failed: " + describe_read_error(ec)});
  }

  // -- streams --
  void start_stream(std::shared_ptr<StreamOp> op) {
    open([this, op](Result<std::shared_ptr<Connection>> connection) {
      if (op->cancelled) return;
      if (!connection) return end(op, std::move(connection).error());
      op->connection = std::move(connection).value();
      auto* raw = op.get();
      op->on_chunk = [raw](std::uint64_t, beast::string_view piece, beast::error_code&) -> std::size_t {
        if (raw->ok_status)
          raw->sink->on_body(std::string_view(piece.data(), piece.size()));
        else if (raw->error_body.size() < max_error_body)
          raw->error_body.append(piece.data(),
                                 std::min(piece.size(), max_error_body - raw->error_body.size()));
        return piece.size();
      };
      op->parser = std::make_unique<bhttp::response_parser<bhttp::string_body>>();
      op->parser->body_limit(std::numeric_limits<std::uint64_t>::max());  // a watch's body never ends by size
      op->parser->on_chunk_body(op->on_chunk);
      op->connection->tcp().expires_after(config.request_timeout);
      op->connection->visit([&](auto& stream) {
        bhttp::async_write(stream, op->request, [this, op](beast::error_code ec, std::size_t) {
          if (op->cancelled) return;
          if (ec)
            return end(op,
                       Error{Errc::connection_failed, "watch request failed: " + describe_read_error(ec)});
          op->connection->visit([&](auto& s) {
            bhttp::async_read_header(s, op->connection->buffer(), *op->parser,
                                     [this, op](beast::error_code ec, std::size_t) { got_header(op, ec); });
          });
        });
      });
    });
  }

  void got_header(const std::shared_ptr<StreamOp>& op, const beast::error_code& ec) {
    if (op->cancelled) return;
    if (ec)
      return end(op, Error{Errc::connection_failed, "watch response failed: " + describe_read_error(ec)});
    const unsigned status = op->parser->get().result_int();
    if (status == 200) {
      op->ok_status = true;
      op->connection->tcp().expires_never();
      if (op->deadline.count() > 0) {
        op->deadline_timer = std::make_unique<net::steady_timer>(io, op->deadline);
        op->deadline_timer->async_wait([this, op](beast::error_code ec) {
          if (ec || op->cancelled) return;  // cancelled: the stream ended first
          end(op, Error{Errc::connection_failed,
                        "watch stream failed: " + describe_read_error(beast::error::timeout)});
        });
      }
      // The header's read may have taken the body's first bytes: they are parsed now,
      // since the socket may not become readable again for them.
      if (op->connection->buffer().size() > 0) return after_read(op, op->put_body(*op->parser, op->connection->buffer()));
      return read_more(op);
    }
    op->parser->body_limit(max_error_body);
    op->connection->visit([&](auto& s) {
      async_read_message(
          s, op->connection->buffer(), *op->parser, [this, op, status](beast::error_code) {
            if (op->cancelled) return;
            auto& message = op->parser->get();
            const std::string body = op->error_body.empty() ? message.body() : op->error_body;
            end(op, error_from_response(status, body, std::string(message[bhttp::field::retry_after])));
          });
    });
  }

  void read_more(const std::shared_ptr<StreamOp>& op) {
    if (op->cancelled || op->ended) return;
    if (op->paused) {
      op->parked = true;  // the socket is not read: TCP's window closes on the server
      return;
    }
    auto& buffer = op->connection->buffer();
    const std::size_t room = beast::read_size(buffer, 64 * 1024);  // as Beast's reads size theirs
    if (room == 0)
      return end(op, Error{Errc::connection_failed,
                           "watch stream failed: " + describe_read_error(bhttp::error::buffer_overflow)});
    auto on_read = [this, op](beast::error_code ec, std::size_t n) {
      if (op->cancelled || op->ended) return;
      after_read(op, body_read(*op, ec, n));
    };
    // A plain stream reads straight on the socket: its completion runs as soon as the
    // reactor has read, where basic_stream's completes through a post that costs a
    // non-blocking epoll_wait before the handler runs (5 system calls per watch event
    // instead of 6, issue 29). TLS reads through OpenSSL.
    if (!op->connection->is_tls()) return op->connection->tcp().socket().async_read_some(buffer.prepare(room), on_read);
    op->connection->visit([&](auto& s) { s.async_read_some(buffer.prepare(room), on_read); });
  }

  // A watch body's read: parses what was read as Beast's read would, through BufferedPut
  // (framed_read.hpp).
  beast::error_code body_read(StreamOp& op, beast::error_code ec, std::size_t n) {
    if (ec == net::error::eof) {
      ec = {};
      op.parser->put_eof(ec);  // a body cut short is partial_message
      if (!ec && !op.parser->is_done()) ec = bhttp::error::end_of_stream;
      return ec;
    }
    if (ec) return ec;
    op.connection->buffer().commit(n);
    return op.put_body(*op.parser, op.connection->buffer());
  }

  void after_read(const std::shared_ptr<StreamOp>& op, const beast::error_code& ec) {
    if (op->cancelled || op->ended) return;  // ended: the deadline closed the connection
    if (!op->sink->on_read()) {
      op->ended = true;
      op->connection->close();
      return;
    }
    if (ec) return end(op, Error{Errc::connection_failed, "watch stream failed: " + describe_read_error(ec)});
    if (op->parser->is_done()) return end(op, Result<void>{});
    read_more(op);
  }

  void resumed(const std::shared_ptr<StreamOp>& op) {
    if (op->cancelled || op->ended) return;
    op->sink->on_resume();
    if (op->parked && !op->paused) {
      op->parked = false;
      read_more(op);
    }
  }

  void end(const std::shared_ptr<StreamOp>& op, Result<void> result) {
    if (op->ended) return;
    op->ended = true;
    if (op->deadline_timer) op->deadline_timer->cancel();
    if (op->connection) op->connection->close();
    op->sink->on_end(std::move(result));
  }

  ClientConfig config;
  ServerAddress address;
  std::shared_ptr<net::ssl::context> tls;  // null for http://
  BearerToken token;
  std::string server_name;
  std::atomic<std::uint64_t> opened{0};
  net::io_context io{1};
  net::executor_work_guard<net::io_context::executor_type> work{io.get_executor()};
  std::vector<std::shared_ptr<Connection>> idle;  // I/O thread only
  std::thread thread;
};

Result<std::shared_ptr<Client>> Client::create(ClientConfig config) {
  auto address = parse_server_url(config.server);
  if (!address) return std::move(address).error();
  std::shared_ptr<net::ssl::context> tls;
  if (address->tls) {
    auto context = detail::make_tls_context(config);
    if (!context) return std::move(context).error();
    tls = std::move(context).value();
  }
  auto impl = std::make_unique<Impl>(std::move(config), std::move(address).value(), std::move(tls));
  auto* io = &impl->io;
  impl->thread = std::thread([io] {
    ::pthread_setname_np(::pthread_self(), "kinformer.io");
    (void)home_cpu::join();  // beside the worker its events wake (runtime/home_cpu.hpp)
    io->run();
  });
  return std::shared_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  impl_->work.reset();
  net::post(impl_->io, [impl = impl_.get()] {
    for (auto& connection : impl->idle) connection->close();
    impl->idle.clear();
  });
  impl_->io.stop();
  if (impl_->thread.get_id() == std::this_thread::get_id()) {
    // The last reference went away inside a callback: the thread cannot join itself,
    // so it is left to end and its state is leaked rather than freed under it.
    impl_->thread.detach();
    (void)impl_.release();
    return;
  }
  impl_->thread.join();
  impl_->idle.clear();
}

void Client::request(Request request, std::function<void(Result<Response>)> done) {
  auto op = std::make_shared<Impl::RequestOp>();
  impl_->build(op->request, std::move(request));
  op->done = std::move(done);
  net::post(impl_->io, [impl = impl_.get(), op] { impl->start(op); });
}

Result<Response> Client::request_sync(Request request) {
  std::promise<Result<Response>> answer;
  auto future = answer.get_future();
  this->request(std::move(request), [&answer](Result<Response> r) { answer.set_value(std::move(r)); });
  return future.get();
}

std::shared_ptr<StreamHandle> Client::stream(std::string target, std::shared_ptr<StreamSink> sink,
                                             std::chrono::milliseconds deadline) {
  Request request;
  request.target = std::move(target);
  return stream(std::move(request), std::move(sink), deadline);
}

std::shared_ptr<StreamHandle> Client::stream(Request request, std::shared_ptr<StreamSink> sink,
                                             std::chrono::milliseconds deadline) {
  auto op = std::make_shared<Impl::StreamOp>();
  op->impl = impl_.get();
  op->sink = std::move(sink);
  op->deadline = deadline;
  impl_->build(op->request, std::move(request));
  net::post(impl_->io, [impl = impl_.get(), op] { impl->start_stream(op); });
  return std::make_shared<Impl::Handle>(shared_from_this(), op);
}

const ClientConfig& Client::config() const { return impl_->config; }
std::uint64_t Client::connections_opened() const { return impl_->opened; }

}  // namespace kinformer::http
