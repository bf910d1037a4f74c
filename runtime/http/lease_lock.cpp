#include "runtime/http/lease_lock.hpp"

#include <nlohmann/json.hpp>

#include "runtime/http/api_status.hpp"

namespace kinformer::http {

using nlohmann::json;

namespace {

Result<LeaseRecord> record_of(const std::string& body) {
  json lease = json::parse(body, nullptr, false);
  if (!lease.is_object() || !lease.contains("metadata") || !lease["metadata"].is_object())
    return {Errc::decode_failed, "the Lease answer is not a Lease object"};
  LeaseRecord r;
  r.resource_version = lease["metadata"].value("resourceVersion", "");
  const json spec = lease.value("spec", json::object());
  if (!spec.is_object()) return {Errc::decode_failed, "the Lease's spec is not an object"};
  auto text = [&](const char* key) {
    auto it = spec.find(key);
    return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [&](const char* key) -> std::int64_t {
    auto it = spec.find(key);
    return it != spec.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  };
  r.holder_identity = text("holderIdentity");
  r.acquire_time = text("acquireTime");
  r.renew_time = text("renewTime");
  r.lease_duration_seconds = number("leaseDurationSeconds");
  r.lease_transitions = number("leaseTransitions");
  return r;
}

class HttpLeaseLock final : public LeaseLock {
 public:
  HttpLeaseLock(std::shared_ptr<Client> client, std::string ns, std::string name)
      : client_(std::move(client)), ns_(std::move(ns)), name_(std::move(name)) {}

  void get(std::function<void(Result<std::optional<LeaseRecord>>)> done) override {
    client_->request({"GET", item(), "", "application/json"}, [done](Result<Response> r) {
      if (!r) return done(r.error());
      if (r->status == 404) return done(std::optional<LeaseRecord>{});
      if (r->status != 200) return done(error_from_response(r->status, r->body, r->retry_after));
      auto record = record_of(r->body);
      if (!record) return done(record.error());
      done(std::optional<LeaseRecord>(std::move(record).value()));
    });
  }

  void create(const LeaseRecord& record, Done done) override {
    client_->request({"POST", collection(), body(record).dump(), "application/json"},
                     answer(std::move(done)));
  }

  void update(const LeaseRecord& record, Done done) override {
    client_->request({"PUT", item(), body(record).dump(), "application/json"}, answer(std::move(done)));
  }

  std::string describe() const override { return ns_ + "/" + name_; }

 private:
  std::string collection() const { return "/apis/coordination.k8s.io/v1/namespaces/" + ns_ + "/leases"; }
  std::string item() const { return collection() + "/" + name_; }

  json body(const LeaseRecord& r) const {
    json meta = {{"name", name_}, {"namespace", ns_}};
    if (!r.resource_version.empty()) meta["resourceVersion"] = r.resource_version;
    json spec = {{"leaseDurationSeconds", r.lease_duration_seconds},
                 {"leaseTransitions", r.lease_transitions}};
    if (!r.holder_identity.empty()) spec["holderIdentity"] = r.holder_identity;
    if (!r.acquire_time.empty()) spec["acquireTime"] = r.acquire_time;
    if (!r.renew_time.empty()) spec["renewTime"] = r.renew_time;
    return {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"}, {"metadata", meta}, {"spec", spec}};
  }

  static std::function<void(Result<Response>)> answer(Done done) {
    return [done = std::move(done)](Result<Response> r) {
      if (!r) return done(r.error());
      if (r->status != 200 && r->status != 201)
        return done(error_from_response(r->status, r->body, r->retry_after));
      done(record_of(r->body));
    };
  }

  std::shared_ptr<Client> client_;
  std::string ns_;
  std::string name_;
};

}  // namespace

std::shared_ptr<LeaseLock> lease_lock(std::shared_ptr<Client> client, std::string namespace_name,
                                      std::string name) {
  return std::make_shared<HttpLeaseLock>(std::move(client), std::move(namespace_name), std::move(name));
}

}  // namespace kinformer::http
