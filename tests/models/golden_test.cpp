// Both backends against the PyTorch reference (tools/reference/make_goldens.py):
// each layer fed with the golden input of that layer (reference backend), every
// intermediate of a full run (both backends), and the final output, with the
// captured ProbSparse key samples and query selections replayed.
#include <catch2/catch.hpp>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
#include "models/reference_layers.hpp"
#include "tests/models/golden_support.hpp"

using kinformer::models::Tensor;
using kinformer::testing::golden_config;
using kinformer::testing::golden_sampler;
using kinformer::testing::golden_tensor;
using kinformer::testing::golden_weights;
using kinformer::testing::scaled_error;
namespace models = kinformer::models;
namespace ref = kinformer::models::reference;

using models::Shape;

namespace {

constexpr double tolerance = 1e-4;  // of the reference's scale (max |ref|)

const char* const trace_names[] = {"enc_embedding", "enc_layer0", "enc_distil0", "enc_layer1", "enc_out",
                                   "dec_embedding", "dec_layer0", "dec_out", "output"};

std::shared_ptr<const models::InformerWeights> weights_for(const models::InformerConfig& config) {
  return models::load_weights(golden_weights(), config);
}

void check_full_model(const std::string& backend_name, const std::string& case_name) {
  auto config = golden_config(case_name);
  auto backend = models::make_backend(backend_name, config, models::load_weights(golden_weights(case_name), config));
  Tensor x_enc = golden_tensor(case_name, "x_enc"), x_mark_enc = golden_tensor(case_name, "x_mark_enc"),
         x_dec = golden_tensor(case_name, "x_dec"), x_mark_dec = golden_tensor(case_name, "x_mark_dec");
  int calls = config.attn == models::AttentionKind::prob ? 3 : 0;
  auto sampler = golden_sampler(case_name, 0, calls, true);
  models::Trace trace;
  Tensor out;
  backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler, &trace);
  for (const char* name : trace_names) {
    INFO(backend_name << " " << case_name << ": intermediate " << name);
    REQUIRE(trace.count(name) == 1);
    double err = scaled_error(trace.at(name), golden_tensor(case_name, name));
    WARN(backend_name << " " << case_name << " " << name << " scaled max error " << err);
    CHECK(err <= tolerance);
  }
  INFO(backend_name << " " << case_name << ": output");
  CHECK(models::to_string(out.shape) == models::to_string(Shape{2, config.pred_len, config.c_out}));
  CHECK(scaled_error(out, golden_tensor(case_name, "output")) <= tolerance);
}

}  // namespace

TEST_CASE("the reference backend matches PyTorch layer by layer at 96/48/24, 720/48/24 and 97/30/11",
          "[models][golden][reference][unit]") {
  for (std::string c : {"s96", "s720", "s97"}) {
    SECTION(c) {
      auto config = golden_config(c);
      auto w = weights_for(config);
      auto t = [&](const char* name) { return golden_tensor(c, name); };
      auto check = [&](const char* name, const Tensor& got) {
        double err = scaled_error(got, t(name));
        INFO(c << " layer " << name << " scaled max error " << err);
        CHECK(err <= tolerance);
      };
      check("enc_embedding", ref::data_embedding(t("x_enc"), t("x_mark_enc"), w->enc_embedding));
      auto s0 = golden_sampler(c, 0, 1, true);
      check("enc_layer0", ref::encoder_layer(w->encoder_layers[0], t("enc_embedding"), config, s0));
      check("enc_distil0", ref::distil_layer(w->distil_layers[0], t("enc_layer0")));
      auto s1 = golden_sampler(c, 1, 1, true);
      check("enc_layer1", ref::encoder_layer(w->encoder_layers[1], t("enc_distil0"), config, s1));
      Tensor enc_out = t("enc_layer1");
      ref::layer_norm(enc_out, w->encoder_norm);
      check("enc_out", enc_out);
      check("dec_embedding", ref::data_embedding(t("x_dec"), t("x_mark_dec"), w->dec_embedding));
      auto s2 = golden_sampler(c, 2, 1, true);
      check("dec_layer0", ref::decoder_layer(w->decoder_layers[0], t("dec_embedding"), t("enc_out"), config, s2));
    }
  }
}

TEST_CASE("the reference backend matches PyTorch end to end with every intermediate",
          "[models][golden][reference][unit]") {
  for (std::string c : {"s96", "s720", "s97", "full_nomix", "s96_mean_std", "s96_last_value", "s96_naive_residual",
                        "s96_linear_residual"})
    SECTION(c) { check_full_model("reference", c); }
}

TEST_CASE("the oneDNN backend matches PyTorch end to end with every intermediate", "[models][golden][onednn][unit]") {
  for (std::string c : {"s96", "s720", "s97", "full_nomix", "s96_mean_std", "s96_last_value", "s96_naive_residual",
                        "s96_linear_residual"})
    SECTION(c) { check_full_model("onednn", c); }
}

TEST_CASE("full attention with mix=False differs from mix=True, so the golden check sees the mix flag",
          "[models][golden][reference][unit]") {
  auto config = golden_config("full_nomix");
  auto w = weights_for(config);
  Tensor x = golden_tensor("full_nomix", "dec_embedding");
  models::SeededSampler unused;
  Tensor plain = ref::attention_layer(w->decoder_layers[0].self_attention, x, x, models::AttentionKind::full, true, false,
                                      config, unused);
  Tensor mixed = ref::attention_layer(w->decoder_layers[0].self_attention, x, x, models::AttentionKind::full, true, true,
                                      config, unused);
  CHECK(scaled_error(mixed, plain) > 1e-2);
}

TEST_CASE("with only the key sample replayed, both backends select PyTorch's queries and match its output",
          "[models][golden][unit]") {
  // §10 item 10: a flipped near-tie would change the output discontinuously; with these
  // inputs no (batch, head) is that close, so the computed selection must agree exactly.
  for (std::string backend_name : {"reference", "onednn"}) {
    SECTION(backend_name) {
      auto config = golden_config("s96");
      auto backend = models::make_backend(backend_name, config, weights_for(config));
      Tensor x_enc = golden_tensor("s96", "x_enc"), x_mark_enc = golden_tensor("s96", "x_mark_enc"),
             x_dec = golden_tensor("s96", "x_dec"), x_mark_dec = golden_tensor("s96", "x_mark_dec"), out;
      auto sampler = golden_sampler("s96", 0, 3, false);
      backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler);
      CHECK(scaled_error(out, golden_tensor("s96", "output")) <= tolerance);
    }
  }
}

TEST_CASE("a whole model whose factor selects every query equals the full-attention model on both backends",
          "[models][prob_sparse][unit]") {
  auto prob = golden_config("s96");
  prob.factor = 100;  // u = min(100·⌈ln L⌉, L) = L for L = 96, 48 and 72
  auto full = prob;
  full.attn = models::AttentionKind::full;
  auto w = weights_for(prob);
  Tensor x_enc = golden_tensor("s96", "x_enc"), x_mark_enc = golden_tensor("s96", "x_mark_enc"),
         x_dec = golden_tensor("s96", "x_dec"), x_mark_dec = golden_tensor("s96", "x_mark_dec");
  for (std::string backend_name : {"reference", "onednn"}) {
    SECTION(backend_name) {
      Tensor a, b;
      models::make_backend(backend_name, prob, w)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, a);
      models::make_backend(backend_name, full, w)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b);
      CHECK(scaled_error(a, b) <= 1e-5);
    }
  }
}

TEST_CASE("the CUDA backend matches PyTorch end to end with every intermediate", "[models][golden][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
  for (std::string c : {"s96", "s720", "s97", "full_nomix", "s96_mean_std", "s96_last_value", "s96_naive_residual",
                        "s96_linear_residual"})
    SECTION(c) { check_full_model("cuda", c); }
}

TEST_CASE("with only the key sample replayed, the CUDA backend selects PyTorch's queries and matches its output",
          "[models][golden][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
  auto config = golden_config("s96");
  auto backend = models::make_backend("cuda", config, weights_for(config));
  Tensor x_enc = golden_tensor("s96", "x_enc"), x_mark_enc = golden_tensor("s96", "x_mark_enc"),
         x_dec = golden_tensor("s96", "x_dec"), x_mark_dec = golden_tensor("s96", "x_mark_dec"), out;
  auto sampler = golden_sampler("s96", 0, 3, false);
  backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler);
  CHECK(scaled_error(out, golden_tensor("s96", "output")) <= tolerance);
}

TEST_CASE("on the CUDA backend a model whose factor selects every query equals the full-attention model",
          "[models][golden][cuda][gpu][unit]") {
  KINFORMER_REQUIRE_CUDA_DEVICE();
  auto prob = golden_config("s96");
  prob.factor = 100;  // u = L for L = 96, 48 and 72
  auto full = prob;
  full.attn = models::AttentionKind::full;
  auto w = weights_for(prob);
  Tensor x_enc = golden_tensor("s96", "x_enc"), x_mark_enc = golden_tensor("s96", "x_mark_enc"),
         x_dec = golden_tensor("s96", "x_dec"), x_mark_dec = golden_tensor("s96", "x_mark_dec"), a, b;
  models::make_backend("cuda", prob, w)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, a);
  models::make_backend("cuda", full, w)->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, b);
  CHECK(scaled_error(a, b) <= 1e-5);
}
