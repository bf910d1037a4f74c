// apiserver/storage/etcd/txn_retry.hpp
//
// TxnRetry: the one retry loop of the etcd storage's writes. A write reads, computes and
// commits a Txn that compares what it read; when another writer changed that first, the
// Txn fails and the whole attempt runs again on the winner's result (kube-apiserver's
// GuaranteedUpdate). Waits between attempts come from runtime's Backoff.
//
//   TxnRetry retry;                                   // 16 attempts, 1 ms .. 64 ms with jitter
//   return retry.run<WriteResult>([&]() -> Attempt<WriteResult> { ... return Lost::modified; },
//                                 [&] { return ApiError::conflict(...); });
//
// Contract
//   * An attempt ends settled (an ApiResult: a value or a final error) or Lost (its
//     Txn's compare failed). run() returns the first settled result; after
//     max_attempts lost attempts it returns gave_up().
//   * The first lost attempt is retried at once: the winner's write is there to read.
//     Each later one first waits backoff.next(), so writers racing for one key spread out
//     instead of colliding in step.
// Threading: one TxnRetry per call; run() blocks in `sleep`. Errors: none of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <variant>

#include "apiserver/api_error.hpp"
#include "runtime/backoff.hpp"

namespace kinformer::apiserver {

/// Why an etcd Txn failed its compare: another writer got there first.
enum class Lost : std::uint8_t {
  name_taken,         // a create found the name in use
  namespace_changed,  // a create's namespace changed (e.g. it began terminating)
  modified,           // the key changed since it was read
};

template <class T>
using Attempt = std::variant<ApiResult<T>, Lost>;

struct TxnRetryOptions {
  int max_attempts = 16;
  // Short steps: a lost race costs one etcd round trip, so the wait need only
  // desynchronise the racers, not wait for a recovery.
  BackoffOptions backoff{std::chrono::milliseconds(1), 2.0, std::chrono::milliseconds(64), 1.0,
                         std::chrono::milliseconds(120'000)};
};

class TxnRetry {
 public:
  using Sleep = std::function<void(std::chrono::milliseconds)>;
  using Now = std::function<Backoff::TimePoint()>;

  /// Sleeps with std::this_thread::sleep_for, reads steady_clock, jitters at random.
  explicit TxnRetry(TxnRetryOptions options = {});
  /// For tests: a fake sleep, clock and random source.
  TxnRetry(TxnRetryOptions options, Sleep sleep, Now now, Backoff::Random random);

  template <class T, class AttemptFn, class GaveUpFn>
  ApiResult<T> run(AttemptFn&& attempt, GaveUpFn&& gave_up) {
    for (int attempts_lost = 0; attempts_lost < options_.max_attempts; ++attempts_lost) {
      if (attempts_lost > 1) sleep_(backoff_.next(now_()));
      Attempt<T> outcome = attempt();
      if (auto* settled = std::get_if<ApiResult<T>>(&outcome)) return std::move(*settled);
    }
    return gave_up();
  }

 private:
  TxnRetryOptions options_;
  Sleep sleep_;
  Now now_;
  Backoff backoff_;
};

}  // namespace kinformer::apiserver
