#include "models/backend.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "models/model_error.hpp"
#include "tests/models/golden_support.hpp"

namespace models = kinformer::models;
using models::Tensor;

namespace {

std::shared_ptr<const models::InformerWeights> default_weights() {
  static auto w = models::load_weights(kinformer::testing::golden_weights(), models::InformerConfig{});
  return w;
}

}  // namespace

TEST_CASE("bad forecast inputs are rejected with the tensor named", "[models][backend][unit]") {
  for (std::string name : {"reference", "onednn"}) {
    SECTION(name) {
      auto backend = models::make_backend(name, models::InformerConfig{}, default_weights());
      Tensor x_enc({1, 96, 7}), x_mark_enc({1, 96, 4}), x_dec({1, 72, 7}), x_mark_dec({1, 72, 4}), out;
      Tensor wrong_channels({1, 96, 5}), wrong_batch({2, 72, 7}), short_dec({1, 10, 7}), short_mark({1, 10, 4});
      CHECK_THROWS_WITH(backend->forecast({wrong_channels, x_mark_enc, x_dec, x_mark_dec}, out),
                        Catch::Contains("x_enc") && Catch::Contains("7 channels"));
      CHECK_THROWS_WITH(backend->forecast({x_enc, x_mark_enc, wrong_batch, x_mark_dec}, out),
                        Catch::Contains("x_dec") && Catch::Contains("batch"));
      CHECK_THROWS_WITH(backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_enc}, out), Catch::Contains("x_mark_dec"));
      CHECK_THROWS_WITH(backend->forecast({x_enc, x_mark_enc, short_dec, short_mark}, out), Catch::Contains("pred_len"));
      x_enc.data[7 * 5 + 2] = std::nanf("");
      CHECK_THROWS_WITH(backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out),
                        Catch::Contains("x_enc has a non-finite value") && Catch::Contains("[0, 5, 2]"));
    }
  }
}

TEST_CASE("the cuda backend is refused as not available, never replaced by another", "[models][backend][unit]") {
  if (models::cuda_device_available()) {
    WARN("skipped: this machine can run the cuda backend (cuda_backend_test.cpp covers that case)");
    return;
  }
  CHECK_THROWS_AS(models::make_backend("cuda", models::InformerConfig{}, default_weights()), models::BackendUnavailable);
  CHECK_THROWS_WITH(models::make_backend("cuda", models::InformerConfig{}, default_weights()),
                    Catch::Contains("backend 'cuda' is not available: "));
  CHECK_THROWS_WITH(models::make_backend("tpu", models::InformerConfig{}, default_weights()),
                    Catch::Contains("unknown backend"));
}

TEST_CASE("two forecasts of the same input with the default sampler are bit-identical", "[models][backend][unit]") {
  for (std::string name : {"reference", "onednn"}) {
    SECTION(name) {
      auto backend = models::make_backend(name, models::InformerConfig{}, default_weights());
      Tensor x_enc({1, 96, 7}), x_mark_enc({1, 96, 4}), x_dec({1, 72, 7}), x_mark_dec({1, 72, 4}), a, b;
      for (size_t i = 0; i < x_enc.data.size(); ++i) x_enc.data[i] = std::sin(0.1f * static_cast<float>(i));
      backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, a);
      backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b);
      CHECK(a.shape == models::Shape{1, 24, 7});
      CHECK(a.data == b.data);
    }
  }
}
