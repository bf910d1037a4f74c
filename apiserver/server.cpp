// The only translation unit with Beast/Asio (deps-notes §7).
#include "apiserver/server.hpp"

#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include "apiserver/api.hpp"
#include "apiserver/auth.hpp"
#include "apiserver/storage/persistence.hpp"
#include "apiserver/watch_encoder.hpp"
#include "runtime/accept_loop.hpp"
#include "runtime/connection_registry.hpp"
#include "runtime/http_framing.hpp"
#include "runtime/io_loop.hpp"
#include "runtime/log.hpp"
#include "runtime/tcp_listen.hpp"

namespace kinformer::apiserver {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t max_events_per_batch = 512;
constexpr std::size_t max_batch_bytes = 1 << 20;
constexpr std::size_t max_list_write_bytes = 256 * 1024;  // one write of a streamed list body
constexpr std::size_t fd_reserve = 64;  // descriptors kept free for files, the listener, TLS

struct Counters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> watches_started{0};
  std::atomic<std::uint64_t> watches_active{0};
  std::atomic<std::uint64_t> slow_watchers_closed{0};
};

// What every session shares: set up by Server::start(), read-only while serving.
struct Shared {
  const ServerOptions* options;
  Api* api;
  Storage* store;
  Counters* counters;
  const Authenticator* auth;
  std::string address;  // "127.0.0.1:PORT", for /api
  storage::Persistence* persistence;  // nullptr without a data file
  net::thread_pool* handlers;         // etcd: where API handlers wait for it; else nullptr
  WatchAdmission* full_state_watches;
};

ApiError not_persisted() {
  return ApiError::internal("the write-ahead log failed: this request's effect may not survive a restart");
}

constexpr const char* disk_full_why =
    "the disk of the data file is full: writes are refused (507) until it has room again; reads and watches go on";

// While the log cannot grow (storage/wal.hpp) a write is refused before it is applied, so
// nothing acknowledged depends on room the disk does not have; /healthz still answers
// (the server serves reads) and says why, /readyz fails.
std::optional<HttpResponse> answer_while_disk_full(const storage::Persistence* persistence,
                                                   const std::string& method, const std::string& target) {
  if (!persistence || !persistence->disk_full()) return std::nullopt;
  if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") {
    auto response = error_response(ApiError{507, "InsufficientStorage", disk_full_why, {}, {}, {}, {}, {}});
    response.retry_after_seconds = 10;
    return response;
  }
  auto path = std::string_view(target).substr(0, target.find('?'));
  if (path == "/healthz") return HttpResponse{200, "text/plain; charset=utf-8", std::string("ok\nwarning: ") + disk_full_why, nullptr};
  if (path == "/readyz")
    return HttpResponse{500, "text/plain; charset=utf-8", std::string("[-]log failed: ") + disk_full_why + "\nreadyz check failed", nullptr};
  return std::nullopt;
}

// Go's net/http answers 431 for a header over its limit; ours covers the trailer too.
ApiError header_too_large() {
  return ApiError{431, "RequestHeaderFieldsTooLarge",
                  "the request's header or trailer exceeds " + std::to_string(max_header_bytes) + " bytes",
                  {}, {}, {}, {}, {}};
}

// kube-apiserver's answer beyond --max-requests-inflight.
HttpResponse too_many_requests(const std::string& why) {
  auto response = error_response(
      ApiError{429, "TooManyRequests", "Too many requests, please try again later: " + why, {}, {}, {}, {}, {}});
  response.retry_after_seconds = 1;
  return response;
}

// Go's net/http (kube-apiserver) answers 501 to any Transfer-Encoding but "chunked".
ApiError unsupported_transfer_encoding(std::string_view value) {
  return ApiError{501, "NotImplemented",
                  "Transfer-Encoding \"" + std::string(value.substr(0, 256)) + "\" is not supported (only chunked)",
                  {}, {}, {}, {}, {}};
}

std::string chunk_header(std::size_t size) {
  char out[24];
  std::snprintf(out, sizeof out, "%zx\r\n", size);
  return out;
}

// One connection. Stream is beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
// All handlers run on the connection's strand (the stream's executor).
template <class Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const Shared& shared, ConnectionRegistry& registry, std::string client, std::string peer)
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
  void shutdown() {
    if (closed_) return;
    closed_ = true;
    release_watch_slot();
    if (watching_) shared_.counters->watches_active--;
    watch_observer_.reset();
    watching_ = false;
    if (wait_ticket_) shared_.store->cancel_wait(plan_->filter.type(), wait_ticket_);
    wait_ticket_ = 0;
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    write_timer_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(stream_).close();
  }

  auto& lowest() { return beast::get_lowest_layer(stream_); }

  // ---- HTTP: one request at a time; each phase has its own deadline, reset per request ----

  void read_request() {
    if (closed_) return;
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
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
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
    if (!plan.initial_objects.empty()) {
      if (!shared_.full_state_watches->try_acquire(client_))
        return send_response(too_many_requests("too many open watches without a resourceVersion"));
      holds_watch_slot_ = true;
    }
    start_watch(std::move(plan));
  }

  void release_watch_slot() {
    if (!holds_watch_slot_) return;
    holds_watch_slot_ = false;
    shared_.full_state_watches->release(client_);
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

  // A list body is written from the shared snapshot in slices: the connection holds
  // pointers to the stored objects, never its own copy of the text. Each slice must be
  // taken within write_timeout, so a client that stops reading is dropped.
  void send_list(HttpResponse response) {
    list_ = std::move(response.list);
    list_next_ = 0;
    std::string header =
        "HTTP/1.1 " + std::to_string(response.status) + " " +
        std::string(http::obsolete_reason(static_cast<http::status>(response.status))) +
        "\r\nContent-Type: " + response.content_type +
        "\r\nCache-Control: no-cache, private\r\nContent-Length: " + std::to_string(list_->size()) +
        (keep_alive_ ? "" : "\r\nConnection: close") + "\r\n\r\n";
    list_strings_.clear();
    list_strings_.push_back(std::move(header));
    list_strings_.push_back(list_->head);
    write_list_slice();
  }

  void write_list_slice() {
    std::vector<net::const_buffer> buffers;
    std::size_t bytes = 0;
    for (auto& text : list_strings_) {
      buffers.push_back(net::buffer(text));
      bytes += text.size();
    }
    static const std::string comma = ",";
    for (; list_next_ < list_->items.size() && bytes < max_list_write_bytes; ++list_next_) {
      if (list_next_) buffers.push_back(net::buffer(comma));
      auto [first, second] = list_->item_pieces(list_next_);
      buffers.push_back(net::buffer(first.data(), first.size()));
      if (!second.empty()) buffers.push_back(net::buffer(second.data(), second.size()));
      bytes += first.size() + second.size() + 1;
    }
    bool last = list_next_ == list_->items.size();
    if (last) buffers.push_back(net::buffer(list_->tail));
    lowest().expires_after(shared_.options->write_timeout);
    net::async_write(stream_, buffers,
                     [self = this->shared_from_this(), last](beast::error_code ec, std::size_t) {
                       self->list_strings_.clear();
                       if (ec || self->closed_) return self->shutdown();
                       if (!last) return self->write_list_slice();
                       self->list_.reset();
                       self->after_response({});
                     });
  }

  // kube-apiserver waits up to ~3 s for a watch's future resourceVersion, then 504s.
  void wait_for_future_revision(WatchPlan plan) {
    plan_.emplace(std::move(plan));
    watch_timeout_.expires_after(future_watch_wait);
    watch_timeout_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || !self->plan_) return;
      if (self->wait_ticket_) self->shared_.store->cancel_wait(self->plan_->filter.type(), self->wait_ticket_);
      self->wait_ticket_ = 0;
      auto current = self->shared_.store->revision();
      if (current >= self->plan_->wait_for_revision) return self->start_watch(std::move(*self->plan_));
      auto requested = self->plan_->wait_for_revision;
      self->plan_.reset();
      self->send_response(error_response(ApiError::too_large_resource_version(requested, current)));
    });
    const auto& type = plan_->filter.type();
    wait_ticket_ = shared_.store->notify_after(type, plan_->wait_for_revision - 1, [weak = this->weak_from_this()] {
      if (auto self = weak.lock())
        net::post(self->stream_.get_executor(), [self] {
          self->wait_ticket_ = 0;
          if (self->closed_ || !self->plan_ || self->watching_) return;
          self->watch_timeout_.cancel();
          self->start_watch(std::move(*self->plan_));
        });
    });
  }

  // ---- watch streaming ----

  void start_watch(WatchPlan plan) {
    plan_.emplace(std::move(plan));
    initial_next_ = 0;
    watching_ = true;
    shared_.counters->watches_started++;
    shared_.counters->watches_active++;
    observe(200);
    if (shared_.options->observer)
      watch_observer_ = shared_.options->observer->on_watch_started(plan_->filter.type().plural);
    position_ = plan_->start_after;
    beast::get_lowest_layer(stream_).expires_never();  // write stalls are timed by write_timer_
    pending_.push_back(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\n"
        "Transfer-Encoding: chunked\r\n\r\n");
    if (plan_->final_error) {
      queue_lines({*plan_->final_error});
      finish_watch();
      return;
    }
    watch_timeout_.expires_after(plan_->timeout);
    watch_timeout_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      if (self->plan_->bookmarks) self->queue_lines({bookmark_line(self->plan_->filter.type(), self->position_, false)});
      self->finish_watch();
    });
    if (plan_->bookmarks) arm_bookmark();
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

  // A watcher with nothing pending bookmarks at the storage's progress (etcd's
  // progress notifications), so its client resumes from there, not from its last event.
  void advance_to_progress() {
    const auto& type = plan_->filter.type();
    const auto progress = shared_.store->progress(type);
    std::vector<EventPtr> pending;
    if (progress > position_ && shared_.store->events_after(type, position_, 1, pending) && pending.empty())
      position_ = progress;
  }

  void arm_bookmark() {
    bookmark_timer_.expires_after(shared_.options->bookmark_interval);
    bookmark_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->ending_) return;
      self->advance_to_progress();
      self->queue_lines({bookmark_line(self->plan_->filter.type(), self->position_, false)});
      self->arm_bookmark();
      self->pump();
    });
  }

  // Lines become chunks in pending_; pump() writes them.
  void queue_lines(std::vector<std::string> lines) {
    std::string chunk;
    for (auto& line : lines) chunk += plan_ && plan_->rewrite_line ? plan_->rewrite_line(line) : line;
    if (chunk.empty()) return;
    pending_.push_back(chunk_header(chunk.size()) + chunk + "\r\n");
  }

  void finish_watch() {
    ending_ = true;
    pending_.push_back("0\r\n\r\n");
    watch_timeout_.cancel();
    bookmark_timer_.cancel();
    if (wait_ticket_) shared_.store->cancel_wait(plan_->filter.type(), wait_ticket_);
    wait_ticket_ = 0;
    pump();
  }

  void close_slow(const char* why, WatchDrop drop) {
    shared_.counters->slow_watchers_closed++;
    if (watch_observer_) watch_observer_->dropped(drop);
    log::warn("apiserver", std::string("closing a watch: ") + why,
              {{"resource", plan_->filter.type().plural}, {"peer", peer_}});
  }

  // Moves store events into a batch and writes it; waits for the store when idle.
  void pump() {
    if (closed_ || writing_) return;
    std::vector<net::const_buffer> buffers;
    batch_strings_.clear();
    batch_events_.clear();
    batch_scratch_.clear();
    for (auto& p : pending_) batch_strings_.push_back(std::move(p));
    pending_.clear();
    for (auto& s : batch_strings_) buffers.push_back(net::buffer(s));
    if (!ending_ && initial_next_ < plan_->initial_objects.size()) {
      collect_initial(buffers);
    } else if (!ending_) {
      if (!plan_->initial_lines.empty()) {  // the initial-events-end bookmark follows the initial objects
        std::string chunk;
        for (auto& line : plan_->initial_lines) chunk += line;
        initial_events_ += plan_->initial_lines.size();
        plan_->initial_lines.clear();
        batch_strings_.push_back(chunk_header(chunk.size()) + chunk + "\r\n");
        buffers.push_back(net::buffer(batch_strings_.back()));
      }
      collect_events(buffers);
    }
    if (buffers.empty()) {
      if (ending_) return after_watch();
      if (!wait_ticket_)
        wait_ticket_ = shared_.store->notify_after(plan_->filter.type(), position_, [weak = this->weak_from_this()] {
          if (auto self = weak.lock())
            net::post(self->stream_.get_executor(), [self] {
              self->wait_ticket_ = 0;
              self->pump();
            });
        });
      return;
    }
    writing_ = true;
    write_timer_.expires_after(shared_.options->watch_write_timeout);
    write_timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || !self->writing_ || self->closed_) return;
      self->close_slow("the client has not read for the whole watch write timeout", WatchDrop::write_timeout);
      self->shutdown();
    });
    net::async_write(stream_, buffers, [self = this->shared_from_this(), events = batch_events_.size() + std::exchange(initial_events_, 0)](
                                           beast::error_code ec, std::size_t) {
      self->writing_ = false;
      self->write_timer_.cancel();
      if (ec) return self->shutdown();
      if (self->watch_observer_ && events) self->watch_observer_->events_sent(events);
      self->pump();
    });
  }

  // The synthetic ADDEDs of a watch's initial state, one chunk per batch, pointing
  // into the shared stored objects (no per-watcher copy of the initial list).
  void collect_initial(std::vector<net::const_buffer>& buffers) {
    static const std::string crlf = "\r\n";
    const std::string& prefix = line_prefix(LineType::added);
    const std::string& suffix = line_suffix();
    batch_strings_.emplace_back();
    auto header_slot = buffers.size();
    buffers.emplace_back();
    std::size_t bytes = 0;
    const auto& objects = plan_->initial_objects;
    for (; initial_next_ < objects.size() && bytes < max_batch_bytes; ++initial_next_) {
      const auto& json = objects[initial_next_]->json;
      buffers.push_back(net::buffer(prefix));
      buffers.push_back(net::buffer(json));
      buffers.push_back(net::buffer(suffix));
      bytes += prefix.size() + json.size() + suffix.size();
      ++initial_events_;
    }
    batch_strings_.back() = chunk_header(bytes);
    buffers[header_slot] = net::buffer(batch_strings_.back());
    buffers.push_back(net::buffer(crlf));
  }

  void collect_events(std::vector<net::const_buffer>& buffers) {
    std::vector<EventPtr> events;
    const auto& type = plan_->filter.type();
    if (!shared_.store->events_after(type, position_, max_events_per_batch, events)) {
      close_slow("it fell behind the watch history (it reads too slowly); sending 410 Expired",
                 WatchDrop::fell_behind);
      auto line = error_line(ApiError::expired("too old resource version: " + std::to_string(position_) + " (" +
                                               std::to_string(shared_.store->compacted_through(type) + 1) +
                                               "): the watcher fell behind the server's watch history"));
      batch_strings_.push_back(chunk_header(line.size()) + line + "\r\n");
      buffers.push_back(net::buffer(batch_strings_.back()));
      ending_ = true;
      batch_strings_.push_back("0\r\n\r\n");
      buffers.push_back(net::buffer(batch_strings_.back()));
      return;
    }
    std::size_t bytes = 0;
    std::size_t header_slot = 0;
    for (const auto& event : events) {
      position_ = event->resource_version;
      const std::string* line = line_for(*event, plan_->filter, batch_scratch_);
      if (!line) continue;
      if (plan_->rewrite_line) {  // a Table watch
        batch_scratch_.push_back(plan_->rewrite_line(*line));
        line = &batch_scratch_.back();
      }
      if (bytes == 0) {
        batch_strings_.emplace_back();  // the chunk header, sized below
        header_slot = buffers.size();
        buffers.emplace_back();
      }
      buffers.push_back(net::buffer(*line));
      bytes += line->size();
      batch_events_.push_back(event);  // keeps event->line alive while it is written
      if (bytes >= max_batch_bytes) break;
    }
    if (bytes == 0) return;
    batch_strings_.back() = chunk_header(bytes);
    buffers[header_slot] = net::buffer(batch_strings_.back());
    static const std::string crlf = "\r\n";
    buffers.push_back(net::buffer(crlf));
  }

  // The connection ends with the watch: the hang-up probe still owns the read side.
  void after_watch() { shutdown(); }

  Stream stream_;
  const Shared& shared_;
  ConnectionRegistry& registry_;
  const std::string client_;  // the peer's IP address: its per-client connection count
  std::string peer_;
  beast::flat_buffer buffer_{max_header_bytes};  // bounds a request's unparsed bytes: header and trailer
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  bool closed_ = false;
  bool verified_certificate_ = false;  // TLS: the client's certificate was verified against --client-ca

  // list streaming (only while a list body is written)
  std::shared_ptr<const ListBody> list_;
  std::size_t list_next_ = 0;              // the next item to write
  std::vector<std::string> list_strings_;  // owned bytes of the slice in flight

  // watch state (only while watching_)
  bool watching_ = false;
  bool holds_watch_slot_ = false;  // a WatchAdmission slot, for as long as the watch is open
  bool ending_ = false;     // the terminating chunk is queued
  bool writing_ = false;    // one async_write in flight at most: the per-watcher memory bound
  char hangup_probe_[64];
  std::optional<WatchPlan> plan_;
  std::size_t initial_next_ = 0;       // the next of plan_->initial_objects to send
  std::uint64_t position_ = 0;         // RV of the last store event taken from the history
  std::uint64_t wait_ticket_ = 0;      // store wake-up registration, 0 = none
  std::vector<std::string> pending_;   // raw bytes queued for the next write
  std::deque<std::string> batch_strings_;  // owned bytes of the write in flight (deque: stable)
  std::deque<std::string> batch_scratch_;  // lines rendered for this watcher only
  std::vector<EventPtr> batch_events_;     // shared lines of the write in flight
  // For ServerOptions::observer: the request being answered, and the open watch's sink.
  std::chrono::steady_clock::time_point request_started_;
  std::string observed_method_;
  std::string observed_target_;
  std::unique_ptr<WatchObserver> watch_observer_;
  std::size_t initial_events_ = 0;  // initial-state lines (ADDEDs, end bookmark) in this batch, not yet counted
  net::steady_timer watch_timeout_;
  net::steady_timer bookmark_timer_;
  net::steady_timer write_timer_;
};

StoreOptions store_options(const ServerOptions& options) {
  StoreOptions out;
  out.watch_history = options.watch_history;
  out.watch_history_bytes = options.watch_history_bytes;
  return out;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  ResourceRegistry registry;
  std::unique_ptr<Store> memory;     // without etcd endpoints
  std::unique_ptr<EtcdStorage> etcd;  // with them, opened by start()
  Storage* storage = nullptr;         // one of the two
  std::optional<Api> api;             // over *storage
  Authenticator auth;
  std::unique_ptr<storage::Persistence> persistence;  // with a data file, between start() and stop()
  std::optional<net::thread_pool> handlers;           // with etcd, between start() and stop()
  Counters counters;
  Shared shared{};
  WatchAdmission full_state_watches;
  ConnectionRegistry sessions;
  net::io_context ioc;
  std::optional<ssl::context> tls;
  std::optional<tcp::acceptor> acceptor;
  std::optional<AcceptLoop> accept_loop;  // on the acceptor's strand, between start() and stop()
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool running = false;

  Impl(ServerOptions o, ResourceRegistry r)
      : options(std::move(o)),
        registry(std::move(r)),
        auth(options.token, !options.client_ca_file.empty()),
        full_state_watches(options.full_state_watches) {
    if (!options.etcd.endpoints.empty()) return;
    memory = std::make_unique<Store>(registry, store_options(options));
    storage = memory.get();
    api.emplace(registry, *storage, options.limits);
  }

  void serve(tcp::socket socket, std::string client) {
    beast::error_code ignored;
    auto remote = socket.remote_endpoint(ignored);
    std::string peer = client + ":" + std::to_string(remote.port());
    socket.set_option(tcp::no_delay(true), ignored);
    if (tls)
      std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls), shared, sessions,
          std::move(client), std::move(peer))
          ->run();
    else
      std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared, sessions,
                                                   std::move(client), std::move(peer))
          ->run();
  }

  ConnectionLimits connection_limits() const {
    ConnectionLimits out{options.max_connections, options.max_connections_per_client};
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return out;
    auto usable = limit.rlim_cur > 2 * fd_reserve ? limit.rlim_cur - fd_reserve : limit.rlim_cur / 2;
    out.max_total = std::max<std::size_t>(1, std::min<std::size_t>(options.max_connections, usable));
    return out;
  }
};

Server::Server(ServerOptions options, ResourceRegistry registry)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(registry))) {}

Server::~Server() { (void)stop(); }

Result<std::uint16_t> Server::start() {
  auto& s = *impl_;
  if (s.running) return s.port;
  if (!s.options.etcd.endpoints.empty() && !s.options.data_file.empty())
    return Error{Errc::server_error, "a data file and etcd endpoints exclude each other: objects live in one place"};
  if (!s.storage) {
    EtcdOptions etcd = s.options.etcd;
    etcd.watch_history = s.options.watch_history;  // one knob for both storages (per type on etcd)
    auto opened = EtcdStorage::open(s.registry, etcd);
    if (!opened) return std::move(opened).error();
    s.etcd = std::move(opened).value();
    s.storage = s.etcd.get();
    s.api.emplace(s.registry, *s.storage, s.options.limits);
  }
  if (!s.options.data_file.empty() && !s.persistence) {
    auto opened = storage::Persistence::open(
        *s.memory, s.registry, {s.options.data_file, s.options.wal_compact_bytes, s.options.repair});
    if (!opened) return std::move(opened).error();
    s.persistence = std::move(opened).value();
  }
  if (s.options.tls_cert_file.empty() != s.options.tls_key_file.empty())
    return Error{Errc::server_error, "TLS needs both a certificate and a key file"};
  if (!s.options.client_ca_file.empty() && s.options.tls_cert_file.empty())
    return Error{Errc::server_error, "client certificates (--client-ca) need TLS (--tls-cert and --tls-key)"};
  try {
    if (!s.options.tls_cert_file.empty()) {
      s.tls.emplace(ssl::context::tls_server);
      s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      s.tls->use_certificate_chain_file(s.options.tls_cert_file);
      s.tls->use_private_key_file(s.options.tls_key_file, ssl::context::pem);
      if (!s.options.client_ca_file.empty()) {
        // Ask for a certificate and verify it when sent; clients without one may still
        // authenticate with the bearer token (kube-apiserver's --client-ca-file).
        s.tls->load_verify_file(s.options.client_ca_file);
        s.tls->set_verify_mode(ssl::verify_peer);
      }
    }
  } catch (const std::exception& e) {
    // Paths only: never the key's content.
    return Error{Errc::server_error, "cannot load the TLS files (" + s.options.tls_cert_file + ", " +
                                         s.options.tls_key_file + ", client CA \"" +
                                         s.options.client_ca_file + "\"): " + e.what()};
  }
  s.acceptor.emplace(net::make_strand(s.ioc));  // accept handlers and stop()'s close never overlap
  auto address = listen_on(*s.acceptor, s.options.bind_address, s.options.port);
  if (!address) {
    s.acceptor.reset();
    return address.error();
  }
  s.port = s.acceptor->local_endpoint().port();
  auto host = address->is_v6() ? "[" + address->to_string() + "]" : address->to_string();
  if (s.etcd) s.handlers.emplace(std::max(1u, s.options.storage_threads));
  s.shared = Shared{&s.options, &*s.api,   s.storage, &s.counters, &s.auth, host + ":" + std::to_string(s.port),
                    s.persistence.get(), s.handlers ? &*s.handlers : nullptr, &s.full_state_watches};
  s.sessions.set_limits(s.connection_limits());
  s.accept_loop.emplace(*s.acceptor, s.ioc, s.sessions, "apiserver",
                        [&s](tcp::socket socket, std::string client) { s.serve(std::move(socket), std::move(client)); });
  s.accept_loop->start();
  s.work.emplace(s.ioc.get_executor());
  for (unsigned i = 0; i < std::max(1u, s.options.threads); ++i)
    s.threads.emplace_back([&s] { run_io_loop(s.ioc, "apiserver"); });
  s.running = true;
  return s.port;
}

Result<void> Server::stop() {
  auto& s = *impl_;
  if (!s.running) return {};
  s.running = false;
  net::post(s.acceptor->get_executor(), [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
    s.accept_loop->stop();
  });
  s.sessions.close_all();
  s.work.reset();
  // Sessions finish their handlers and go; give them a moment, then stop the loop.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!s.ioc.stopped() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  if (s.handlers) {
    s.handlers->join();  // the requests waiting for etcd end within its request timeout
    s.handlers.reset();
  }
  s.accept_loop.reset();
  s.acceptor.reset();
  s.ioc.restart();
  if (!s.persistence) return {};
  auto closed = s.persistence->close();  // the final snapshot
  s.persistence.reset();
  return closed;
}

std::uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return std::string(impl_->tls ? "https://" : "http://") + impl_->shared.address;
}

Storage& Server::store() { return *impl_->storage; }

HttpResponse Server::call(const std::string& method, const std::string& target, const std::string& body,
                          const std::string& content_type) {
  HttpRequest request{method, target, content_type, "application/json", body};
  if (auto refused = answer_while_disk_full(impl_->persistence.get(), method, target)) return std::move(*refused);
  if (!impl_->api)
    return error_response(ApiError{503, "ServiceUnavailable", "the server's etcd storage opens in start()", {}, {}, {}, {}, {}});
  auto reply = impl_->api->handle(request, impl_->shared.address);
  if (auto& p = impl_->persistence; p && !p->wait_durable(p->sync_point()))
    return error_response(not_persisted());
  if (auto* response = std::get_if<HttpResponse>(&reply)) {
    if (response->list) response->body = response->list->render();
    response->list.reset();
    return std::move(*response);
  }
  return error_response(ApiError::bad_request("a watch needs the HTTP endpoint (" + url() + "), not Server::call()"));
}
const ResourceRegistry& Server::registry() const { return impl_->registry; }

ServerStats Server::stats() const {
  const auto& c = impl_->counters;
  ServerStats out{c.requests.load(), c.watches_started.load(), c.watches_active.load(),
                  c.slow_watchers_closed.load()};
  if (impl_->persistence) {
    auto log = impl_->persistence->log_stats();
    out.log_records = log.records;
    out.log_syncs = log.syncs;
  }
  return out;
}

}  // namespace kinformer::apiserver
