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
  auto residual = models::parse_config(R"({"instance_norm":"naive_residual","naive_base":"last_day"})");
  CHECK(residual.instance_norm == models::InstanceNormKind::naive_residual);
  CHECK(residual.naive_base == models::NaiveKind::last_day);
  CHECK(models::parse_config(models::to_json(residual)).naive_base == models::NaiveKind::last_day);
  CHECK(models::to_json(models::parse_config(R"({"instance_norm":"mean_std"})")).find("naive_base") == std::string::npos);
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm":"mean_std","naive_base":"last_day"})"),
                    Catch::Contains("naive_base"));
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm":"naive_residual","naive_base":"yesterday"})"),
                    Catch::Contains("naive_base"));
  auto linear = models::parse_config(R"({"instance_norm":"linear_residual"})");
  CHECK(linear.instance_norm == models::InstanceNormKind::linear_residual);
  CHECK(models::parse_config(models::to_json(linear)).instance_norm == models::InstanceNormKind::linear_residual);
  CHECK_THROWS_WITH(models::parse_config(R"({"instance_norm":"linear_residual","naive_base":"last_day"})"),
                    Catch::Contains("naive_base"));
}

TEST_CASE("a linear_residual model needs its linear map, which is a buffer, and windows of seq_len",
          "[models][weights][instance_norm][unit]") {
  auto c = kinformer::testing::every_query_config();
  c.instance_norm = models::InstanceNormKind::mean_std;
  const auto mean_std = models::parameter_count(c);
  c.instance_norm = models::InstanceNormKind::linear_residual;
  CHECK(models::parameter_count(c) == mean_std);  // frozen: fitted before training, not trained
  auto w = models::random_weights(c, 3);
  REQUIRE(w->instance_norm_linear_base.shape == models::Shape{c.seq_len, c.pred_len});
  double power = 0;
  for (float v : w->instance_norm_linear_base.data) power += static_cast<double>(v) * v;
  CHECK(power > 0);  // random like the other maps, so the tests below see a real map
  auto backend = models::make_backend("reference", c, w);
  auto shorter = c;
  shorter.seq_len = c.seq_len - 1;
  Tensor out;
  CHECK_THROWS_WITH(backend->forecast(random_window(shorter, 1).input(), out), Catch::Contains("must have length"));
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
  for (auto kind : {models::InstanceNormKind::mean_std, models::InstanceNormKind::last_value,
                    models::InstanceNormKind::naive_residual, models::InstanceNormKind::linear_residual}) {
    for (std::string backend_name : {"reference", "onednn"}) {
      auto c = kinformer::testing::every_query_config();
      c.instance_norm = kind;
      auto backend = models::make_backend(backend_name, c, models::random_weights(c, 7));
      auto w = random_window(c, 3);
      Tensor base, moved;
      backend->forecast(w.input(), base);
      // last_value only shifts; the others also take the scale out.
      const float scale = kind == models::InstanceNormKind::last_value ? 1.f : 4.f, shift = 25.f;
      auto m = w;
      for (auto* t : {&m.x_enc, &m.x_dec})
        for (auto& v : t->data) v = v * scale + shift;
      backend->forecast(m.input(), moved);
      for (auto& v : base.data) v = v * scale + shift;
      INFO(backend_name << " instance_norm " << static_cast<int>(kind));
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

TEST_CASE("naive_residual forecasts the correction to its naive forecast",
          "[models][instance_norm][unit]") {
  // The same network under mean_std and naive_residual sees the same normalised window, so
  // the two forecasts differ by exactly (naive forecast - window mean), per channel and step.
  for (auto base : models::naive_kinds) {
    auto c = kinformer::testing::every_query_config();
    c.instance_norm = models::InstanceNormKind::mean_std;
    c.instance_norm_affine = true;
    auto weights = std::make_shared<models::InformerWeights>(*models::random_weights(c, 11));
    for (auto& v : weights->instance_norm_bias.data) v = 0.3f;
    auto w = random_window(c, 13);
    Tensor around_mean, around_naive;
    models::make_backend("reference", c, weights)->forecast(w.input(), around_mean);
    auto r = c;
    r.instance_norm = models::InstanceNormKind::naive_residual;
    r.naive_base = base;
    models::make_backend("reference", r, weights)->forecast(w.input(), around_naive);
    std::vector<float> naive(static_cast<size_t>(c.pred_len * c.enc_in));
    double worst = 0;
    for (int64_t b = 0; b < 2; ++b) {
      const float* enc = w.x_enc.ptr() + b * c.seq_len * c.enc_in;
      models::naive_forecast(base, enc, c.seq_len, c.enc_in, c.pred_len, models::steps_per_day(c.freq), naive.data());
      for (int64_t ch = 0; ch < c.enc_in; ++ch) {
        double mean = 0;
        for (int64_t t = 0; t < c.seq_len; ++t) mean += enc[t * c.enc_in + ch];
        mean /= static_cast<double>(c.seq_len);
        for (int64_t t = 0; t < c.pred_len; ++t) {
          const auto at = static_cast<size_t>((b * c.pred_len + t) * c.enc_in + ch);
          const double expected = around_mean.data[at] - mean + naive[static_cast<size_t>(t * c.enc_in + ch)];
          worst = std::max(worst, std::fabs(expected - around_naive.data[at]));
        }
      }
    }
    INFO("naive_base " << models::to_string(base));
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("linear_residual forecasts the correction to its linear forecast", "[models][instance_norm][unit]") {
  // As for naive_residual: the two forecasts differ by exactly (linear forecast - window mean),
  // with the linear forecast written out here from its definition, last + (window - last) · map.
  auto c = kinformer::testing::every_query_config();
  c.instance_norm = models::InstanceNormKind::mean_std;
  c.instance_norm_affine = true;
  auto r = c;
  r.instance_norm = models::InstanceNormKind::linear_residual;
  auto weights = std::make_shared<models::InformerWeights>(*models::random_weights(r, 11));
  for (auto& v : weights->instance_norm_bias.data) v = 0.3f;
  const auto& map = weights->instance_norm_linear_base;
  auto w = random_window(c, 13);
  Tensor around_mean, around_linear;
  models::make_backend("reference", c, weights)->forecast(w.input(), around_mean);
  models::make_backend("reference", r, weights)->forecast(w.input(), around_linear);
  double worst = 0, moved = 0;
  for (int64_t b = 0; b < 2; ++b) {
    const float* enc = w.x_enc.ptr() + b * c.seq_len * c.enc_in;
    for (int64_t ch = 0; ch < c.enc_in; ++ch) {
      double mean = 0;
      for (int64_t t = 0; t < c.seq_len; ++t) mean += enc[t * c.enc_in + ch];
      mean /= static_cast<double>(c.seq_len);
      const double last = enc[(c.seq_len - 1) * c.enc_in + ch];
      for (int64_t t = 0; t < c.pred_len; ++t) {
        double linear = last;
        for (int64_t s = 0; s < c.seq_len; ++s)
          linear += (enc[s * c.enc_in + ch] - last) * map.data[static_cast<size_t>(s * c.pred_len + t)];
        const auto at = static_cast<size_t>((b * c.pred_len + t) * c.enc_in + ch);
        worst = std::max(worst, std::fabs(around_mean.data[at] - mean + linear - around_linear.data[at]));
        moved = std::max(moved, std::fabs(linear - last));
      }
    }
  }
  CHECK(moved > 0.01);  // the map does move the forecast away from the last value
  CHECK(worst < 1e-4);
}
