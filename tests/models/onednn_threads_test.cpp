// The oneDNN backend's thread count per batch (models/onednn/onednn_backend.hpp): small
// batches run on the calling thread alone, larger ones on all OpenMP threads, and
// the caller's thread count is left as it was.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>
#include <omp.h>

#include "models/backend.hpp"
#include "models/onednn/onednn_backend.hpp"
#include "tests/models/small_config.hpp"

namespace models = kinformer::models;
using models::Tensor;

namespace {

// Seeded draws, and the OpenMP thread count in force where the forward pass asks for them.
class ThreadRecordingSampler final : public models::ProbSparseSampler {
 public:
  void begin_forward() override { seeded_.begin_forward(); }
  void sample_keys(int l_q, int l_k, int sample_k, int32_t* idx) override {
    threads = omp_get_max_threads();
    seeded_.sample_keys(l_q, l_k, sample_k, idx);
  }
  int threads = 0;

 private:
  models::SeededSampler seeded_{5};
};

struct Windows {
  Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;
};

Windows random_windows(int64_t batch, std::mt19937& rng) {
  auto t = [&](models::Shape shape, float scale) {
    Tensor x(std::move(shape));
    std::uniform_real_distribution<float> u(-scale, scale);
    for (auto& v : x.data) v = u(rng);
    return x;
  };
  return {t({batch, 40, 7}, 2.f), t({batch, 40, 4}, .5f), t({batch, 30, 7}, 2.f), t({batch, 30, 4}, .5f)};
}

}  // namespace

TEST_CASE("a oneDNN batch of at most serial_max_batch windows runs on one thread and a larger one on all",
          "[models][onednn][unit]") {
  // As on a 2-core machine, whatever this one has; restored however the test ends, since
  // the other model tests run on this thread after it.
  struct RestoreThreads {
    int count = omp_get_max_threads();
    ~RestoreThreads() { omp_set_num_threads(count); }
  } restore;
  omp_set_num_threads(2);
  auto config = kinformer::testing::every_query_config();
  auto weights = models::random_weights(config, 3);
  models::BackendOptions serial;
  serial.serial_max_batch = 2;
  auto backend = models::make_backend("onednn", config, weights, serial);
  auto threaded = models::make_backend("onednn", config, weights);
  const auto& onednn = dynamic_cast<const models::OneDnnBackend&>(*backend);
  CHECK(onednn.threads_for(1) == 1);
  CHECK(onednn.threads_for(2) == 1);
  CHECK(onednn.threads_for(3) == 2);
  std::mt19937 rng(17);
  for (int64_t batch : {1, 2, 3}) {
    INFO("batch " << batch);
    auto w = random_windows(batch, rng);
    ThreadRecordingSampler on_serial, on_threaded;
    Tensor a, b;
    backend->forecast({w.x_enc, w.x_mark_enc, w.x_dec, w.x_mark_dec}, a, on_serial);
    CHECK(omp_get_max_threads() == 2);  // the caller's count is back
    threaded->forecast({w.x_enc, w.x_mark_enc, w.x_dec, w.x_mark_dec}, b, on_threaded);
    CHECK(on_serial.threads == (batch <= 2 ? 1 : 2));
    CHECK(on_threaded.threads == 2);
    REQUIRE(a.shape == b.shape);
    double max_error = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
      max_error = std::max(max_error, static_cast<double>(std::fabs(a.data[i] - b.data[i])));
    CHECK(max_error < 1e-4);  // the same forecast, up to the order of fp32 sums
  }
}
