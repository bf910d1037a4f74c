// apiserver/storage/etcd/etcd_client.hpp
//
// EtcdClient: etcd 3.4's v3 API through its JSON gateway (grpc-gateway: POST
// /v3/kv/range, /v3/kv/txn, /v3/kv/compaction, /v3/maintenance/status, /v3/watch)
// over the project's Beast HTTP client (runtime/http/client.hpp), with several
// endpoints and failover between them. Keys and values are base64 on the wire;
// callers pass plain bytes through key()/value() helpers.
//
// Contract
//   * call(path, body) posts the JSON body to the current endpoint; a connection
//     failure or an "unavailable" answer moves to the next endpoint and tries again,
//     each endpoint once per call. The answer is the parsed JSON; its header.revision
//     is also remembered (last_revision()).
//   * Errors are EtcdErrors (etcd_error.hpp): unavailable or timed_out when no endpoint
//     answered (the last one's reason), compacted, future_revision, refused (any other
//     etcd error, with etcd's message), bad_answer for an answer that is not JSON.
//   * watch() opens /v3/watch with `create_request` on the current endpoint and
//     hands each JSON message of the stream to `on_message`; `on_end` runs once when
//     the stream ends (etcd gone, cancel). The caller reconnects: once a watch
//     failed, the next watch() uses the endpoint after the one it failed on (once,
//     however many watches failed there together).
// Threading: every member may be called from any thread; watch callbacks run on the
//   endpoint's I/O thread, one at a time.
// Not here: what the keys mean (apiserver/storage/etcd/etcd_storage.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apiserver/storage/etcd/etcd_error.hpp"
#include "runtime/http/client.hpp"
#include "runtime/result.hpp"

namespace kinformer::apiserver {

struct EtcdClientOptions {
  std::vector<std::string> endpoints;  // http://host:port, tried in order
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds connect_timeout{1000};
};

class EtcdClient {
 public:
  using MessageCallback = std::function<void(const nlohmann::json& message)>;
  using EndCallback = std::function<void(Result<void>)>;

  /// Errors: no endpoint, or one that is not an http:// URL (Errc::server_error).
  [[nodiscard]] static Result<std::unique_ptr<EtcdClient>> create(EtcdClientOptions options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  [[nodiscard]] EtcdResult<nlohmann::json> call(std::string_view path, const nlohmann::json& body);

  /// An open watch: cancel() ends it; no callback starts after cancel() returns.
  class Watch {
   public:
    virtual ~Watch() = default;
    virtual void cancel() = 0;
  };
  [[nodiscard]] std::unique_ptr<Watch> watch(const nlohmann::json& create_request, MessageCallback on_message,
                                             EndCallback on_end);

  /// The newest header.revision of any answer so far.
  std::int64_t last_revision() const { return last_revision_.load(); }
  /// The endpoint the next call tries first.
  std::string current_endpoint() const;

  /// Bytes as the gateway wants them (base64).
  static std::string encode(std::string_view bytes);
  /// The bytes of a base64 field ("" when absent or not base64).
  static std::string decode(const nlohmann::json& field);
  /// The end of the key range holding every key that starts with `prefix`.
  static std::string prefix_end(std::string prefix);
  /// An int64 field as the gateway sends it (a JSON string; 0 when absent).
  static std::int64_t number(const nlohmann::json& object, const char* field);

  struct Endpoint;

 private:
  explicit EtcdClient(std::vector<std::unique_ptr<Endpoint>> endpoints);
  void note_revision(const nlohmann::json& answer);

  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::atomic<std::size_t> current_{0};
  std::atomic<std::int64_t> last_revision_{0};
};

}  // namespace kinformer::apiserver
