// One of the two translation units with Beast (with http/listener.cpp; deps-notes §7).
#include "apiserver/http/session.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "apiserver/api.hpp"
#include "apiserver/auth.hpp"
#include "apiserver/http/refusals.hpp"
#include "apiserver/http/watch_stream.hpp"
#include "apiserver/server.hpp"
#include "apiserver/storage/persistence.hpp"
#include "runtime/framed_read.hpp"
#include "runtime/http_framing.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t max_list_write_bytes = 256 * 1024;  // one write of a streamed list body

// ---- the session's states: what exists only in one of them lives in it ----

// One request at a time: reading it, handling it, writing its answer.
struct Serving {};

// A list body written from the shared snapshot in slices: the connection holds pointers
// to the stored objects, never its own copy of the text.
struct WritingList {
  std::shared_ptr<const ListBody> list;
  std::size_t next = 0;              // the next item to write
  std::vector<std::string> strings;  // owned bytes of the slice in flight
};

// kube-apiserver waits up to ~3 s for a watch's future resourceVersion, then 504s.
struct AwaitingRevision {
  WatchPlan plan;
  std::uint64_t wait_ticket = 0;  // store wake-up registration, 0 = none
};

struct Watching {
  WatchStream stream;
  bool holds_slot = false;        // a WatchAdmission slot, for as long as the watch is open
  bool writing = false;           // one async_write in flight at most: the per-watcher memory bound
  std::uint64_t wait_ticket = 0;  // store wake-up registration, 0 = none
  std::unique_ptr<WatchObserver> observer;  // ServerOptions::observer's sink for this watch
};

using SessionState = std::variant<Serving, WritingList, AwaitingRevision, Watching>;

// One connection. Stream is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
// All handlers run on the connection's strand (the stream's executor).
template <class Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const SessionContext& shared, ConnectionRegistry& registry, std::string client,
          std::string peer)
      : stream_(std::move(stream)),
        shared_(shared),
        registry_(registry),
        client_(std::move(client)),
        peer_(std::move(peer)),
        watch_timeout_(stream_.get_executor()),
        bookmark_timer_(stream_.get_executor()),
        write_timer_(stream_.get_executor()) {}

  ~Session() override { registry_.remove(this); }

  void run() {
    registry_.add(this, this->shared_from_this(), client_);
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read_request();
    } else {
      registry_.set_phase(this, ConnectionRegistry::Phase::partial);  // a stalled handshake can make room
      lowest().expires_after(shared_.options->header_timeout);
      stream_.async_handshake(
          ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->shutdown();
            // verify_peer without fail_if_no_peer_cert: a certificate, when sent, was verified
            // against --client-ca during the handshake, or the handshake failed.
            X509* certificate = SSL_get1_peer_certificate(self->stream_.native_handle());
            self->verified_certificate_ =
                certificate && SSL_get_verify_result(self->stream_.native_handle()) == X509_V_OK;
            X509_free(certificate);
            self->read_request();
          });
    }
  }

  void close() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->shutdown(); });
  }

 private:
  // The state stays in place after the close: a write in flight may still point into it.
  void shutdown() {
    if (closed_) return;
    closed_ = true;
    if (auto* awaiting = std::get_if<AwaitingRevision>(&state_)) cancel_wait(awaiting->plan.filter.type(), awaiting->wait_ticket);
    if (auto* watching = std::get_if<Watching>(&state_)) {
      if (std::exchange(watching->holds_slot, false)) shared_.full_state_watches->release(client_);
      shared_.counters->watches_active--;
      watching->observer.reset();
      cancel_wait(watching->stream.type(), watching->wait_ticket);
    }
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    write_timer_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(stream_).close();
  }

  void cancel_wait(const ResourceType& type, std::uint64_t& ticket) {
    if (ticket) shared_.store->cancel_wait(type, ticket);
    ticket = 0;
  }

  auto& lowest() { return beast::get_lowest_layer(stream_); }
  Watching& watching() { return std::get<Watching>(state_); }

  // ---- HTTP: one request at a time; each phase has its own deadline, reset per request ----

  void read_request() {
    if (closed_) return;
    state_ = Serving{};
    parser_.emplace();
    parser_->body_limit(shared_.options->max_body_bytes);
    parser_->header_limit(max_header_bytes);
    if (buffer_.size() == 0) return wait_for_request();
    read_header();
  }

  // Between requests the connection is idle (evictable) until its first byte arrives.
  void wait_for_request() {
    registry_.set_phase(this, ConnectionRegistry::Phase::idle);
    lowest().expires_after(shared_.options->idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (self->closed_) return;
                              if (ec) return self->shutdown();
                              self->buffer_.commit(n);
                              self->read_header();
                            });
  }

  // The whole header must arrive within header_timeout, however slowly it trickles in.
  // Until the request is whole the connection is partial: at the cap it can make room.
  void read_header() {
    registry_.set_phase(this, ConnectionRegistry::Phase::partial);
    lowest().expires_after(shared_.options->header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (self->closed_) return;
                              if (ec) return self->on_request(ec);
                              self->after_header();
                            });
  }

  void after_header() {
    const auto& message = parser_->get();
    if (!transfer_encoding_supported(message)) {
      request_started_ = std::chrono::steady_clock::now();
      return send_error_and_close(unsupported_transfer_encoding(message[http::field::transfer_encoding]));
    }
    if (!parser_->is_done() && beast::iequals(message[http::field::expect], "100-continue")) {
      static const std::string continue_line = "HTTP/1.1 100 Continue\r\n\r\n";
      lowest().expires_after(shared_.options->write_timeout);
      net::async_write(stream_, net::buffer(continue_line),
                       [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                         if (ec || self->closed_) return self->shutdown();
                         self->read_body();
                       });
      return;
    }
    read_body();
  }

  void read_body() {
    if (parser_->is_done()) return on_request({});
    lowest().expires_after(shared_.options->read_timeout);
    kinformer::async_read_message(stream_, buffer_, *parser_,
                                  [self = this->shared_from_this()](beast::error_code ec) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (closed_) return;
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::operation_aborted ||
        ec == beast::error::timeout || ec == net::error::connection_reset)
      return shutdown();
    registry_.set_phase(this, ConnectionRegistry::Phase::busy);
    request_started_ = std::chrono::steady_clock::now();
    if (ec == http::error::body_limit)
      return send_error_and_close(ApiError::too_large(shared_.options->max_body_bytes));
    // The read buffer holds at most max_header_bytes: a trailer beyond it overflows it.
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
      return send_error_and_close(header_too_large());
    if (ec) return send_error_and_close(ApiError::bad_request("malformed HTTP request: " + ec.message()));
    shared_.counters->requests++;
    auto& message = parser_->get();
    if (shared_.options->observer) {
      observed_method_ = std::string(message.method_string());
      observed_target_ = std::string(message.target());
    }
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.content_type = std::string(message[http::field::content_type]);
    request.accept = std::string(message[http::field::accept]);
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive();
    // The target is logged, never a header: credentials travel in Authorization only.
    if (shared_.options->log_requests)
      log::info("apiserver", "request", {{"peer", peer_}, {"method", request.method}, {"target", request.target}});
    if (!shared_.auth->accepts(message[http::field::authorization], verified_certificate_))
      return send_response(error_response(ApiError::unauthorized()));
    if (auto refused = answer_while_disk_full(shared_.persistence, request.method, request.target))
      return send_response(std::move(*refused));
    if (shared_.handlers) return handle_elsewhere(std::move(request));
    auto reply = shared_.api->handle(request, shared_.address);
    if (shared_.persistence) return answer_when_durable(std::move(reply));
    answer(std::move(reply));
  }

  // etcd: the handler waits for etcd's answers on a thread of its own, so the I/O
  // threads go on serving and many requests are in flight; the answer comes back to
  // this strand. The connection reads nothing meanwhile (one request at a time).
  void handle_elsewhere(HttpRequest request) {
    net::post(*shared_.handlers, [self = this->shared_from_this(), request = std::move(request)] {
      auto reply = std::make_shared<ApiReply>(self->shared_.api->handle(request, self->shared_.address));
      net::post(self->stream_.get_executor(), [self, reply] {
        if (self->closed_) return;
        self->answer(std::move(*reply));
      });
    });
  }

  void answer(ApiReply reply) {
    if (auto* response = std::get_if<HttpResponse>(&reply)) return send_response(std::move(*response));
    auto plan = std::move(std::get<WatchPlan>(reply));
    if (plan.wait_for_revision > shared_.store->revision()) return wait_for_future_revision(std::move(plan));
    bool holds_slot = false;
    if (!plan.initial_objects.empty()) {
      if (!shared_.full_state_watches->try_acquire(client_))
        return send_response(too_many_requests("too many open watches without a resourceVersion"));
      holds_slot = true;
    }
    start_watch(std::move(plan), holds_slot);
  }

  // An answer leaves once everything it could have seen is durable (storage/persistence.hpp):
  // a write's 2xx only after its log record is fsynced, and no read shows a revision a
  // crash could take back. The wait is asynchronous, so concurrent writers share an fsync.
  void answer_when_durable(ApiReply reply) {
    auto held = std::make_shared<ApiReply>(std::move(reply));
    auto caller = std::this_thread::get_id();
    auto* persistence = shared_.persistence;
    auto self = this->shared_from_this();
    persistence->when_durable(persistence->sync_point(), [self, held, caller](bool durable) {
      auto go = [self, held, durable] {
        if (self->closed_) return;
        if (!durable) return self->send_error_and_close(not_persisted());
        self->answer(std::move(*held));
      };
      // Already durable: called back on this strand, before when_durable() returned.
      if (std::this_thread::get_id() == caller) return go();
      net::post(self->stream_.get_executor(), std::move(go));
    });
  }

  void send_error_and_close(const ApiError& error) {
    keep_alive_ = false;
    send_response(error_response(error));
  }

  // The one place a request's outcome reaches ServerOptions::observer.
  void observe(int status) {
    if (!shared_.options->observer) return;
    shared_.options->observer->on_request(observed_method_, observed_target_, status,
                                          std::chrono::steady_clock::now() - request_started_);
    observed_method_.clear();
    observed_target_.clear();
  }

  void send_response(HttpResponse response) {
    observe(response.status);  // before the branch: a streamed list is one request too
    if (response.list) return send_list(std::move(response));
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
    res->set(http::field::content_type, response.content_type);
    res->set(http::field::cache_control, "no-cache, private");
    if (response.retry_after_seconds > 0) res->set(http::field::retry_after, std::to_string(response.retry_after_seconds));
    res->keep_alive(keep_alive_);
    res->body() = std::move(response.body);
    res->prepare_payload();
    lowest().expires_after(shared_.options->write_timeout);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
                        self->after_response(ec);
                      });
  }

  void after_response(beast::error_code ec) {
    if (ec || !keep_alive_ || closed_) return shutdown();
    read_request();
  }

  // Each slice must be taken within write_timeout, so a client that stops reading is dropped.
  void send_list(HttpResponse response) {
    auto& writing = state_.emplace<WritingList>();
    writing.list = std::move(response.list);
    std::string header =
        "HTTP/1.1 " + std::to_string(response.status) + " " +
        std::string(http::obsolete_reason(static_cast<http::status>(response.status))) +
        "\r\nContent-Type: " + response.content_type +
        "\r\nCache-Control: no-cache, private\r\nContent-Length: " + std::to_string(writing.list->size()) +
        (keep_alive_ ? "" : "\r\nConnection: close") + "\r\n\r\n";
    writing.strings.push_back(std::move(header));
    writing.strings.push_back(writing.list->head);
    write_list_slice();
  }

  void write_list_slice() {
    auto& writing = std::get<WritingList>(state_);
    const auto& list = *writing.list;
    std::vector<net::const_buffer> buffers;
    std::size_t bytes = 0;
    for (auto& text : writing.strings) {
      buffers.push_back(net::buffer(text));
      bytes += text.size();
    }
    static const std::string comma = ",";
    for (; writing.next < list.items.size() && bytes < max_list_write_bytes; ++writing.next) {
      if (writing.next) buffers.push_back(net::buffer(comma));
      auto [first, second] = list.item_pieces(writing.next);
      buffers.push_back(net::buffer(first.data(), first.size()));
      if (!second.empty()) buffers.push_back(net::buffer(second.data(), second.size()));
      bytes += first.size() + second.size() + 1;
    }
    bool last = writing.next == list.items.size();
    if (last) buffers.push_back(net::buffer(list.tail));
    lowest().expires_after(shared_.options->write_timeout);
    net::async_write(stream_, buffers,
                     [self = this->shared_from_this(), last](beast::error_code ec, std::size_t) {
                       std::get<WritingList>(self->state_).strings.clear();
                       if (ec || self->closed_) return self->shutdown();
                       if (!last) return self->write_list_slice();
                       self->after_response({});
                     });
  }

  // ---- a watch from a future resourceVersion ----

  void wait_for_future_revision(WatchPlan plan) {
    auto& awaiting = state_.emplace<AwaitingRevision>(AwaitingRevision{std::move(plan), 0});
    watch_timeout_.expires_after(future_watch_wait);
    watch_timeout_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      auto* waiting = std::get_if<AwaitingRevision>(&self->state_);
      if (ec || self->closed_ || !waiting) return;
      self->cancel_wait(waiting->plan.filter.type(), waiting->wait_ticket);
      auto current = self->shared_.store->revision();
      if (current >= waiting->plan.wait_for_revision) return self->start_watch(std::move(waiting->plan), false);
      auto requested = waiting->plan.wait_for_revision;
      self->send_response(error_response(ApiError::too_large_resource_version(requested, current)));
    });
    const auto& type = awaiting.plan.filter.type();
    awaiting.wait_ticket =
        shared_.store->notify_after(type, awaiting.plan.wait_for_revision - 1, [weak = this->weak_from_this()] {
          if (auto self = weak.lock())
            net::post(self->stream_.get_executor(), [self] {
              auto* waiting = std::get_if<AwaitingRevision>(&self->state_);
              if (self->closed_ || !waiting) return;
              waiting->wait_ticket = 0;
              self->watch_timeout_.cancel();
              self->start_watch(std::move(waiting->plan), false);
            });
        });
  }

  // ---- watch streaming (http/watch_stream.hpp decides the bytes) ----

  void start_watch(WatchPlan plan, bool holds_slot) {
    auto& watch =
        state_.emplace<Watching>(Watching{WatchStream(*shared_.store, std::move(plan)), holds_slot, false, 0, nullptr});
    shared_.counters->watches_started++;
    shared_.counters->watches_active++;
    observe(200);
    if (shared_.options->observer) watch.observer = shared_.options->observer->on_watch_started(watch.stream.type().plural);
    lowest().expires_never();  // write stalls are timed by write_timer_
    if (watch.stream.ending()) return pump();  // the plan's final error: nothing else to send
    watch_timeout_.expires_after(watch.stream.plan().timeout);
    watch_timeout_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->watching().stream.ending()) return;
      if (self->watching().stream.plan().bookmarks) self->watching().stream.queue_bookmark();
      self->finish_watch();
    });
    if (watch.stream.plan().bookmarks) arm_bookmark();
    watch_for_hangup();
    pump();
  }

  // A watch only writes; this read notices a client that went away while no events flow.
  void watch_for_hangup() {
    stream_.async_read_some(net::buffer(hangup_probe_), [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->shutdown();
      self->watch_for_hangup();  // stray bytes from the client are ignored
    });
  }

  void arm_bookmark() {
    bookmark_timer_.expires_after(shared_.options->bookmark_interval);
    bookmark_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->watching().stream.ending()) return;
      auto& stream = self->watching().stream;
      stream.advance_to_progress();
      stream.queue_bookmark();
      self->arm_bookmark();
      self->pump();
    });
  }

  void finish_watch() {
    auto& watch = watching();
    watch.stream.finish();
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    cancel_wait(watch.stream.type(), watch.wait_ticket);
    pump();
  }

  void close_slow(const char* why, WatchDrop drop) {
    shared_.counters->slow_watchers_closed++;
    auto& watch = watching();
    if (watch.observer) watch.observer->dropped(drop);
    log::warn("apiserver", std::string("closing a watch: ") + why,
              {{"resource", watch.stream.type().plural}, {"peer", peer_}});
  }

  // Writes the stream's next batch; waits for the store when there is none.
  void pump() {
    auto& watch = watching();
    if (closed_ || watch.writing) return;
    auto batch = watch.stream.next_batch();
    if (batch.fell_behind)
      close_slow("it fell behind the watch history (it reads too slowly); sending 410 Expired",
                 WatchDrop::fell_behind);
    if (batch.pieces.empty()) {
      // The connection ends with the watch: the hang-up probe still owns the read side.
      if (watch.stream.ending()) return shutdown();
      if (!watch.wait_ticket)
        watch.wait_ticket =
            shared_.store->notify_after(watch.stream.type(), watch.stream.position(), [weak = this->weak_from_this()] {
              if (auto self = weak.lock())
                net::post(self->stream_.get_executor(), [self] {
                  self->watching().wait_ticket = 0;
                  self->pump();
                });
            });
      return;
    }
    std::vector<net::const_buffer> buffers;
    buffers.reserve(batch.pieces.size());
    for (auto piece : batch.pieces) buffers.emplace_back(piece.data(), piece.size());
    watch.writing = true;
    write_timer_.expires_after(shared_.options->watch_write_timeout);
    write_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || !self->watching().writing || self->closed_) return;
      self->close_slow("the client has not read for the whole watch write timeout", WatchDrop::write_timeout);
      self->shutdown();
    });
    net::async_write(stream_, buffers, [self = this->shared_from_this(), events = batch.events](
                                           beast::error_code ec, std::size_t) {
      auto& watch = self->watching();
      watch.writing = false;
      self->write_timer_.cancel();
      if (ec) return self->shutdown();
      if (watch.observer && events) watch.observer->events_sent(events);
      self->pump();
    });
  }

  Stream stream_;
  const SessionContext& shared_;
  ConnectionRegistry& registry_;
  const std::string client_;  // the peer's IP address: its per-client connection count
  std::string peer_;
  beast::flat_buffer buffer_{max_header_bytes};  // bounds a request's unparsed bytes: header and trailer
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  bool closed_ = false;
  bool verified_certificate_ = false;  // TLS: the client's certificate was verified against --client-ca
  SessionState state_;
  char hangup_probe_[64];
  // For ServerOptions::observer: the request being answered.
  std::chrono::steady_clock::time_point request_started_;
  std::string observed_method_;
  std::string observed_target_;
  net::steady_timer watch_timeout_;  // AwaitingRevision: the ~3 s wait; Watching: timeoutSeconds
  net::steady_timer bookmark_timer_;
  net::steady_timer write_timer_;
};

}  // namespace

void start_session(tcp::socket socket, ssl::context* tls, const SessionContext& context, ConnectionRegistry& registry,
                   std::string client) {
  beast::error_code ignored;
  auto remote = socket.remote_endpoint(ignored);
  std::string peer = client + ":" + std::to_string(remote.port());
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls)
    std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
        beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls), context, registry,
        std::move(client), std::move(peer))
        ->run();
  else
    std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), context, registry,
                                                 std::move(client), std::move(peer))
        ->run();
}

}  // namespace kinformer::apiserver
