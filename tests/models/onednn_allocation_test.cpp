// Counts heap allocations made through operator new during a forecast, to check
// the oneDNN backend's "no allocation per call after warm-up" contract. What is
// left after warm-up is oneDNN's own per-execute bookkeeping inside
// dnnl_primitive_execute (a few small allocations per primitive, measured ~300
// of ~44 bytes per forecast); no tensor, scratchpad or plan buffer is allocated.
#include <catch2/catch.hpp>

#include "models/onednn/onednn_backend.hpp"
#include "tests/models/allocation_counter.hpp"
#include "tests/models/golden_support.hpp"
#include "tests/support/heap_in_use.hpp"

namespace models = kinformer::models;
using kinformer::testing::heap_in_use;
using models::Tensor;

TEST_CASE("after warm-up a oneDNN forecast of the same shape allocates no buffers",
          "[models][onednn][unit]") {
  models::InformerConfig config;
  auto backend =
      models::OneDnnBackend(config, models::load_weights(kinformer::testing::golden_weights(), config));
  Tensor x_enc({4, 96, 7}, 0.5f), x_mark_enc({4, 96, 4}, 0.1f), x_dec({4, 72, 7}, 0.2f),
      x_mark_dec({4, 72, 4}, 0.1f), out;
  models::SeededSampler sampler(3);
  auto measure = [&] {
    kinformer::testing::start_counting_allocations();
    backend.forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler);
    return kinformer::testing::stop_counting_allocations();
  };
  const long heap_before = heap_in_use();
  auto first = measure();
  const long heap_after_warm_up = heap_in_use();
  auto second = measure();
  const long heap_after_second = heap_in_use();
  INFO("heap in use: +" << heap_after_warm_up - heap_before << " bytes at warm-up, +"
                        << heap_after_second - heap_after_warm_up << " after the second call");
  CHECK(heap_after_warm_up - heap_before > 10'000'000);  // the plan's buffers exist
  CHECK(heap_after_second - heap_after_warm_up < 65536);
  INFO("warm-up: " << first.calls << " allocations, " << first.bytes
                   << " bytes; second call: " << second.calls << " allocations, " << second.bytes
                   << " bytes, largest " << second.largest);
  CHECK(first.calls > 0);
  CHECK(backend.plan_count() == 1);
  CHECK(second.largest < 1024);  // bookkeeping only: no buffer-sized block
  CHECK(second.bytes < first.bytes / 50);
}
