// bench_model: Informer forward-pass speed per backend, batch and encoder length
// (default config of informer-model.md §1: label 48, pred 24, random weights).
// One JSON line per (backend, seq_len, batch) with median/min/max ms per batch and
// samples/s; progress on stderr. The slow reference backend gets fewer runs at
// large sizes (runs < 5 is then marked with "note").
//
// usage: bench_model [--backend onednn|reference|all] [--seq-lens 96,192,336,720]
//                    [--batches 1,32,64] [--runs 5] [--precision fp32|both]
// --precision both: for onednn, also runs bf16 at each point and prints a
// "precision":"bf16" line with the same-run fp32 median as baseline and the ratio
// (fp32 / bf16: above 1 means bf16 is faster), e.g.
//   bench_model --backend onednn --precision both --seq-lens 96,720 --batches 32
// Threads: oneDNN and our loops use OpenMP — set OMP_NUM_THREADS.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"

namespace models = kinformer::models;

namespace {

std::vector<int> int_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

models::Tensor random_input(models::Shape shape, std::mt19937& rng, float lo, float hi) {
  models::Tensor t(std::move(shape));
  std::uniform_real_distribution<float> u(lo, hi);
  for (auto& v : t.data) v = u(rng);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_arg = "all";
  std::vector<int> seq_lens = {96, 192, 336, 720}, batches = {1, 32, 64};
  int runs_wanted = 5;
  bool with_bf16 = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--backend") backend_arg = v;
    else if (k == "--seq-lens") seq_lens = int_list(v);
    else if (k == "--batches") batches = int_list(v);
    else if (k == "--runs") runs_wanted = std::max(1, std::atoi(v.c_str()));
    else if (k == "--precision" && (v == "fp32" || v == "both")) with_bf16 = v == "both";
    else {
      std::fprintf(stderr, "bench_model: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::vector<std::string> backends = backend_arg == "all" ? std::vector<std::string>{"onednn", "reference"}
                                                           : std::vector<std::string>{backend_arg};
  models::InformerConfig config;  // §1 defaults: D 512, H 8, d_ff 2048, e 2, d 1, prob, distil, mix
  auto weights = models::random_weights(config, 1);
  std::printf("{\"bench\":\"setup\",\"build\":\"%s\",\"config\":\"informer-model.md §1 default\",\"label_len\":%d,"
              "\"pred_len\":%d,\"threads\":%d}\n",
#ifdef NDEBUG
              "Release",
#else
              "Debug",
#endif
              config.label_len, config.pred_len, omp_get_max_threads());
  std::fflush(stdout);
  std::mt19937 rng(5);
  for (const auto& name : backends) {
    auto backend = models::make_backend(name, config, weights);
    std::unique_ptr<models::Backend> bf16;
    if (with_bf16 && name == "onednn") bf16 = models::make_backend(name, config, weights, {models::Precision::bf16});
    for (int seq_len : seq_lens)
      for (int batch : batches) {
        const int l_dec = config.label_len + config.pred_len;
        auto x_enc = random_input({batch, seq_len, config.enc_in}, rng, -2.f, 2.f);
        auto x_mark_enc = random_input({batch, seq_len, 4}, rng, -0.5f, 0.5f);
        auto x_dec = random_input({batch, l_dec, config.dec_in}, rng, -2.f, 2.f);
        auto x_mark_dec = random_input({batch, l_dec, 4}, rng, -0.5f, 0.5f);
        models::Tensor out;
        auto once = [&] {
          auto t0 = std::chrono::steady_clock::now();
          backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out);
          return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        std::fprintf(stderr, "bench_model: %s L=%d B=%d ...\n", name.c_str(), seq_len, batch);
        double first = once();  // warm-up: oneDNN builds its plan (primitives, buffers) here
        int runs = runs_wanted;
        const char* note = "";
        // The reference backend is single-threaded scalar C++: cap its wall time per point.
        if (name == "reference" && first > 2000) {
          runs = first > 20000 ? 1 : 3;
          note = ",\"note\":\"fewer runs: slow reference backend (warm-up run included when runs=1)\"";
        }
        std::vector<double> ms;
        if (name == "reference" && runs == 1) ms.push_back(first);
        else
          for (int r = 0; r < runs; ++r) ms.push_back(once());
        std::sort(ms.begin(), ms.end());
        const double median = ms[ms.size() / 2];
        std::printf("{\"bench\":\"forecast\",\"backend\":\"%s\",\"seq_len\":%d,\"batch\":%d,\"runs\":%zu,\"median_ms\":%.2f,"
                    "\"min_ms\":%.2f,\"max_ms\":%.2f,\"samples_per_s\":%.1f%s}\n",
                    name.c_str(), seq_len, batch, ms.size(), median, ms.front(), ms.back(), 1000.0 * batch / median, note);
        std::fflush(stdout);
        if (!bf16) continue;
        std::fprintf(stderr, "bench_model: %s bf16 L=%d B=%d ...\n", name.c_str(), seq_len, batch);
        models::Tensor out_bf16;
        auto once_bf16 = [&] {
          auto t0 = std::chrono::steady_clock::now();
          bf16->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out_bf16);
          return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        once_bf16();  // warm-up: plan and the one-time bf16 weight conversion
        std::vector<double> ms_bf16;
        for (int r = 0; r < runs; ++r) ms_bf16.push_back(once_bf16());
        std::sort(ms_bf16.begin(), ms_bf16.end());
        const double median_bf16 = ms_bf16[ms_bf16.size() / 2];
        double max_error = 0, max_fp32 = 0;
        for (size_t i = 0; i < out.data.size(); ++i) {
          max_error = std::max(max_error, static_cast<double>(std::fabs(out.data[i] - out_bf16.data[i])));
          max_fp32 = std::max(max_fp32, static_cast<double>(std::fabs(out.data[i])));
        }
        std::printf("{\"bench\":\"forecast\",\"backend\":\"%s\",\"precision\":\"bf16\",\"seq_len\":%d,\"batch\":%d,"
                    "\"runs\":%zu,\"median_ms\":%.2f,\"min_ms\":%.2f,\"max_ms\":%.2f,\"baseline\":\"onednn_fp32\","
                    "\"baseline_median_ms\":%.2f,\"ratio\":%.2f,\"max_abs_error_vs_fp32\":%.3g,\"max_abs_fp32\":%.3g}\n",
                    name.c_str(), seq_len, batch, ms_bf16.size(), median_bf16, ms_bf16.front(), ms_bf16.back(), median,
                    median / median_bf16, max_error, max_fp32);
        std::fflush(stdout);
      }
  }
  return 0;
}
