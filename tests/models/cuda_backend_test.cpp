// The CUDA backend (models/cuda/cuda_backend.hpp): availability reporting (runs
// everywhere), and on a GPU: agreement with the reference backend under a fixed
// ProbSparse selection for each precision, graph replay equal to eager runs (also
// for a new input), one plan per shape, and no allocation per call after warm-up.
// The [gpu] tests skip, saying why, without a usable device (golden_support.hpp).
// The golden-file comparisons are in golden_test.cpp.
#include <catch2/catch.hpp>
#include <random>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
#include "models/model_error.hpp"
#include "models/prob_sparse.hpp"
#include "tests/models/allocation_counter.hpp"
#include "tests/models/golden_support.hpp"
#ifdef KINFORMER_HAVE_CUDA
#include "models/cuda/cuda_backend.hpp"
#endif

namespace models = kinformer::models;
using kinformer::testing::scaled_error;
using models::Tensor;

namespace {

struct Inputs {
  Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;
  models::ForecastInput view() const { return {x_enc, x_mark_enc, x_dec, x_mark_dec}; }
};

Inputs random_inputs(const models::InformerConfig& c, int batch, int l_enc, uint32_t seed) {
  std::mt19937 rng(seed);
  auto fill = [&](models::Shape shape, float lo, float hi) {
    Tensor t(std::move(shape));
    std::uniform_real_distribution<float> u(lo, hi);
    for (auto& v : t.data) v = u(rng);
    return t;
  };
  const int l_dec = c.dec_len(), ft = c.time_features();
  return {fill({batch, l_enc, c.enc_in}, -2.f, 2.f), fill({batch, l_enc, ft}, -.5f, .5f),
          fill({batch, l_dec, c.dec_in}, -2.f, 2.f), fill({batch, l_dec, ft}, -.5f, .5f)};
}

// Both backends see the same key samples and the same forced queries (§3.4).
Tensor forecast_fixed(models::Backend& backend, const Inputs& in, uint32_t seed) {
  const auto& c = backend.config();
  auto sampler = models::fixed_selection_sampler(
      models::prob_sparse_calls(c, static_cast<int>(in.x_enc.dim(1)), static_cast<int>(in.x_dec.dim(1))),
      static_cast<int>(in.x_enc.dim(0)), c.n_heads, seed);
  Tensor out;
  backend.forecast(in.view(), out, sampler);
  return out;
}

[[maybe_unused]] double max_abs_difference(const Tensor& a, const Tensor& b) {  // unused without CUDA
  REQUIRE(a.shape == b.shape);
  double d = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(a.data[i]) - b.data[i]));
  return d;
}

}  // namespace

TEST_CASE("without a usable device the cuda backend reports backend_unavailable and auto picks the CPU",
          "[models][cuda][unit]") {
#ifdef KINFORMER_HAVE_ONEDNN
  const std::string cpu = "onednn";
#else
  const std::string cpu = "reference";
#endif
  models::InformerConfig config;
  config.d_model = 16;
  config.n_heads = 2;
  config.d_ff = 16;
  auto weights = models::random_weights(config, 3);
  std::string why, choice;
  const bool available = models::cuda_device_available(&why);
  CHECK(models::cuda_device_available() == available);  // probed once, stable
  if (available) {
    CHECK(why.empty());
    CHECK(models::preferred_backend(&choice) == "cuda");
    CHECK(models::make_backend("cuda", config, weights)->name() == "cuda");
    return;
  }
  INFO("why: " << why);
  CHECK_FALSE(why.empty());
  CHECK(models::preferred_backend(&choice) == cpu);
  CHECK(choice == cpu + " (cuda: " + why + ")");
  CHECK(models::available_backends().back() != "cuda");
  CHECK(models::make_backend("auto", config, weights)->name() == cpu);
  try {
    models::make_backend("cuda", config, weights);
    FAIL("make_backend(\"cuda\") returned a backend without a usable device");
  } catch (const models::BackendUnavailable& e) {
    CHECK(std::string(e.what()).find("backend 'cuda' is not available: " + why) != std::string::npos);
  }
  CHECK_THROWS_AS(models::make_backend("tpu", config, weights), models::ModelError);
  CHECK(models::parse_precision("bf16") == models::Precision::bf16);
  CHECK_THROWS_AS(models::parse_precision("fp8"), models::ModelError);
  models::BackendOptions tf32;
  tf32.precision = models::Precision::tf32;
  CHECK_THROWS_WITH(models::make_backend("reference", config, weights, tf32),
                    Catch::Contains("not implemented"));
}

TEST_CASE("with the same key samples and forced queries the CUDA backend matches the reference backend",
          "[models][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
  models::InformerConfig config;
  auto weights = models::random_weights(config, 11);
  auto reference = models::make_backend("reference", config, weights);
  // Tolerances (of the reference's scale): fp32 is the conformance bound (§10); the
  // others are the declared accuracy costs, measured by bench/gpu_check.sh.
  const std::pair<models::Precision, double> precisions[] = {{models::Precision::fp32, 1e-4},
                                                             {models::Precision::tf32, 2e-2},
                                                             {models::Precision::fp16, 2e-2},
                                                             {models::Precision::bf16, 5e-2}};
  for (auto [batch, l_enc] : {std::pair{3, 96}, std::pair{2, 97}, std::pair{2, 720}}) {
    Inputs in = random_inputs(config, batch, l_enc, 17);
    Tensor expected = forecast_fixed(*reference, in, 5);
    for (auto [precision, tolerance] : precisions) {
      models::BackendOptions options;
      options.precision = precision;
      auto cuda = models::make_backend("cuda", config, weights, options);
      double err = scaled_error(forecast_fixed(*cuda, in, 5), expected);
      WARN("cuda " << models::to_string(precision) << " B=" << batch << " L=" << l_enc
                   << ": scaled max error " << err);
      CHECK(err <= tolerance);
    }
  }
}

TEST_CASE("a replayed CUDA graph gives exactly the eager result, also for a new input of the same shape",
          "[models][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
#ifdef KINFORMER_HAVE_CUDA
  models::InformerConfig config;
  auto weights = models::random_weights(config, 12);
  models::BackendOptions eager_options;
  eager_options.cuda_graphs = false;
  models::CudaBackend graphs(config, weights), eager(config, weights, eager_options);
  const Inputs first = random_inputs(config, 4, 96, 1), second = random_inputs(config, 4, 96, 2);
  models::SeededSampler sampler(9);
  Tensor warm_up, replayed, replayed_second, eager_first, eager_second;
  graphs.forecast(first.view(), warm_up, sampler);   // eager run, then capture
  graphs.forecast(first.view(), replayed, sampler);  // replay
  graphs.forecast(second.view(), replayed_second, sampler);
  eager.forecast(first.view(), eager_first, sampler);
  eager.forecast(second.view(), eager_second, sampler);
  INFO("graph capture: " << (graphs.graph_failure().empty() ? "ok" : graphs.graph_failure()));
  CHECK(graphs.graph_count() == 1);
  CHECK(eager.graph_count() == 0);
  CHECK(max_abs_difference(replayed, warm_up) == 0.0);
  CHECK(max_abs_difference(replayed, eager_first) == 0.0);
  CHECK(max_abs_difference(replayed_second, eager_second) == 0.0);
  CHECK(max_abs_difference(replayed_second, replayed) > 0.0);  // the replay read the new input
#endif
}

TEST_CASE("after warm-up a CUDA forecast of the same shape allocates nothing on the device or the host",
          "[models][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
#ifdef KINFORMER_HAVE_CUDA
  models::InformerConfig config;
  auto weights = models::random_weights(config, 13);
  for (bool use_graphs : {true, false}) {
    SECTION(use_graphs ? "with graphs" : "without graphs") {
      models::BackendOptions options;
      options.cuda_graphs = use_graphs;
      models::CudaBackend backend(config, weights, options);
      const Inputs in = random_inputs(config, 8, 96, 3);
      models::SeededSampler sampler(4);
      Tensor out;
      const int64_t before_warm_up = backend.allocations();
      backend.forecast(in.view(), out, sampler);
      const int64_t after_warm_up = backend.allocations();
      kinformer::testing::start_counting_allocations();
      for (int i = 0; i < 3; ++i) backend.forecast(in.view(), out, sampler);
      auto host = kinformer::testing::stop_counting_allocations();
      INFO("device/pinned allocations: " << before_warm_up << " before warm-up, " << after_warm_up
                                         << " after; host " << host.calls << " operator new calls, "
                                         << host.bytes << " bytes in 3 calls");
      CHECK(after_warm_up > before_warm_up);  // the plan was allocated at warm-up
      CHECK(backend.allocations() == after_warm_up);
      CHECK(backend.plan_count() == 1);
      if (use_graphs)
        CHECK(host.calls == 0);
      else
        CHECK(host.largest < 1024);  // library bookkeeping at most, never a buffer
      Tensor other;
      backend.forecast(random_inputs(config, 2, 96, 4).view(), other, sampler);
      CHECK(backend.plan_count() == 2);  // a new shape gets its own plan
    }
  }
#endif
}
