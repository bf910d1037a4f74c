// bf16 precision of the oneDNN backend (models/onednn/onednn_backend.hpp): opt-in, close
// to fp32, refused by backends that do not implement it.
#include <algorithm>
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "models/backend.hpp"
#include "models/model_error.hpp"
#include "models/onednn/onednn_backend.hpp"
#include "tests/models/small_config.hpp"

namespace models = kinformer::models;
using models::Tensor;

namespace {

Tensor random_tensor(models::Shape shape, std::mt19937& rng, float scale) {
  Tensor t(std::move(shape));
  std::uniform_real_distribution<float> u(-scale, scale);
  for (auto& v : t.data) v = u(rng);
  return t;
}

}  // namespace

TEST_CASE("bf16 forecasts stay within bf16 rounding of fp32 and are not fp32 in disguise",
          "[models][onednn][bf16][unit]") {
  auto config = kinformer::testing::every_query_config();
  auto weights = models::random_weights(config, 3);
  auto fp32 = models::make_backend("onednn", config, weights);
  models::BackendOptions bf16_options;
  bf16_options.precision = models::Precision::bf16;
  auto bf16 = models::make_backend("onednn", config, weights, bf16_options);
  REQUIRE(dynamic_cast<models::OneDnnBackend&>(*bf16).precision() == models::Precision::bf16);
  std::mt19937 rng(11);
  auto x_enc = random_tensor({3, 40, 7}, rng, 2.f), x_mark_enc = random_tensor({3, 40, 4}, rng, .5f);
  auto x_dec = random_tensor({3, 30, 7}, rng, 2.f), x_mark_dec = random_tensor({3, 30, 4}, rng, .5f);
  Tensor a, b, again;
  fp32->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, a);
  bf16->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b);
  bf16->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, again);
  REQUIRE(a.shape == b.shape);
  double max_error = 0, max_value = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    max_error = std::max(max_error, static_cast<double>(std::fabs(a.data[i] - b.data[i])));
    max_value = std::max(max_value, static_cast<double>(std::fabs(a.data[i])));
  }
  INFO("max |bf16 - fp32| = " << max_error << ", max |fp32| = " << max_value);
  CHECK(max_error > 0);                 // the bf16 kernels really ran
  CHECK(max_error < 0.05 * max_value);  // bf16 has 8 significant bits; the outputs are LayerNorm-scaled
  CHECK(b.data == again.data);          // and they are deterministic
}

TEST_CASE("the reference backend refuses bf16 and onednn refuses what it does not implement",
          "[models][backend][bf16][unit]") {
  auto config = kinformer::testing::every_query_config();
  auto weights = models::random_weights(config, 3);
  models::BackendOptions bf16, fp16;
  bf16.precision = models::Precision::bf16;
  fp16.precision = models::Precision::fp16;
  CHECK_THROWS_WITH(models::make_backend("reference", config, weights, bf16),
                    Catch::Contains("bf16 is not implemented by the 'reference' backend"));
  CHECK_THROWS_WITH(models::make_backend("onednn", config, weights, fp16),
                    Catch::Contains("fp16 is not implemented by the 'onednn' backend"));
  CHECK_THROWS_WITH(models::parse_precision("fp8"), Catch::Contains("unknown precision 'fp8'"));
}

TEST_CASE("the preferred backend is cuda when available and otherwise onednn with a reason",
          "[models][backend][unit]") {
  auto names = models::available_backends();
  const bool cuda = std::find(names.begin(), names.end(), "cuda") != names.end();
  std::string why;
  CHECK(models::preferred_backend(&why) == (cuda ? "cuda" : "onednn"));
  if (cuda)
    CHECK_THAT(why, Catch::Contains("device is present"));
  else  // not built with CUDA, or built but without a usable device (as on CI)
    CHECK_THAT(why, Catch::Contains("no CUDA backend") || Catch::Contains("no usable CUDA device"));
}
