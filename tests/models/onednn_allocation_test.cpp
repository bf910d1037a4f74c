// Counts heap allocations made through operator new during a forecast, to check
// the oneDNN backend's "no allocation per call after warm-up" contract. What is
// left after warm-up is oneDNN's own per-execute bookkeeping inside
// dnnl_primitive_execute (a few small allocations per primitive, measured ~300
// of ~44 bytes per forecast); no tensor, scratchpad or plan buffer is allocated.
#include <catch2/catch.hpp>
#include <atomic>
#include <malloc.h>
#include <cstdlib>
#include <new>

#include "models/onednn_backend.hpp"
#include "tests/models/golden_support.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0}, allocated_bytes{0}, largest{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting) {
    ++allocations;
    allocated_bytes += static_cast<long>(n);
    if (static_cast<long>(n) > largest) largest = static_cast<long>(n);
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace models = kinformer::models;
using models::Tensor;

TEST_CASE("after warm-up a oneDNN forecast of the same shape allocates no buffers", "[models][onednn][unit]") {
  models::InformerConfig config;
  auto backend = models::OneDnnBackend(config, models::load_weights(kinformer::testing::golden_weights(), config));
  Tensor x_enc({4, 96, 7}, 0.5f), x_mark_enc({4, 96, 4}, 0.1f), x_dec({4, 72, 7}, 0.2f), x_mark_dec({4, 72, 4}, 0.1f), out;
  models::SeededSampler sampler(3);
  auto measure = [&] {
    allocations = 0;
    allocated_bytes = 0;
    largest = 0;
    counting = true;
    backend.forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler);
    counting = false;
    return allocations.load();
  };
  auto heap_in_use = [] {
    struct mallinfo2 m = mallinfo2();
    return static_cast<long>(m.uordblks + m.hblkhd);  // malloc'd (oneDNN buffers too), incl. mmap'd blocks
  };
  const long heap_before = heap_in_use();
  long first = measure();
  const long heap_after_warm_up = heap_in_use();
  long first_bytes = allocated_bytes.load();
  long second = measure();
  const long heap_after_second = heap_in_use();
  INFO("heap in use: +" << heap_after_warm_up - heap_before << " bytes at warm-up, +"
                        << heap_after_second - heap_after_warm_up << " after the second call");
  CHECK(heap_after_warm_up - heap_before > 10'000'000);  // the plan's buffers exist
  CHECK(heap_after_second - heap_after_warm_up < 65536);
  INFO("warm-up: " << first << " allocations, " << first_bytes << " bytes; second call: " << second << " allocations, "
                   << allocated_bytes.load() << " bytes, largest " << largest.load());
  CHECK(first > 0);
  CHECK(backend.plan_count() == 1);
  CHECK(largest.load() < 1024);                  // bookkeeping only: no buffer-sized block
  CHECK(allocated_bytes.load() < first_bytes / 50);
}
