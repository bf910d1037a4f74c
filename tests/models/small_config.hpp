// tests/models/small_config.hpp
//
// every_query_config(): a small Informer config (d_model 64, 4 heads, d_ff 128, seq 40 /
// label 20 / pred 10) with every query selected (factor 100, informer-model.md §3.4), for
// backend tests that compare two computations of one forecast: sums taken in another order
// (bf16, another OpenMP thread count) then cannot flip a ProbSparse top-u choice, so the
// difference measured is the computation's alone.
#pragma once

#include "models/informer_config.hpp"

namespace kinformer::testing {

inline models::InformerConfig every_query_config() {
  models::InformerConfig c;
  c.d_model = 64;
  c.n_heads = 4;
  c.d_ff = 128;
  c.factor = 100;
  c.seq_len = 40;
  c.label_len = 20;
  c.pred_len = 10;
  return c;
}

}  // namespace kinformer::testing
