// The CUDA backend's row-major -> cuBLAS column-major mapping and its k=3 convolution
// as three shifted products (models/cuda/gemm_mapping.hpp), checked on the CPU: a
// plain emulation of cublasGemmStridedBatchedEx (with cuBLAS's rules on the leading
// dimensions) runs each call the forward pass makes, against naive row-major loops
// and the reference backend's convolution. Runs without a GPU.
#include <catch2/catch.hpp>
#include <random>

#include "models/cuda/gemm_mapping.hpp"
#include "models/informer_weights.hpp"
#include "models/reference_layers.hpp"

namespace cuda = kinformer::models::cuda;
namespace models = kinformer::models;
using cuda::ColumnMajorGemm;

namespace {

// cublasGemmStridedBatchedEx on fp32 data, column-major, as its documentation defines it.
void emulate(const ColumnMajorGemm& g, float alpha, float beta, float* c) {
  REQUIRE(g.lda >= (g.transpose_a ? g.k : g.m));  // cuBLAS returns CUBLAS_STATUS_INVALID_VALUE otherwise
  REQUIRE(g.ldb >= (g.transpose_b ? g.n : g.k));
  REQUIRE(g.ldc >= g.m);
  const auto* a = static_cast<const float*>(g.a);
  const auto* b = static_cast<const float*>(g.b);
  for (int p = 0; p < g.batch; ++p)
    for (int j = 0; j < g.n; ++j)
      for (int i = 0; i < g.m; ++i) {
        double s = 0;
        for (int l = 0; l < g.k; ++l) {
          const float av = g.transpose_a ? a[p * g.stride_a + l + static_cast<long long>(i) * g.lda]
                                         : a[p * g.stride_a + i + static_cast<long long>(l) * g.lda];
          const float bv = g.transpose_b ? b[p * g.stride_b + j + static_cast<long long>(l) * g.ldb]
                                         : b[p * g.stride_b + l + static_cast<long long>(j) * g.ldb];
          s += static_cast<double>(av) * bv;
        }
        float& out = c[p * g.stride_c + i + static_cast<long long>(j) * g.ldc];
        out = static_cast<float>(alpha * s + beta * out);
      }
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("a Linear maps to one cuBLAS call whose result is x times W transposed, with beta accumulating",
          "[models][cuda][unit]") {
  const int64_t rows = 5, in = 8, out = 3;
  auto x = random_values(rows * in, 1), w = random_values(out * in, 2);
  std::vector<float> y(rows * out, 0.5f);
  emulate(cuda::to_column_major(true, rows, out, in, {x.data(), in}, {w.data(), in}, out, 0, 1), 1.f, 1.f,
          y.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = 0.5;
      for (int64_t i = 0; i < in; ++i) s += static_cast<double>(x[r * in + i]) * w[o * in + i];
      CHECK(y[r * out + o] == Approx(s).epsilon(1e-5));
    }
}

TEST_CASE("the attention products map to strided-batched cuBLAS calls over (batch, head)",
          "[models][cuda][unit]") {
  const int64_t bh = 3, u = 4, len = 7, dk = 6;
  auto q = random_values(bh * u * dk, 3), k = random_values(bh * len * dk, 4),
       v = random_values(bh * len * dk, 5);
  std::vector<float> scores(bh * u * len), context(bh * u * dk);
  const float scale = 0.125f;
  emulate(cuda::to_column_major(true, u, len, dk, {q.data(), dk, u * dk}, {k.data(), dk, len * dk}, len,
                                u * len, bh),
          scale, 0.f, scores.data());
  emulate(cuda::to_column_major(false, u, dk, len, {scores.data(), len, u * len}, {v.data(), dk, len * dk},
                                dk, u * dk, bh),
          1.f, 0.f, context.data());
  for (int64_t p = 0; p < bh; ++p)
    for (int64_t r = 0; r < u; ++r) {
      for (int64_t s = 0; s < len; ++s) {
        double dot = 0;
        for (int64_t e = 0; e < dk; ++e)
          dot += static_cast<double>(q[(p * u + r) * dk + e]) * k[(p * len + s) * dk + e];
        CHECK(scores[(p * u + r) * len + s] == Approx(scale * dot).epsilon(1e-5));
      }
      for (int64_t e = 0; e < dk; ++e) {
        double sum = 0;
        for (int64_t s = 0; s < len; ++s)
          sum += static_cast<double>(scores[(p * u + r) * len + s]) * v[(p * len + s) * dk + e];
        CHECK(context[(p * u + r) * dk + e] == Approx(sum).epsilon(1e-5).margin(1e-6));
      }
    }
}

TEST_CASE("three shifted products over a circularly padded input equal the reference circular convolution",
          "[models][cuda][unit]") {
  for (int64_t len : {1, 2, 5}) {
    SECTION("length " + std::to_string(len)) {
      const int64_t batch = 2, channels = 3, out = 4;
      models::Tensor x({batch, len, channels}), w({out, channels, 3}), bias({out});
      x.data = random_values(x.data.size(), 6);
      w.data = random_values(w.data.size(), 7);
      bias.data = random_values(bias.data.size(), 8);
      // The padding kernel's index rule (layer_kernels.cu): padded t reads x[(t − 1 + L) mod L].
      std::vector<float> padded(batch * (len + 2) * channels);
      for (int64_t i = 0; i < static_cast<int64_t>(padded.size()); ++i) {
        const int64_t c = i % channels, t = i / channels % (len + 2), b = i / channels / (len + 2);
        padded[i] = x.data[(b * len + (t - 1 + len) % len) * channels + c];
      }
      std::vector<float> y(batch * len * out);
      const int64_t stride = (len + 2) * channels;
      for (int64_t j = 0; j < 3; ++j) {
        auto tap = cuda::conv_tap(w, j);
        emulate(
            cuda::to_column_major(true, len, out, channels, {padded.data() + j * channels, channels, stride},
                                  {tap.data(), channels, 0}, out, len * out, batch),
            1.f, j == 0 ? 0.f : 1.f, y.data());
      }
      models::Tensor expected = models::reference::circular_conv3(x, w, bias);
      for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i)
        CHECK(y[i] + bias.data[i % out] == Approx(expected.data[i]).epsilon(1e-5).margin(1e-6));
    }
  }
}
