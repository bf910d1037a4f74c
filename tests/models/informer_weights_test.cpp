#include "models/informer_weights.hpp"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "models/model_error.hpp"
#include "tests/models/golden_support.hpp"

namespace models = kinformer::models;
using kinformer::testing::golden_weights;

TEST_CASE("the default config has the official parameter count", "[models][weights][unit]") {
  CHECK(models::parameter_count(models::InformerConfig{}) == 11330055);
}

TEST_CASE("official state_dict names and shapes load into the layer structure", "[models][weights][unit]") {
  auto w = models::load_weights(golden_weights(), models::InformerConfig{});
  CHECK(w->encoder_layers.size() == 2);
  CHECK(w->distil_layers.size() == 1);
  CHECK(w->decoder_layers.size() == 1);
  CHECK(w->enc_embedding.positional.shape == models::Shape{5000, 512});
  CHECK(w->encoder_layers[0].ffn1.weight.shape == models::Shape{2048, 512});
  CHECK(w->projection.weight.shape == models::Shape{7, 512});
  // The positional table is stored, not recomputed: row 1, column 0 is sin(1).
  CHECK(w->enc_embedding.positional.data[512] == Approx(0.841471).epsilon(1e-6));
}

TEST_CASE("the computed positional table equals the one the official code stores", "[models][weights][unit]") {
  auto stored = models::load_weights(golden_weights(), models::InformerConfig{})->enc_embedding.positional;
  models::Tensor computed(stored.shape);
  models::fill_positional_table(computed);
  double worst = 0;
  for (size_t i = 0; i < stored.data.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(stored.data[i] - computed.data[i])));
  INFO("largest |stored - computed| over the [5000, 512] table: " << worst);
  CHECK(worst < 1e-3);  // torch computes it in fp32; positions up to 5000 lose a few ulps in sin/cos
}

TEST_CASE("a weights file that does not match the config names the tensor at fault", "[models][weights][unit]") {
  models::InformerConfig c;
  SECTION("missing tensor") {
    c.e_layers = 3;
    CHECK_THROWS_WITH(models::load_weights(golden_weights(), c), Catch::Contains("missing tensor 'encoder.attn_layers.2"));
  }
  SECTION("extra tensor") {
    c.distil = false;
    CHECK_THROWS_WITH(models::load_weights(golden_weights(), c), Catch::Contains("unexpected tensor(s) 'encoder.conv_layers.0"));
  }
  SECTION("mis-shaped tensor") {
    c.enc_in = 3;
    CHECK_THROWS_WITH(models::load_weights(golden_weights(), c),
                      Catch::Contains("'enc_embedding.value_embedding.tokenConv.weight' has shape [512, 7, 3], the config needs [512, 3, 3]"));
  }
}

TEST_CASE("a truncated weights file is an error naming the tensor that does not fit", "[models][weights][unit]") {
  std::string bytes;
  {
    std::ifstream in(golden_weights(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string path = "weights_test_truncated.safetensors";
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  CHECK_THROWS_WITH(models::load_weights(path, models::InformerConfig{}), Catch::Contains("truncated: tensor '"));
  std::ofstream(path, std::ios::binary).write(bytes.data(), 5);
  CHECK_THROWS_WITH(models::load_weights(path, models::InformerConfig{}), Catch::Contains("truncated"));
  std::remove(path.c_str());
}
