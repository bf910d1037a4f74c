// models/onednn/primitives.hpp
//
// The oneDNN side of an execution plan (internal to models/onednn/): the Engine a
// backend runs on, a Plan (buffers and steps for one input shape), and PlanBuilder,
// which wraps each oneDNN primitive we use (matmul, conv, layer norm, softmax, max
// pool, reorder) and our own OpenMP loops as steps appended to a Plan.
//
// Contract
//   * A Plan owns every memory object its steps touch; running it allocates nothing
//     (user-managed scratchpad: models/onednn/plan_cache.cpp sizes and binds it).
//   * Steps run in order: a primitive on the Engine's stream, a loop after the stream
//     has drained. So one staging buffer (bf16) serves every step.
//   * Weights are wrapped in place (never copied) except where a kernel wants its own
//     layout (conv, reordered once per plan) or bf16 (Linears: once per Engine, keyed
//     by the fp32 tensor's address, which RearrangedWeights keeps stable).
// Threading: one thread at a time (the owning backend's forecast).
// Errors: dnnl::error from any primitive creation or reorder.
#pragma once

#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
#include "models/tensor.hpp"

namespace kinformer::models::onednn {

using dnnl::memory;
using tag = memory::format_tag;
using dims = memory::dims;

inline float* fptr(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

struct Engine {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  bool bf16 = false;
  // bf16 copies of the Linear weights ([in, out], "ba"), made on first use and kept
  // for the backend's life; keyed by the fp32 tensor's data (stable: the weights and
  // the rearranged tensors never change).
  std::unordered_map<const float*, memory> bf16_weights;
};

// One step of an execution plan: a oneDNN primitive with its arguments, or one of
// our loops (which runs after the stream has drained).
struct Step {
  std::optional<dnnl::primitive> primitive;
  std::unordered_map<int, memory> args;  // owns the memory objects
  std::vector<dnnl_exec_arg_t> c_args;   // the same, for the C API: execute() without a per-call vector
  memory::desc scratchpad;
  std::function<void()> loop;
};

struct Plan {
  std::vector<memory> buffers;  // every allocation of the plan, kept alive here
  std::vector<int32_t> idx, top, order;
  std::vector<float> m_scratch;
  std::vector<Step> steps;
  memory x_enc, x_mark_enc, x_dec, x_mark_dec, projected;
  ProbSparseSampler* sampler = nullptr;  // valid during a run only
  Trace* trace = nullptr;                // ditto
};

// Builds a Plan for one input shape: allocates buffers, creates primitives, and
// records the steps in execution order.
class PlanBuilder {
 public:
  PlanBuilder(Engine& engine, Plan& plan, int64_t batch, int64_t d_model);

  Plan& plan() { return plan_; }

  /// bf16: one staging buffer for the bf16 copy of every low-precision input (steps
  /// run in order, so one buffer as large as the largest input serves them all).
  void alloc_bf16_stage(int64_t elements);

  bool bf16() const { return engine_.bf16; }

  /// A bf16 buffer of its own (not the stage), for activations kept in bf16.
  memory alloc_bf16(int64_t elements);

  memory bf16_rows(const memory& base, int64_t n, int64_t width) const;

  /// A Linear whose input is already bf16 (the output of another bf16 Linear).
  void linear_from_bf16(const memory& src_bf16_rows, const Tensor& w, const Tensor& b, const memory& dst_rows,
                        bool accumulate);

  /// An fp32 buffer of its own, kept alive by the plan.
  memory alloc(int64_t floats);

  /// `base` seen from `offset` floats on with dims `d` and layout `t` (no copy).
  memory view(const memory& base, const dims& d, tag t, int64_t offset = 0) const;

  /// Our own step (an OpenMP loop), run after the stream has drained.
  void loop(std::function<void()> f);

  /// dst (+)= src · weights (+ bias), then the optional activation.
  void matmul(const memory& src, const memory& weights, const memory* bias, const memory& dst, bool accumulate,
              std::optional<dnnl::algorithm> activation = std::nullopt);

  /// Linear over rows: dst [rows, out] (+)= src [rows, in] · Wᵀ + b, W stored [out, in] as PyTorch does.
  /// With bf16: src and W in bf16, bias, accumulation, post-ops and dst in fp32.
  void linear(const memory& src_rows, const Tensor& w, const Tensor& b, const memory& dst_rows, bool accumulate,
              std::optional<dnnl::algorithm> activation = std::nullopt);

  /// Conv1d k=3 over an already circularly padded [B, L+2, C] buffer into dst [B, L, O] (nwc).
  /// `low_precision`: with bf16, src and weights in bf16 (fp32 bias, accumulation, dst).
  void conv3(const memory& padded, int64_t len, int64_t channels, const Tensor& w, const Tensor& bias, const memory& dst,
             bool elu, bool low_precision = false);

  void layer_norm(const memory& src, const memory& dst, int64_t rows, const NormWeights& w);

  void softmax_rows(const memory& buf, int64_t rows, int64_t cols);

  void max_pool(const memory& src, int64_t len, const memory& dst);

  /// Circular padding by one step at each end: [x[L−1], x[0..L−1], x[0]] per batch element.
  void circular_pad(const memory& src, int64_t len, int64_t channels, const memory& padded);

  /// A loop step copying `floats` floats.
  void copy(const memory& src, const memory& dst, int64_t floats);

  /// A loop step that, when the run has a trace, stores the buffer in it under `name`.
  void record(const char* name, const memory& buf, Shape shape);

 private:
  /// A reorder step writing a bf16 copy of `src` (same dims and layout) into the stage.
  memory to_bf16(const memory& src);

  static tag plain_tag(size_t rank) { return rank == 2 ? tag::ab : rank == 3 ? tag::abc : tag::abcd; }

  /// The bf16 copy of a Linear weight as a [in, out] matrix, converted on first use.
  memory bf16_weight(const Tensor& w);

  /// oneDNN only reads weights; the const_cast lets a memory object wrap them in place.
  memory weight(const Tensor& t, const dims& d, tag tg) const;

  void add(dnnl::primitive p, std::unordered_map<int, memory> args, const memory::desc& scratchpad);

  static dnnl::primitive_attr attr_with(const dnnl::post_ops& po);

  Engine& engine_;
  const dnnl::engine& eng_;
  Plan& plan_;
  const int64_t b_, d_;
  memory bf16_stage_;  // bf16 only: see alloc_bf16_stage()
};

}  // namespace kinformer::models::onednn
