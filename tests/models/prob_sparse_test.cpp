#include "models/prob_sparse.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "models/model_error.hpp"
#include "models/reference_layers.hpp"
#include "tests/models/golden_support.hpp"

using kinformer::models::Tensor;
using kinformer::testing::scaled_error;
namespace models = kinformer::models;
namespace ref = kinformer::models::reference;

namespace {

Tensor random_tensor(models::Shape shape, uint32_t seed) {
  Tensor t(std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  for (auto& v : t.data) v = n(rng);
  return t;
}

}  // namespace

TEST_CASE("sample and query counts follow c·ceil(ln L) capped at L", "[models][prob_sparse][unit]") {
  CHECK(models::prob_sample_count(5, 96) == 25);
  CHECK(models::prob_sample_count(5, 48) == 20);
  CHECK(models::prob_sample_count(5, 72) == 25);
  CHECK(models::prob_sample_count(5, 720) == 35);
  CHECK(models::prob_sample_count(5, 360) == 30);
  CHECK(models::prob_sample_count(100, 30) == 30);
}

TEST_CASE("ProbSparse equals full attention when the factor selects every query", "[models][prob_sparse][unit]") {
  const int heads = 4, len = 30;  // factor 100 -> u = L_Q = 30
  Tensor q = random_tensor({2, len, 32}, 1), k = random_tensor({2, len, 32}, 2), v = random_tensor({2, len, 32}, 3);
  for (bool masked : {false, true}) {
    SECTION(masked ? "masked (causal)" : "unmasked") {
      models::SeededSampler sampler(7);
      Tensor sparse = ref::prob_attention(q, k, v, heads, masked, 100, sampler);
      Tensor full = ref::full_attention(q, k, v, heads, masked);
      CHECK(scaled_error(sparse, full) <= 1e-6);
    }
  }
}

TEST_CASE("ProbSparse differs from full attention when only some queries are selected", "[models][prob_sparse][unit]") {
  Tensor q = random_tensor({1, 96, 32}, 1), k = random_tensor({1, 96, 32}, 2), v = random_tensor({1, 96, 32}, 3);
  models::SeededSampler sampler(7);
  CHECK(scaled_error(ref::prob_attention(q, k, v, 4, true, 5, sampler), ref::full_attention(q, k, v, 4, true)) > 1e-2);
}

TEST_CASE("the seeded sampler restarts at every forward pass, and seeds differ", "[models][prob_sparse][unit]") {
  models::SeededSampler a(11), b(12);
  std::vector<int32_t> first(96 * 25), second(96 * 25), other(96 * 25);
  a.begin_forward();
  a.sample_keys(96, 96, 25, first.data());
  a.begin_forward();
  a.sample_keys(96, 96, 25, second.data());
  b.begin_forward();
  b.sample_keys(96, 96, 25, other.data());
  CHECK(first == second);
  CHECK(first != other);
  for (auto i : first) REQUIRE((i >= 0 && i < 96));
}

TEST_CASE("the query selection keeps the largest sparsity measures", "[models][prob_sparse][unit]") {
  std::vector<float> m = {0.1f, 3.f, -1.f, 2.f, 0.5f};
  std::vector<int32_t> top(2), order(5);
  models::top_positions(m.data(), 5, 2, top.data(), order.data());
  std::sort(top.begin(), top.end());
  CHECK(top == std::vector<int32_t>{1, 3});
}

TEST_CASE("a replay sampler rejects a call whose shape was not captured", "[models][prob_sparse][unit]") {
  models::ReplaySampler sampler({{std::vector<int32_t>(4 * 2, 0), 4, 2, {}}});
  std::vector<int32_t> idx(100);
  sampler.begin_forward();
  CHECK_THROWS_AS(sampler.sample_keys(5, 5, 2, idx.data()), models::ModelError);
  sampler.begin_forward();
  CHECK_NOTHROW(sampler.sample_keys(4, 4, 2, idx.data()));
  CHECK_THROWS_WITH(sampler.sample_keys(4, 4, 2, idx.data()), Catch::Contains("was not captured"));
}
