// Instance normalisation (issue 28) without the golden files: the config's rules, and the
// properties that make it worth having — a window shifted and scaled gives the same
// forecast shifted and scaled, and the decoder's placeholder rows are ignored. The match
// with PyTorch is golden_test.cpp's (cases s96_mean_std and s96_last_value).
#include "models/instance_norm.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
#include "models/model_error.hpp"
#include "tests/models/small_config.hpp"

namespace models = kinformer::models;
using models::Tensor;

namespace {

struct Window {
  Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;
  models::ForecastInput input() const { return {x_enc, x_mark_enc, x_dec, x_mark_dec}; }
};

Window random_window(const models::InformerConfig& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Window w{Tensor({2, c.seq_len, c.enc_in}), Tensor({2, c.seq_len, 4}), Tensor({2, c.dec_len(), c.dec_in}),
           Tensor({2, c.dec_len(), 4})};
  for (auto* t : {&w.x_enc, &w.x_mark_enc, &w.x_mark_dec})
    for (auto& v : t->data) v = 0.5f * normal(rng);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < c.label_len; ++t)
      for (int64_t ch = 0; ch < c.enc_in; ++ch)
        w.x_dec.data[static_cast<size_t>((b * c.dec_len() + t) * c.enc_in + ch)] =
            w.x_enc.data[static_cast<size_t>((b * c.seq_len + c.seq_len - c.label_len + t) * c.enc_in + ch)];
  return w;
}

double max_difference(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (size_t i = 0; i < a.data.size(); ++i) d = std::max(d, static_cast<double>(std::fabs(a.data[i] - b.data[i])));
  return d;
}

}  // namespace

TEST_CASE("instance_norm is parsed, written only when set, and refused where it cannot map back",
          "[models][config][instance_norm][unit]") {
  auto c = models::parse_config(R"({"instance_norm":"mean_std","instance_norm_affine":true})");
  CHECK(c.instance_norm == models::InstanceNormKind::mean_std);
  CHECK(c.instance_norm_affine);
  auto again = models::parse_config(models::to_json(c));
  CHECK(again.instance_norm == models::InstanceNormKind::mean_std);
  CHECK(again.instance_norm_affine);
  CHECK(models::to_json(models::parse_config("{}")).find("instance_norm") == std::string::npos);
  CHECK(models::parse_config(R"({"instance_norm":"last_value"})").instance_norm == models::InstanceNormKind::last_value);
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm":"revin"})"), Catch::Contains("instance_norm"));
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm":"mean_std","c_out":1})"),
                    Catch::Contains("enc_in == dec_in == c_out"));
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm_affine":true})"), Catch::Contains("instance_norm_affine"));
}

TEST_CASE("the affine weights are expected exactly when the config asks for them",
          "[models][weights][instance_norm][unit]") {
  auto c = kinformer::testing::every_query_config();
  const auto plain = models::parameter_count(c);
  c.instance_norm = models::InstanceNormKind::mean_std;
  CHECK(models::parameter_count(c) == plain);
  c.instance_norm_affine = true;
  CHECK(models::parameter_count(c) == plain + 2 * c.enc_in);
  auto w = models::random_weights(c);
  CHECK(w->instance_norm_weight.data == std::vector<float>(static_cast<size_t>(c.enc_in), 1.f));
  CHECK(w->instance_norm_bias.data == std::vector<float>(static_cast<size_t>(c.enc_in), 0.f));
}

TEST_CASE("with instance_norm a shifted and scaled window gives the same forecast shifted and scaled",
          "[models][instance_norm][unit]") {
  for (auto kind : {models::InstanceNormKind::mean_std, models::InstanceNormKind::last_value}) {
    for (std::string backend_name : {"reference", "onednn"}) {
      auto c = kinformer::testing::every_query_config();
      c.instance_norm = kind;
      auto backend = models::make_backend(backend_name, c, models::random_weights(c, 7));
      auto w = random_window(c, 3);
      Tensor base, moved;
      backend->forecast(w.input(), base);
      // last_value only shifts; mean_std also takes the scale out.
      const float scale = kind == models::InstanceNormKind::mean_std ? 4.f : 1.f, shift = 25.f;
      auto m = w;
      for (auto* t : {&m.x_enc, &m.x_dec})
        for (auto& v : t->data) v = v * scale + shift;
      backend->forecast(m.input(), moved);
      for (auto& v : base.data) v = v * scale + shift;
      INFO(backend_name << (kind == models::InstanceNormKind::mean_std ? " mean_std" : " last_value"));
      CHECK(max_difference(base, moved) < 1e-3 * scale);
    }
  }
}

TEST_CASE("with instance_norm the decoder's placeholder rows are ignored, and without it they are not",
          "[models][instance_norm][unit]") {
  auto c = kinformer::testing::every_query_config();
  auto w = random_window(c, 5);
  auto noisy = w;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = c.label_len; t < c.dec_len(); ++t)
      for (int64_t ch = 0; ch < c.dec_in; ++ch) noisy.x_dec.data[static_cast<size_t>((b * c.dec_len() + t) * c.dec_in + ch)] = 9.f;
  Tensor a, b;
  auto plain = models::make_backend("reference", c, models::random_weights(c, 7));
  plain->forecast(w.input(), a);
  plain->forecast(noisy.input(), b);
  CHECK(max_difference(a, b) > 1e-3);
  c.instance_norm = models::InstanceNormKind::mean_std;
  auto normalised = models::make_backend("reference", c, models::random_weights(c, 7));
  normalised->forecast(w.input(), a);
  normalised->forecast(noisy.input(), b);
  CHECK(max_difference(a, b) == 0);
}
