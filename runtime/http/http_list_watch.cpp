#include "runtime/http/http_list_watch.hpp"

#include <atomic>
#include <mutex>
#include <optional>

#include "runtime/http/api_status.hpp"
#include "runtime/http/list_decoder.hpp"
#include "runtime/http/watch_stream_parser.hpp"

namespace kinformer::http {
namespace {

void add_query(std::string& target, const char* name, std::string_view value) {
  target += target.find('?') == std::string::npos ? '?' : '&';
  target += name;
  target += '=';
  target += url_encode(value);
}

// The watch's side of the stream: parses on the I/O thread, delivers under a lock
// that stop() also takes, so that no callback starts after stop() returns.
class WatchSink final : public StreamSink {
 public:
  WatchSink(std::size_t max_event_bytes, ListWatch::EventsCallback on_events,
            ListWatch::ClosedCallback on_closed)
      : parser_(max_event_bytes), on_events_(std::move(on_events)), on_closed_(std::move(on_closed)) {}

  void on_body(std::string_view piece) override { parser_.feed(piece); }

  bool on_read() override {
    auto events = parser_.take_events();
    if (!events.empty()) deliver(std::move(events));
    if (parser_.failure()) {
      close(Error(*parser_.failure()));
      return false;
    }
    return true;
  }

  void on_resume() override {
    std::vector<WatchEvent> held;
    {
      std::lock_guard<std::recursive_mutex> lock(mu_);
      held.swap(held_);
      if (stopped_) return;
      if (!held.empty()) on_events_(std::move(held));
      if (held_closed_) {
        auto result = std::move(*held_closed_);
        held_closed_.reset();
        close_locked(std::move(result));
      }
    }
  }

  void on_end(Result<void> result) override {
    if (result) {
      parser_.finish();
      auto events = parser_.take_events();
      if (!events.empty()) deliver(std::move(events));
      if (parser_.failure()) result = Error(*parser_.failure());
    }
    close(std::move(result));
  }

  void pause() { paused_ = true; }
  void resume() { paused_ = false; }
  void stop() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    stopped_ = true;
  }

 private:
  void deliver(std::vector<WatchEvent> events) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (stopped_) return;
    if (paused_ || !held_.empty()) {  // kept in order until resume()
      held_.insert(held_.end(), std::make_move_iterator(events.begin()),
                   std::make_move_iterator(events.end()));
      return;
    }
    on_events_(std::move(events));
  }

  void close(Result<void> result) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (paused_ || !held_.empty()) {
      held_closed_ = std::move(result);
      return;
    }
    close_locked(std::move(result));
  }

  void close_locked(Result<void> result) {
    if (stopped_ || closed_) return;
    closed_ = true;
    on_closed_(std::move(result));
  }

  WatchStreamParser parser_;  // I/O thread only
  ListWatch::EventsCallback on_events_;
  ListWatch::ClosedCallback on_closed_;
  std::atomic<bool> paused_{false};
  std::recursive_mutex mu_;                  // recursive: a callback may call stop()
  bool stopped_ = false;                     // guarded by mu_
  bool closed_ = false;                      // guarded by mu_
  std::vector<WatchEvent> held_;             // guarded by mu_; while paused
  std::optional<Result<void>> held_closed_;  // guarded by mu_; the end, behind held_
};

class HttpWatch final : public Watch {
 public:
  HttpWatch(std::shared_ptr<WatchSink> sink, std::shared_ptr<StreamHandle> stream)
      : sink_(std::move(sink)), stream_(std::move(stream)) {}
  ~HttpWatch() override { stop(); }
  void stop() override {
    sink_->stop();
    stream_->cancel();
  }
  void pause() override {
    sink_->pause();
    stream_->pause();
  }
  void resume() override {
    sink_->resume();
    stream_->resume();
  }

 private:
  std::shared_ptr<WatchSink> sink_;
  std::shared_ptr<StreamHandle> stream_;
};

}  // namespace

std::string collection_path(const std::string& group, const std::string& version, const std::string& resource,
                            const std::string& namespace_) {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (!namespace_.empty()) path += "/namespaces/" + namespace_;
  return path + "/" + resource;
}

std::string url_encode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

HttpListWatch::HttpListWatch(std::shared_ptr<Client> client, std::string collection_path)
    : client_(std::move(client)), path_(std::move(collection_path)) {}

void HttpListWatch::list(const ListOptions& options, ListCallback done) {
  std::string target = path_;
  if (options.limit > 0) add_query(target, "limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) add_query(target, "continue", options.continue_token);
  if (!options.resource_version.empty()) add_query(target, "resourceVersion", options.resource_version);
  if (!options.resource_version_match.empty())
    add_query(target, "resourceVersionMatch", options.resource_version_match);
  if (!options.label_selector.empty()) add_query(target, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) add_query(target, "fieldSelector", options.field_selector);
  Request request;
  request.target = std::move(target);
  client_->request(std::move(request), [done = std::move(done)](Result<Response> response) {
    if (!response) return done(std::move(response).error());
    if (response->status < 200 || response->status >= 300)
      return done(error_from_response(response->status, response->body, response->retry_after));
    done(decode_list(response->body, response->body.capacity()));
  });
}

std::unique_ptr<Watch> HttpListWatch::watch(const WatchOptions& options, EventsCallback on_events,
                                            ClosedCallback on_closed) {
  std::string target = path_;
  add_query(target, "watch", "true");
  if (!options.resource_version.empty()) add_query(target, "resourceVersion", options.resource_version);
  if (options.allow_watch_bookmarks) add_query(target, "allowWatchBookmarks", "true");
  if (options.send_initial_events) add_query(target, "sendInitialEvents", "true");
  if (!options.resource_version_match.empty())
    add_query(target, "resourceVersionMatch", options.resource_version_match);
  if (options.timeout_seconds > 0)
    add_query(target, "timeoutSeconds", std::to_string(options.timeout_seconds));
  if (!options.label_selector.empty()) add_query(target, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) add_query(target, "fieldSelector", options.field_selector);
  auto sink = std::make_shared<WatchSink>(client_->config().max_event_bytes, std::move(on_events),
                                          std::move(on_closed));
  // A server that overstays its own timeout by a minute is treated as a dead connection.
  const auto deadline = options.timeout_seconds > 0
                            ? std::chrono::milliseconds((options.timeout_seconds + 60) * 1000)
                            : std::chrono::milliseconds(0);
  auto stream = client_->stream(std::move(target), sink, deadline);
  return std::make_unique<HttpWatch>(std::move(sink), std::move(stream));
}

std::string HttpListWatch::resource() const { return path_.substr(path_.rfind('/') + 1); }

}  // namespace kinformer::http
