// models/cuda/forward_plan.hpp
//
// ForwardPlan: the Informer forward pass (informer-model.md §2) for one input shape
// (B, L_enc, L_dec) on one Device: every buffer it needs, allocated once, and the
// sequence of cuBLAS, cuDNN and own-kernel launches, which can run eagerly or be
// captured once as a CUDA graph and replayed.
//
// Contract
//   * Construction allocates everything: one device block, one pinned block for the
//     inputs (+ the ProbSparse indices) and one for the output. stage(), run_eager()
//     without a trace, capture() and replay() allocate nothing on host or device
//     (capture() lets the driver build the graph, once).
//   * stage() writes the inputs and asks the sampler, in forward order, for every
//     ProbSparse call's key sample and forced queries (as the reference does), and
//     checks their ranges (a bad index would be an out-of-bounds GPU read).
//   * The graph reads the pinned input block and writes the pinned output block, so
//     a replay after stage() computes the new input's forecast.
// Threading: the owning backend's forecast only. Errors: BackendError, ModelError.
#pragma once

#include <string>
#include <vector>

#include "models/backend.hpp"
#include "models/cuda/device.hpp"
#include "models/prob_sparse.hpp"

namespace kinformer::models::cuda {

class ForwardPlan {
 public:
  ForwardPlan(Device& device, const InformerConfig& config, int64_t batch, int64_t l_enc, int64_t l_dec);
  ~ForwardPlan();
  ForwardPlan(const ForwardPlan&) = delete;
  ForwardPlan& operator=(const ForwardPlan&) = delete;

  /// Copies the inputs and this call's sampling into the pinned input block.
  void stage(const ForecastInput& in, ProbSparseSampler& sampler);
  /// Runs the whole pass now and waits; `trace` (may be null) gets every §2 intermediate.
  void run_eager(Trace* trace);
  /// Records the pass as a CUDA graph (without running it). False, with *why, when
  /// the capture failed; the plan then keeps running eagerly.
  bool capture(std::string* why);
  bool has_graph() const { return graph_ != nullptr; }
  /// Launches the captured graph and waits.
  void replay();
  /// [B, L_dec, c_out] in pinned memory, valid after run_eager() or replay().
  const float* projected() const { return host_out_; }

 private:
  void enqueue();
  void record(const char* name, const float* buffer, Shape shape);
  void linear(const float* x, int64_t rows, const LinearOnDevice& l, float* y, float beta = 0.f);
  void conv3(const float* padded, int64_t len, int64_t channels, const std::array<LinearOnDevice, 3>& taps,
             float* y);
  void embedding(const float* x, const float* mark, int64_t len, int64_t channels, const EmbeddingOnDevice& e,
                 float* out);
  void distil(float* x, int64_t len, const DistilOnDevice& d);
  void self_attention_block(const float* src, float* dst, int64_t len, const AttentionOnDevice& a,
                            bool masked, bool mix, const NormOnDevice& norm, size_t& call);
  void cross_attention_block(const float* src, const float* enc_out, int64_t enc_len, float* dst,
                             const AttentionOnDevice& a, const NormOnDevice& norm);
  void feed_forward_block(const float* src, float* dst, int64_t len, const LinearOnDevice& ffn1,
                          const LinearOnDevice& ffn2, const NormOnDevice& norm);
  void prob_core(int64_t len, bool masked, size_t call);
  void full_core(int64_t l_q, int64_t l_k, bool causal);
  void add_norm(float* out, const float* residual, const float* y, size_t bias, const NormOnDevice& norm,
                int64_t rows);

  Device& dev_;
  const InformerConfig& c_;
  const int64_t b_, l_enc_, l_dec_, d_, h_, dk_, ff_;
  const std::vector<ProbSparseCall> calls_;
  Trace* trace_ = nullptr;  // set during run_eager only

  // Pinned input block layout (byte offsets), mirrored 1:1 in the device block at in_.
  size_t in_bytes_ = 0, x_enc_at_ = 0, x_mark_enc_at_ = 0, x_dec_at_ = 0, x_mark_dec_at_ = 0, flags_at_ = 0;
  std::vector<size_t> idx_at_, forced_at_;
  char* host_in_ = nullptr;
  float* host_out_ = nullptr;
  size_t out_bytes_ = 0;

  void* block_ = nullptr;  // the one device allocation; every pointer below points into it
  char* in_ = nullptr;
  float *padded_ = nullptr, *x_ = nullptr, *x1_ = nullptr, *y_ = nullptr, *enc_out_ = nullptr,
        *qkv_ = nullptr, *kv_ = nullptr, *qh_ = nullptr, *kh_ = nullptr, *vh_ = nullptr, *context_ = nullptr,
        *merged_ = nullptr, *hidden_ = nullptr, *scores_ = nullptr, *probs_ = nullptr, *qsel_ = nullptr,
        *sel_ = nullptr, *m_ = nullptr, *projected_ = nullptr;
  int32_t* top_ = nullptr;
  void* half_ = nullptr;  // 16-bit copies of product operands (half precisions only)

  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace kinformer::models::cuda
