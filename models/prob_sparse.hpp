// models/prob_sparse.hpp
//
// The random and the selection half of ProbSparse self-attention
// (informer-model.md §3.4 steps 1-5), shared by every backend: how many keys are
// sampled and queries kept, where the key sample comes from, and which queries win.
//
// Contract
//   * A ProbSparseSampler is asked once per ProbSparse attention call, in forward
//     order (encoder layer 0, 1, ..., decoder self-attention layers), for one index
//     tensor idx [l_q, sample_k] shared by every batch element and head (§9.3).
//   * SeededSampler (the default) restarts from its seed at begin_forward(), so a
//     forward pass is a pure function of (weights, input, seed): the same request
//     gives the same forecast whatever ran before.
//   * ReplaySampler feeds captured idx (and optionally top) tensors back, for tests.
//   * select_queries computes M = max_j QK − (Σ_j QK)/L_K over the sampled keys
//     (unscaled, divisor L_K: §9.2) and keeps the n_top largest per (batch, head).
// Threading: a sampler belongs to one forward pass at a time.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "models/informer_config.hpp"

namespace kinformer::models {

/// min(factor·⌈ln length⌉, length): sample_k for L_K, n_top (u) for L_Q.
int prob_sample_count(int factor, int length);

class ProbSparseSampler {
 public:
  virtual ~ProbSparseSampler() = default;
  /// Called at the start of every forward pass.
  virtual void begin_forward() {}
  /// Fills idx [l_q * sample_k] with key positions in [0, l_k).
  virtual void sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) = 0;
  /// Tests may force the selected queries: fill top [batch*heads*n_top], return true.
  virtual bool forced_queries(int batch, int heads, int n_top, int32_t* top) {
    (void)batch, (void)heads, (void)n_top, (void)top;
    return false;
  }
};

/// Uniform draws with replacement from a 32-bit Mersenne twister (mapping done
/// here, not by std::uniform_int_distribution, so the stream is the same with
/// every standard library).
class SeededSampler final : public ProbSparseSampler {
 public:
  explicit SeededSampler(uint64_t seed = 2021) : seed_(seed), rng_(static_cast<uint32_t>(seed)) {}
  void begin_forward() override { rng_.seed(static_cast<uint32_t>(seed_)); }
  void sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) override;

 private:
  uint64_t seed_;
  std::mt19937 rng_;
};

/// Replays captured tensors in call order; throws ModelError when a call's shape
/// differs from the captured one or more calls come than were captured.
class ReplaySampler final : public ProbSparseSampler {
 public:
  struct Call {
    std::vector<int32_t> idx;  // [l_q, sample_k]
    int l_q = 0, sample_k = 0;
    std::vector<int32_t> top;  // [batch, heads, n_top], empty: compute the selection
  };
  explicit ReplaySampler(std::vector<Call> calls) : calls_(std::move(calls)) {}
  void begin_forward() override { next_idx_ = next_top_ = 0; }
  void sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) override;
  bool forced_queries(int batch, int heads, int n_top, int32_t* top) override;

 private:
  std::vector<Call> calls_;
  size_t next_idx_ = 0, next_top_ = 0;
};

/// One ProbSparse attention call of a forward pass: its lengths and counts.
struct ProbSparseCall {
  int l_q = 0, l_k = 0, sample_k = 0, n_top = 0;
  bool masked = false;
};

/// Every ProbSparse call of one forward pass, in the order the sampler is asked
/// (encoder layers at the lengths distilling leaves, then the decoder
/// self-attentions); empty when config.attn is full.
std::vector<ProbSparseCall> prob_sparse_calls(const InformerConfig& config, int l_enc, int l_dec);

/// Seeded key samples and a fixed, seeded choice of n_top distinct queries per
/// (batch, head) for every call: two backends (or precisions) fed this sampler do
/// the same arithmetic, free of the selection's near-tie sensitivity (§3.4).
ReplaySampler fixed_selection_sampler(const std::vector<ProbSparseCall>& calls, int batch, int heads, uint32_t seed);

/// M[l] for one (batch b, head h): Q and K rows are `ld` floats apart, element
/// (b, l, h, e) at q[(b*l_q + l)*ld + h*head_dim + e].
void sparsity_measure(const float* q, const float* k, int ld, int b, int h, int head_dim, int l_q, int l_k,
                      const int32_t* idx, int sample_k, float* m);

/// The n_top positions with the largest m (order unspecified, like topk(sorted=False)).
/// `order` is scratch space for l_q entries.
void top_positions(const float* m, int l_q, int n_top, int32_t* top, int32_t* order);

/// Steps 3-5 for every (batch, head): top [batch, heads, n_top]. Uses the sampler's
/// forced queries when it has them. `parallel` spreads (b, h) over OpenMP threads.
/// Scratch: m_scratch and order_scratch hold batch*heads*l_q entries each (so the
/// call allocates nothing).
void select_queries(ProbSparseSampler& sampler, const float* q, const float* k, int ld, int batch, int heads,
                    int head_dim, int l_q, int l_k, const int32_t* idx, int sample_k, int n_top, int32_t* top,
                    float* m_scratch, int32_t* order_scratch, bool parallel);

}  // namespace kinformer::models
