#include "models/informer_config.hpp"

#include <catch2/catch.hpp>

#include "models/model_error.hpp"

namespace models = kinformer::models;

TEST_CASE("a config without keys takes the main_informer.py defaults", "[models][config][unit]") {
  auto c = models::parse_config("{}");
  CHECK(c.enc_in == 7);
  CHECK(c.d_model == 512);
  CHECK(c.n_heads == 8);
  CHECK(c.d_ff == 2048);
  CHECK(c.e_layers == 2);
  CHECK(c.d_layers == 1);
  CHECK(c.factor == 5);
  CHECK(c.attn == models::AttentionKind::prob);
  CHECK(c.time_features() == 4);
  CHECK(c.distil);
  CHECK(c.mix);
}

TEST_CASE("config keys use the official argument names and unknown keys are reported", "[models][config][unit]") {
  std::vector<std::string> warnings;
  auto c = models::parse_config(
      R"({"enc_in":1,"dec_in":1,"c_out":1,"d_model":64,"n_heads":4,"attn":"full","freq":"t","distil":false,
          "mix":false,"activation":"relu","batch_size":32})",
      &warnings);
  CHECK(c.enc_in == 1);
  CHECK(c.d_model == 64);
  CHECK(c.attn == models::AttentionKind::full);
  CHECK(c.time_features() == 5);
  CHECK_FALSE(c.distil);
  CHECK_FALSE(c.mix);
  CHECK(c.activation == models::Activation::relu);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("batch_size") != std::string::npos);
  auto again = models::parse_config(models::to_json(c));
  CHECK(again.d_model == 64);
  CHECK(again.time_features() == 5);
}

TEST_CASE("bad config values are rejected with the key named", "[models][config][unit]") {
  CHECK_THROWS_WITH(models::parse_config(R"({"attn":"sparse"})"), Catch::Contains("'attn'"));
  CHECK_THROWS_WITH(models::parse_config(R"({"d_model":-3})"), Catch::Contains("'d_model'"));
  CHECK_THROWS_WITH(models::parse_config(R"({"embed":"fixed"})"), Catch::Contains("timeF"));
  CHECK_THROWS_WITH(models::parse_config(R"({"freq":"15min"})"), Catch::Contains("'freq'"));
  CHECK_THROWS_WITH(models::parse_config(R"({"d_model":100,"n_heads":8})"), Catch::Contains("divisible"));
  CHECK_THROWS_AS(models::parse_config("{not json"), models::ModelError);
}
