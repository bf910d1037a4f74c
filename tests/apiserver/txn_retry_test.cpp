// TxnRetry (apiserver/storage/etcd/txn_retry.hpp) with a counting sleep and a fake clock.
#include "apiserver/storage/etcd/txn_retry.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

namespace kinformer::apiserver {
namespace {

using std::chrono::milliseconds;

struct FakeTime {
  Backoff::TimePoint now{};
  std::vector<milliseconds> waits;

  TxnRetry retry(TxnRetryOptions options = {}) {
    return TxnRetry(
        options,
        [this](milliseconds wait) {
          waits.push_back(wait);
          now += wait;
        },
        [this] { return now; }, [] { return 0.0; });  // no jitter: exact waits
  }
};

ApiError gave_up() { return ApiError::conflict("", "configmaps", "c", "kept changing"); }

TEST_CASE("a settled first attempt returns at once without waiting", "[apiserver][etcd][txn_retry][unit]") {
  FakeTime time;
  int calls = 0;
  auto result = time.retry().run<int>([&]() -> Attempt<int> { ++calls; return ApiResult<int>(7); }, gave_up);
  REQUIRE(result);
  CHECK(result.value() == 7);
  CHECK(calls == 1);
  CHECK(time.waits.empty());
}

TEST_CASE("a final error is returned, not retried", "[apiserver][etcd][txn_retry][unit]") {
  FakeTime time;
  int calls = 0;
  auto result = time.retry().run<int>(
      [&]() -> Attempt<int> {
        ++calls;
        return ApiResult<int>(ApiError::not_found("", "configmaps", "c"));
      },
      gave_up);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == 404);
  CHECK(calls == 1);
}

TEST_CASE("a lost race is retried at once, later ones after a growing back-off",
          "[apiserver][etcd][txn_retry][unit]") {
  FakeTime time;
  int calls = 0;
  auto result = time.retry().run<int>(
      [&]() -> Attempt<int> {
        if (++calls < 5) return Lost::modified;
        return ApiResult<int>(calls);
      },
      gave_up);
  REQUIRE(result);
  CHECK(result.value() == 5);
  // losses 1..4: the second attempt runs at once, the next three wait 1, 2, 4 ms
  CHECK(time.waits == std::vector<milliseconds>{milliseconds(1), milliseconds(2), milliseconds(4)});
}

TEST_CASE("max_attempts lost races give up with the caller's error", "[apiserver][etcd][txn_retry][unit]") {
  FakeTime time;
  TxnRetryOptions options;
  options.max_attempts = 10;
  int calls = 0;
  auto result = time.retry(options).run<int>([&]() -> Attempt<int> { ++calls; return Lost::name_taken; }, gave_up);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == 409);
  CHECK(calls == 10);
  REQUIRE(time.waits.size() == 8);
  CHECK(time.waits.back() == milliseconds(64));  // capped
}

}  // namespace
}  // namespace kinformer::apiserver
