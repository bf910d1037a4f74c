#include "apiserver/storage/etcd/etcd_client.hpp"

#include <mutex>
#include <nlohmann/json.hpp>

#include "apiserver/base64.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

struct EtcdClient::Endpoint {
  std::string url;
  std::shared_ptr<http::Client> client;
};

namespace {

// One JSON message per line: grpc-gateway separates a stream's messages with '\n'.
class WatchSink final : public http::StreamSink {
 public:
  WatchSink(EtcdClient::MessageCallback on_message, EtcdClient::EndCallback on_end)
      : on_message_(std::move(on_message)), on_end_(std::move(on_end)) {}

  void on_body(std::string_view piece) override { pending_.append(piece); }

  bool on_read() override {
    std::size_t start = 0;
    for (auto newline = pending_.find('\n'); newline != std::string::npos;
         newline = pending_.find('\n', start)) {
      auto message = json::parse(pending_.begin() + static_cast<std::ptrdiff_t>(start),
                                 pending_.begin() + static_cast<std::ptrdiff_t>(newline), nullptr, false);
      start = newline + 1;
      if (message.is_discarded())
        return finish(Error{Errc::decode_failed, "etcd watch: a message is not JSON"});
      if (!deliver(message)) return false;
    }
    pending_.erase(0, start);
    if (pending_.size() > max_message_bytes)
      return finish(Error{Errc::decode_failed,
                          "etcd watch: a message exceeds " + std::to_string(max_message_bytes) + " bytes"});
    return true;
  }

  void on_resume() override {}
  void on_end(Result<void> result) override { (void)finish(std::move(result)); }

  /// After cancel() returns, no callback starts.
  void cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
  }

 private:
  static constexpr std::size_t max_message_bytes = 256 * 1024 * 1024;

  bool deliver(const json& message) {
    std::lock_guard lock(mu_);
    if (cancelled_) return false;
    if (auto error = message.find("error"); error != message.end()) {
      ended_ = true;
      on_end_(gateway_error(200, message.dump()).to_error());
      return false;
    }
    on_message_(message.contains("result") ? message["result"] : message);
    return true;
  }

  bool finish(Result<void> result) {
    std::lock_guard lock(mu_);
    if (cancelled_ || ended_) return false;
    ended_ = true;
    on_end_(std::move(result));
    return false;
  }

  EtcdClient::MessageCallback on_message_;
  EtcdClient::EndCallback on_end_;
  std::string pending_;      // I/O thread only
  std::recursive_mutex mu_;  // callbacks versus cancel() (which a callback may call)
  bool cancelled_ = false;
  bool ended_ = false;
};

class OpenWatch final : public EtcdClient::Watch {
 public:
  OpenWatch(std::shared_ptr<WatchSink> sink, std::shared_ptr<http::StreamHandle> handle)
      : sink_(std::move(sink)), handle_(std::move(handle)) {}
  ~OpenWatch() override { cancel(); }
  void cancel() override {
    sink_->cancel();
    handle_->cancel();
  }

 private:
  std::shared_ptr<WatchSink> sink_;
  std::shared_ptr<http::StreamHandle> handle_;
};

}  // namespace

Result<std::unique_ptr<EtcdClient>> EtcdClient::create(EtcdClientOptions options) {
  if (options.endpoints.empty()) return Error{Errc::server_error, "no etcd endpoint given"};
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  for (const auto& url : options.endpoints) {
    if (url.rfind("http://", 0) != 0)
      return Error{Errc::server_error, "etcd endpoint \"" + url + "\": only http:// endpoints are supported"};
    http::ClientConfig config;
    config.server = url;
    config.connect_timeout = options.connect_timeout;
    config.request_timeout = options.request_timeout;
    config.max_idle_connections = 32;
    auto client = http::Client::create(config);
    if (!client) return Error{Errc::server_error, "etcd endpoint \"" + url + "\": " + client.error().message};
    endpoints.push_back(std::make_unique<Endpoint>(Endpoint{url, std::move(client).value()}));
  }
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(endpoints)));
}

EtcdClient::EtcdClient(std::vector<std::unique_ptr<Endpoint>> endpoints) : endpoints_(std::move(endpoints)) {}
EtcdClient::~EtcdClient() = default;

std::string EtcdClient::current_endpoint() const { return endpoints_[current_ % endpoints_.size()]->url; }

void EtcdClient::note_revision(const json& answer) {
  auto header = answer.find("header");
  if (header == answer.end()) return;
  auto revision = number(*header, "revision");
  auto seen = last_revision_.load();
  while (revision > seen && !last_revision_.compare_exchange_weak(seen, revision)) {
  }
}

EtcdResult<json> EtcdClient::call(std::string_view path, const json& body) {
  const std::string text = body.dump();
  EtcdError last{EtcdErrc::unavailable, "etcd unavailable"};
  const std::size_t first = current_.load();
  for (std::size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    const std::size_t index = (first + attempt) % endpoints_.size();
    auto& endpoint = *endpoints_[index];
    auto answer = endpoint.client->request_sync({"POST", std::string(path), text, "application/json"});
    if (!answer) {
      last = transport_error(endpoint.url, answer.error());
    } else if (answer->status == 200) {
      auto parsed = json::parse(answer->body, nullptr, false);
      if (parsed.is_discarded())
        return EtcdError{EtcdErrc::bad_answer, "etcd " + std::string(path) + ": the answer is not JSON"};
      current_ = index;
      note_revision(parsed);
      return parsed;
    } else {
      auto error = gateway_error(answer->status, answer->body);
      if (error.code != EtcdErrc::unavailable) return error;
      last = EtcdError{EtcdErrc::unavailable, error.message + " (" + endpoint.url + ")"};
    }
  }
  current_ = (first + 1) % endpoints_.size();  // the next call starts elsewhere
  return last;
}

std::unique_ptr<EtcdClient::Watch> EtcdClient::watch(const json& create_request, MessageCallback on_message,
                                                     EndCallback on_end) {
  const std::size_t index = current_ % endpoints_.size();
  auto& endpoint = *endpoints_[index];
  auto sink = std::make_shared<WatchSink>(
      std::move(on_message), [this, index, on_end = std::move(on_end)](Result<void> r) {
        // Reconnect elsewhere: only the first of the watches that failed on this
        // endpoint moves on, or as many failures would turn full circle.
        auto failed = index;
        if (!r) current_.compare_exchange_strong(failed, (index + 1) % endpoints_.size());
        on_end(std::move(r));
      });
  http::Request request{"POST", "/v3/watch", json{{"create_request", create_request}}.dump(),
                        "application/json"};
  auto handle = endpoint.client->stream(std::move(request), sink);
  return std::make_unique<OpenWatch>(std::move(sink), std::move(handle));
}

std::string EtcdClient::encode(std::string_view bytes) { return base64_encode(bytes); }

std::string EtcdClient::decode(const json& field) {
  if (!field.is_string()) return {};
  return base64_decode(field.get_ref<const std::string&>()).value_or(std::string());
}

std::string EtcdClient::prefix_end(std::string prefix) {
  // etcd's GetPrefixRangeEnd: the prefix with its last byte below 0xff incremented.
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last < 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

std::int64_t EtcdClient::number(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) return std::strtoll(it->get_ref<const std::string&>().c_str(), nullptr, 10);
  return 0;
}

}  // namespace kinformer::apiserver
