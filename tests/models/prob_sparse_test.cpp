#include "models/prob_sparse.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <tuple>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
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

TEST_CASE("ProbSparse equals full attention when the factor selects every query",
          "[models][prob_sparse][unit]") {
  const int heads = 4, len = 30;  // factor 100 -> u = L_Q = 30
  Tensor q = random_tensor({2, len, 32}, 1), k = random_tensor({2, len, 32}, 2),
         v = random_tensor({2, len, 32}, 3);
  for (bool masked : {false, true}) {
    SECTION(masked ? "masked (causal)" : "unmasked") {
      models::SeededSampler sampler(7);
      Tensor sparse = ref::prob_attention(q, k, v, heads, masked, 100, sampler);
      Tensor full = ref::full_attention(q, k, v, heads, masked);
      CHECK(scaled_error(sparse, full) <= 1e-6);
    }
  }
}

TEST_CASE("ProbSparse differs from full attention when only some queries are selected",
          "[models][prob_sparse][unit]") {
  Tensor q = random_tensor({1, 96, 32}, 1), k = random_tensor({1, 96, 32}, 2),
         v = random_tensor({1, 96, 32}, 3);
  models::SeededSampler sampler(7);
  CHECK(scaled_error(ref::prob_attention(q, k, v, 4, true, 5, sampler),
                     ref::full_attention(q, k, v, 4, true)) > 1e-2);
}

TEST_CASE("the seeded sampler restarts at every forward pass, and seeds differ",
          "[models][prob_sparse][unit]") {
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

TEST_CASE("a forward pass makes one ProbSparse call per attention layer at the lengths distilling leaves",
          "[models][prob_sparse][unit]") {
  models::InformerConfig config;
  auto shapes = [&](int l_enc) {
    std::vector<std::tuple<int, int, int, bool>> out;
    for (const auto& c : models::prob_sparse_calls(config, l_enc, 72)) {
      CHECK(c.l_k == c.l_q);
      out.emplace_back(c.l_q, c.sample_k, c.n_top, c.masked);
    }
    return out;
  };
  // informer-model.md §3.4: [96,25], [48,20], [72,25]; for seq_len 720: [720,35], [360,30], [72,25].
  CHECK(shapes(96) == std::vector<std::tuple<int, int, int, bool>>{
                          {96, 25, 25, false}, {48, 20, 20, false}, {72, 25, 25, true}});
  CHECK(shapes(720) == std::vector<std::tuple<int, int, int, bool>>{
                           {720, 35, 35, false}, {360, 30, 30, false}, {72, 25, 25, true}});
  config.distil = false;
  CHECK(std::get<0>(shapes(96)[1]) == 96);
  config.attn = models::AttentionKind::full;
  CHECK(models::prob_sparse_calls(config, 96, 72).empty());
}

TEST_CASE("the fixed-selection sampler forces distinct in-range queries and the seeded key samples",
          "[models][prob_sparse][unit]") {
  models::InformerConfig config;
  auto calls = models::prob_sparse_calls(config, 96, 72);
  auto sampler = models::fixed_selection_sampler(calls, 2, config.n_heads, 5);
  models::SeededSampler seeded(5);
  sampler.begin_forward();
  seeded.begin_forward();
  for (const auto& c : calls) {
    std::vector<int32_t> idx(static_cast<size_t>(c.l_q * c.sample_k)), expected(idx.size());
    sampler.sample_keys(c.l_q, c.l_k, c.sample_k, idx.data());
    seeded.sample_keys(c.l_q, c.l_k, c.sample_k, expected.data());
    CHECK(idx == expected);
    std::vector<int32_t> top(static_cast<size_t>(2 * config.n_heads * c.n_top));
    REQUIRE(sampler.forced_queries(2, config.n_heads, c.n_top, top.data()));
    for (int p = 0; p < 2 * config.n_heads; ++p) {
      std::vector<int32_t> row(top.begin() + p * c.n_top, top.begin() + (p + 1) * c.n_top);
      std::sort(row.begin(), row.end());
      CHECK(std::adjacent_find(row.begin(), row.end()) == row.end());
      CHECK(row.front() >= 0);
      CHECK(row.back() < c.l_q);
    }
  }
}

TEST_CASE("two backends fed the fixed-selection sampler agree, so it can compare backends and precisions",
          "[models][prob_sparse][unit]") {
  models::InformerConfig config;
  config.d_model = 64;
  config.n_heads = 4;
  config.d_ff = 128;
  auto weights = models::random_weights(config, 21);
  const int batch = 2, l_enc = 97, l_dec = config.dec_len();
  Tensor x_enc = random_tensor({batch, l_enc, 7}, 1), x_mark_enc = random_tensor({batch, l_enc, 4}, 2),
         x_dec = random_tensor({batch, l_dec, 7}, 3), x_mark_dec = random_tensor({batch, l_dec, 4}, 4);
  auto calls = models::prob_sparse_calls(config, l_enc, l_dec);
  Tensor a, b;
  auto sa = models::fixed_selection_sampler(calls, batch, config.n_heads, 9);
  auto sb = models::fixed_selection_sampler(calls, batch, config.n_heads, 9);
  models::make_backend("reference", config, weights)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, a, sa);
#ifdef KINFORMER_HAVE_ONEDNN
  models::make_backend("onednn", config, weights)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b, sb);
  CHECK(scaled_error(b, a) <= 1e-4);
#else
  models::make_backend("reference", config, weights)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b, sb);
  CHECK(scaled_error(b, a) == 0.0);
#endif
}
