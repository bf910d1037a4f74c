#include "models/onednn/onednn_backend.hpp"

#include <omp.h>

#include "models/onednn/plan_cache.hpp"

namespace kinformer::models {
namespace {

// Sets the calling thread's OpenMP thread count for one forecast and restores it
// (the count is per thread: other threads' forecasts are not affected).
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : saved_(omp_get_max_threads()) {
    if (threads != saved_) omp_set_num_threads(threads);
  }
  ~ThreadCountScope() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_;
};

}  // namespace

OneDnnBackend::OneDnnBackend(InformerConfig config, std::shared_ptr<const InformerWeights> weights,
                             Precision precision, int64_t serial_max_batch)
    : Backend(std::move(config), std::move(weights)),
      precision_(precision),
      serial_max_batch_(serial_max_batch),
      plans_(std::make_unique<onednn::PlanCache>(config_, *weights_, precision == Precision::bf16)) {}

OneDnnBackend::~OneDnnBackend() = default;

int OneDnnBackend::threads_for(int64_t batch) const {
  return batch <= serial_max_batch_ ? 1 : omp_get_max_threads();
}

size_t OneDnnBackend::plan_count() const { return plans_->size(); }

void OneDnnBackend::run(const ForecastInput& in, Tensor& out, ProbSparseSampler& sampler, Trace* trace) {
  // A plan is built and run with the same thread count: its primitives split their work for it.
  const ThreadCountScope threads(threads_for(in.x_enc.dim(0)));
  plans_->run(in, out, sampler, trace);
}

}  // namespace kinformer::models
