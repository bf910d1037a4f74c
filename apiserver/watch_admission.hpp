// apiserver/watch_admission.hpp
//
// WatchAdmission: how many full-state watches may be open at once, in all and per client
// (issue 33, finding 7). A watch without a resourceVersion starts with a synthetic ADDED
// for every object it matches, so 1000 of them on 3000 objects, from clients that do not
// read, kept the I/O threads copying the whole state 1000 times into socket buffers and
// delayed every write and GET by 4.5-10 s. kube-apiserver bounds the same work with
// --max-requests-inflight (and APF); this is that bound for full-state watches.
//
// Contract
//   * try_acquire(client) takes a slot when fewer than max_total are taken and fewer
//     than max_per_client by `client` (its IP address); else false, and the server
//     answers 429 TooManyRequests with "Retry-After: 1", as kube-apiserver does.
//   * release(client) gives one back when the watch's connection closes. The slot is
//     held for the watch's whole life, not until its initial state is written: a
//     client that does not read leaves that state in its socket's buffers, so "written"
//     would free the slot while the memory and the copying it cost stay. Every
//     successful try_acquire() is released exactly once.
//   * A watch from a resourceVersion, or on an empty collection, takes no slot: it
//     sends only events, which the shared history bounds.
// Threading: every member is thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kinformer::apiserver {

struct WatchAdmissionLimits {
  std::size_t max_total = 200;      // open watches that began with the full state
  std::size_t max_per_client = 50;  // ... from one IP address
};

class WatchAdmission {
 public:
  explicit WatchAdmission(WatchAdmissionLimits limits = {}) : limits_(limits) {}
  [[nodiscard]] bool try_acquire(const std::string& client);
  void release(const std::string& client);

 private:
  const WatchAdmissionLimits limits_;
  std::mutex mu_;
  std::size_t total_ = 0;                              // guarded by mu_
  std::unordered_map<std::string, std::size_t> per_client_;  // guarded by mu_; no zero counts
};

}  // namespace kinformer::apiserver
