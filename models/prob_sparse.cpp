#include "models/prob_sparse.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "models/model_error.hpp"

namespace kinformer::models {

int prob_sample_count(int factor, int length) {
  return std::min(factor * static_cast<int>(std::ceil(std::log(static_cast<double>(length)))), length);
}

void SeededSampler::sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) {
  for (int64_t i = 0; i < static_cast<int64_t>(l_q) * sample_k; ++i)
    idx[i] = static_cast<int32_t>((static_cast<uint64_t>(rng_()) * static_cast<uint64_t>(l_k)) >> 32);
}

void ReplaySampler::sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) {
  if (next_idx_ >= calls_.size())
    throw ModelError("ReplaySampler: ProbSparse call " + std::to_string(next_idx_) + " was not captured");
  const Call& c = calls_[next_idx_++];
  if (c.l_q != l_q || c.sample_k != sample_k)
    throw ModelError("ReplaySampler: call " + std::to_string(next_idx_ - 1) + " wants idx [" + std::to_string(l_q) + ", " +
                     std::to_string(sample_k) + "], captured [" + std::to_string(c.l_q) + ", " +
                     std::to_string(c.sample_k) + "]");
  for (size_t i = 0; i < c.idx.size(); ++i) {
    if (c.idx[i] < 0 || c.idx[i] >= l_k) throw ModelError("ReplaySampler: key index out of range");
    idx[i] = c.idx[i];
  }
}

bool ReplaySampler::forced_queries(int batch, int heads, int n_top, int32_t* top) {
  if (next_top_ >= calls_.size() || calls_[next_top_].top.empty()) {
    ++next_top_;
    return false;
  }
  const Call& c = calls_[next_top_++];
  if (c.top.size() != static_cast<size_t>(batch) * heads * n_top)
    throw ModelError("ReplaySampler: captured top has " + std::to_string(c.top.size()) + " entries, call needs " +
                     std::to_string(batch * heads * n_top));
  std::copy(c.top.begin(), c.top.end(), top);
  return true;
}

std::vector<ProbSparseCall> prob_sparse_calls(const InformerConfig& config, int l_enc, int l_dec) {
  std::vector<ProbSparseCall> calls;
  if (config.attn != AttentionKind::prob) return calls;
  auto add = [&](int len, bool masked) {
    calls.push_back({len, len, prob_sample_count(config.factor, len), prob_sample_count(config.factor, len), masked});
  };
  int len = l_enc;
  for (int i = 0; i < config.e_layers; ++i) {
    add(len, false);
    if (config.distil && i + 1 < config.e_layers) len = (len - 1) / 2 + 1;  // the ConvLayer after layer i (§3.6)
  }
  for (int i = 0; i < config.d_layers; ++i) add(l_dec, true);
  return calls;
}

ReplaySampler fixed_selection_sampler(const std::vector<ProbSparseCall>& calls, int batch, int heads, uint32_t seed) {
  SeededSampler keys(seed);
  keys.begin_forward();
  std::mt19937 rng(seed + 1);
  std::vector<ReplaySampler::Call> replay;
  std::vector<int32_t> positions;
  for (const auto& c : calls) {
    ReplaySampler::Call r;
    r.l_q = c.l_q;
    r.sample_k = c.sample_k;
    r.idx.resize(static_cast<size_t>(c.l_q) * static_cast<size_t>(c.sample_k));
    keys.sample_keys(c.l_q, c.l_k, c.sample_k, r.idx.data());
    positions.resize(static_cast<size_t>(c.l_q));
    for (int p = 0; p < batch * heads; ++p) {
      std::iota(positions.begin(), positions.end(), 0);
      std::shuffle(positions.begin(), positions.end(), rng);
      r.top.insert(r.top.end(), positions.begin(), positions.begin() + c.n_top);
    }
    replay.push_back(std::move(r));
  }
  return ReplaySampler(std::move(replay));
}

namespace {

// The sampled dot products are most of the query selection's time (13 % of a seq-720
// forward pass in perf, in a serial chain of adds). Sixteen partial sums let the compiler
// use whole vectors, and target_clones picks the widest ISA at load time while the build
// stays baseline x86-64. The sum is reassociated, as in the official code's matmul.
// Not in sanitizer builds: the clones' ifunc resolver runs during relocation, before
// the sanitizer's runtime is up, and crashed TSan's actors_tests at start-up. (models/
// cannot use runtime/sanitizers.hpp; clang, the ASan build's compiler, gets no clones.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
float dot(const float* a, const float* b, int n) {
  constexpr int lanes = 16;
  float partial[lanes] = {};
  int e = 0;
  for (; e + lanes <= n; e += lanes)
    for (int l = 0; l < lanes; ++l) partial[l] += a[e + l] * b[e + l];
  for (int l = 0; e < n; ++e, ++l) partial[l] += a[e] * b[e];
  for (int width = lanes / 2; width > 0; width /= 2)  // a tree, not a chain of 16 scalar adds
    for (int l = 0; l < width; ++l) partial[l] += partial[l + width];
  return partial[0];
}

}  // namespace

void sparsity_measure(const float* q, const float* k, int ld, int b, int h, int head_dim, int l_q, int l_k,
                      const int32_t* idx, int sample_k, float* m) {
  for (int i = 0; i < l_q; ++i) {
    const float* qi = q + (static_cast<int64_t>(b) * l_q + i) * ld + h * head_dim;
    float max_score = -INFINITY, sum = 0.f;
    for (int j = 0; j < sample_k; ++j) {
      const float* kj = k + (static_cast<int64_t>(b) * l_k + idx[static_cast<int64_t>(i) * sample_k + j]) * ld + h * head_dim;
      const float score = dot(qi, kj, head_dim);
      max_score = std::max(max_score, score);
      sum += score;
    }
    m[i] = max_score - sum / static_cast<float>(l_k);
  }
}

void top_positions(const float* m, int l_q, int n_top, int32_t* top, int32_t* order) {
  std::iota(order, order + l_q, 0);
  std::nth_element(order, order + (n_top - 1), order + l_q,
                   [m](int32_t a, int32_t b) { return m[a] > m[b] || (m[a] == m[b] && a < b); });
  std::copy(order, order + n_top, top);
}

void select_queries(ProbSparseSampler& sampler, const float* q, const float* k, int ld, int batch, int heads,
                    int head_dim, int l_q, int l_k, const int32_t* idx, int sample_k, int n_top, int32_t* top,
                    float* m_scratch, int32_t* order_scratch, bool parallel) {
  if (sampler.forced_queries(batch, heads, n_top, top)) return;
  const int pairs = batch * heads;
#pragma omp parallel for if (parallel) schedule(static)
  for (int p = 0; p < pairs; ++p) {
    float* m = m_scratch + static_cast<int64_t>(p) * l_q;
    sparsity_measure(q, k, ld, p / heads, p % heads, head_dim, l_q, l_k, idx, sample_k, m);
    top_positions(m, l_q, n_top, top + static_cast<int64_t>(p) * n_top, order_scratch + static_cast<int64_t>(p) * l_q);
  }
}

}  // namespace kinformer::models
