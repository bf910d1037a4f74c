#include "apiserver/storage/etcd/txn_retry.hpp"

#include <random>
#include <thread>
#include <utility>

namespace kinformer::apiserver {

namespace {

double uniform() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

}  // namespace

TxnRetry::TxnRetry(TxnRetryOptions options)
    : TxnRetry(options, [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); },
               [] { return std::chrono::steady_clock::now(); }, uniform) {}

TxnRetry::TxnRetry(TxnRetryOptions options, Sleep sleep, Now now, Backoff::Random random)
    : options_(options), sleep_(std::move(sleep)), now_(std::move(now)), backoff_(options.backoff, std::move(random)) {}

}  // namespace kinformer::apiserver
