// bench_model: Informer forward-pass speed per backend, batch and encoder length
// (default config of informer-model.md §1: label 48, pred 24, random weights).
// One JSON line per (backend, seq_len, batch) with median/min/max ms per batch and
// samples/s; progress on stderr. The slow reference backend gets fewer runs at
// large sizes (runs < 5 is then marked with "note").
//
// Options: `bench_model --help` (the usage text below).
// cuda: one line per (precision, graphs) as well; --accuracy on adds, per seq_len and
// precision, the scaled max error against the reference backend at batch 2 (with a
// fixed ProbSparse selection, and with each backend's own selection).
// --precision both: for onednn, also runs bf16 at each point and prints a
// "precision":"bf16" line with the same-run fp32 median as baseline and the ratio
// (fp32 / bf16: above 1 means bf16 is faster), e.g.
//   bench_model --backend onednn --precision both --seq-lens 96,720 --batches 32
// A backend that cannot run here (not built, no GPU) gets one line
// {"bench":"forecast","backend":...,"error":"backend_unavailable","reason":...} and the
// exit status is 3; the other backends still run.
// Threads: oneDNN and our loops use OpenMP — set OMP_NUM_THREADS.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/backend.hpp"
#include "models/informer_weights.hpp"
#include "models/model_error.hpp"
#include "models/prob_sparse.hpp"
#include "runtime/help_option.hpp"

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

// For a reason inside a JSON string: quotes and backslashes escaped, control characters dropped.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

std::vector<std::string> string_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

struct Inputs {
  models::Tensor x_enc, x_mark_enc, x_dec, x_mark_dec;
  models::ForecastInput view() const { return {x_enc, x_mark_enc, x_dec, x_mark_dec}; }
};

Inputs make_inputs(const models::InformerConfig& config, int batch, int seq_len, std::mt19937& rng) {
  const int l_dec = config.label_len + config.pred_len;
  return {random_input({batch, seq_len, config.enc_in}, rng, -2.f, 2.f),
          random_input({batch, seq_len, 4}, rng, -0.5f, 0.5f),
          random_input({batch, l_dec, config.dec_in}, rng, -2.f, 2.f),
          random_input({batch, l_dec, 4}, rng, -0.5f, 0.5f)};
}

// max |a − b| / max(max |b|, 1e-3), as the golden tests measure.
double scaled_difference(const models::Tensor& a, const models::Tensor& b) {
  double err = 0, scale = 1e-3;
  for (size_t i = 0; i < a.data.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(a.data[i]) - b.data[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b.data[i])));
  }
  return err / scale;
}

// The cuda backend's error against the reference at batch 2: with a fixed selection
// (pure arithmetic cost of the precision) and with each backend choosing its own
// queries (what a user sees, near-tie flips included).
void print_accuracy(const models::InformerConfig& config,
                    std::shared_ptr<const models::InformerWeights> weights, int seq_len,
                    const std::vector<models::BackendOptions>& variants) {
  std::mt19937 rng(7);
  const int batch = 2;
  const Inputs in = make_inputs(config, batch, seq_len, rng);
  auto calls = models::prob_sparse_calls(config, seq_len, config.label_len + config.pred_len);
  auto reference = models::make_backend("reference", config, weights);
  models::Tensor ref_fixed, ref_own;
  auto fixed = models::fixed_selection_sampler(calls, batch, config.n_heads, 3);
  reference->forecast(in.view(), ref_fixed, fixed);
  models::SeededSampler own(3);
  reference->forecast(in.view(), ref_own, own);
  for (const auto& options : variants) {
    auto cuda = models::make_backend("cuda", config, weights, options);
    models::Tensor out_fixed, out_own;
    auto fixed_again = models::fixed_selection_sampler(calls, batch, config.n_heads, 3);
    cuda->forecast(in.view(), out_fixed, fixed_again);
    cuda->forecast(in.view(), out_own, own);
    std::printf(
        "{\"bench\":\"accuracy\",\"backend\":\"cuda\",\"precision\":\"%s\",\"seq_len\":%d,\"batch\":%d,"
        "\"vs\":\"reference\",\"scaled_max_err_fixed_selection\":%.3g,\"scaled_max_err_own_selection\":%.3g}"
        "\n",
        std::string(models::to_string(options.precision)).c_str(), seq_len, batch,
        scaled_difference(out_fixed, ref_fixed), scaled_difference(out_own, ref_own));
    std::fflush(stdout);
  }
}

}  // namespace

// The onednn bf16 line of one point: its median against the fp32 median just
// measured (`fp32_out` holds the fp32 forecast of the same inputs).
void print_bf16_point(models::Backend& bf16, const Inputs& in, const models::Tensor& fp32_out,
                      double fp32_median, int seq_len, int batch, int runs) {
  std::fprintf(stderr, "bench_model: onednn bf16 L=%d B=%d ...\n", seq_len, batch);
  models::Tensor out;
  auto once = [&] {
    auto t0 = std::chrono::steady_clock::now();
    bf16.forecast(in.view(), out);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  once();  // warm-up: the plan and the one-time bf16 weight conversion
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) ms.push_back(once());
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  double max_error = 0, max_fp32 = 0;
  for (size_t i = 0; i < fp32_out.data.size(); ++i) {
    max_error = std::max(max_error, static_cast<double>(std::fabs(fp32_out.data[i] - out.data[i])));
    max_fp32 = std::max(max_fp32, static_cast<double>(std::fabs(fp32_out.data[i])));
  }
  std::printf(
      "{\"bench\":\"forecast\",\"backend\":\"onednn\",\"precision\":\"bf16\",\"seq_len\":%d,\"batch\":%d,"
      "\"runs\":%zu,\"median_ms\":%.2f,\"min_ms\":%.2f,\"max_ms\":%.2f,\"baseline\":\"onednn_fp32\","
      "\"baseline_median_ms\":%.2f,\"ratio\":%.2f,\"max_abs_error_vs_fp32\":%.3g,\"max_abs_fp32\":%.3g}\n",
      seq_len, batch, ms.size(), median, ms.front(), ms.back(), fp32_median, fp32_median / median, max_error,
      max_fp32);
  std::fflush(stdout);
}

constexpr const char* usage =
    "usage: bench_model [--backend onednn|reference|cuda|all] [--seq-lens 96,192,336,720]\n"
    "                   [--batches 1,32,64] [--runs 5] [--precisions fp32,tf32,fp16,bf16]\n"
    "                   [--graphs on|off|both] [--accuracy on|off] [--precision fp32|both]\n"
    "--backend all (the default): every backend that can run here.\n";

int main(int argc, char** argv) {
  if (kinformer::cli::answered_help(argc, argv, usage)) return 0;
  std::string backend_arg = "all";
  std::vector<int> seq_lens = {96, 192, 336, 720}, batches = {1, 32, 64};
  int runs_wanted = 5;
  std::vector<std::string> precisions = {"fp32"};
  std::string graphs_arg = "on";
  bool accuracy = false;
  bool onednn_bf16 = false;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (k == "--backend")
      backend_arg = v;
    else if (k == "--seq-lens")
      seq_lens = int_list(v);
    else if (k == "--batches")
      batches = int_list(v);
    else if (k == "--runs")
      runs_wanted = std::max(1, std::atoi(v.c_str()));
    else if (k == "--precisions")
      precisions = string_list(v);
    else if (k == "--graphs" && (v == "on" || v == "off" || v == "both"))
      graphs_arg = v;
    else if (k == "--accuracy" && (v == "on" || v == "off"))
      accuracy = v == "on";
    else if (k == "--precision" && (v == "fp32" || v == "both"))
      onednn_bf16 = v == "both";
    else {
      std::fprintf(stderr, "bench_model: unknown option or value: %s %s\n%s", k.c_str(), v.c_str(), usage);
      return 2;
    }
  }
  // "all": every backend that can run here (cuda only with a usable device).
  std::vector<std::string> backends =
      backend_arg == "all" ? models::available_backends() : std::vector<std::string>{backend_arg};
  // Every (precision, graphs) variant; only the cuda backend has more than one.
  std::vector<models::BackendOptions> cuda_variants;
  try {
    for (const auto& p : precisions)
      for (bool g : {true, false})
        if ((g && graphs_arg != "off") || (!g && graphs_arg != "on")) {
          models::BackendOptions o;
          o.precision = models::parse_precision(p);
          o.cuda_graphs = g;
          cuda_variants.push_back(o);
        }
  } catch (const models::ModelError& e) {
    std::fprintf(stderr, "bench_model: %s\n", e.what());
    return 2;
  }
  int status = 0;
  models::InformerConfig config;  // §1 defaults: D 512, H 8, d_ff 2048, e 2, d 1, prob, distil, mix
  auto weights = models::random_weights(config, 1);
  std::printf(
      "{\"bench\":\"setup\",\"build\":\"%s\",\"config\":\"informer-model.md §1 default\",\"label_len\":%d,"
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
    if (name == "cuda") {
      std::string why;
      if (!models::cuda_device_available(&why)) {
        std::printf(
            "{\"bench\":\"forecast\",\"backend\":\"cuda\",\"error\":\"backend_unavailable\",\"reason\":\"%"
            "s\"}\n",
            escaped(why).c_str());
        std::fflush(stdout);
        status = 3;
        continue;
      }
    }
    const std::vector<models::BackendOptions> variants =
        name == "cuda" ? cuda_variants : std::vector<models::BackendOptions>{models::BackendOptions{}};
    if (name == "cuda" && accuracy) {
      std::vector<models::BackendOptions> one_per_precision;
      for (const auto& v : variants)
        if (v.cuda_graphs == variants.front().cuda_graphs) one_per_precision.push_back(v);
      for (int seq_len : seq_lens) print_accuracy(config, weights, seq_len, one_per_precision);
    }
    for (const auto& options : variants) {
      std::unique_ptr<models::Backend> backend;
      try {
        backend = models::make_backend(name, config, weights, options);
      } catch (const models::BackendUnavailable& e) {
        std::printf(
            "{\"bench\":\"forecast\",\"backend\":\"%s\",\"error\":\"backend_unavailable\",\"reason\":\"%s\"}"
            "\n",
            name.c_str(), escaped(e.what()).c_str());
        status = 3;
        break;
      }
      std::unique_ptr<models::Backend> bf16;
      if (onednn_bf16 && name == "onednn") {
        models::BackendOptions bf16_options;
        bf16_options.precision = models::Precision::bf16;
        bf16 = models::make_backend(name, config, weights, bf16_options);
      }
      const std::string extra = name != "cuda"
                                    ? std::string()
                                    : std::string(",\"precision\":\"") +
                                          std::string(models::to_string(options.precision)) +
                                          "\",\"graphs\":" + (options.cuda_graphs ? "true" : "false");
      for (int seq_len : seq_lens)
        for (int batch : batches) {
          const Inputs in = make_inputs(config, batch, seq_len, rng);
          models::Tensor out;
          auto once = [&] {
            auto t0 = std::chrono::steady_clock::now();
            backend->forecast(in.view(), out);
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          };
          std::fprintf(stderr, "bench_model: %s%s L=%d B=%d ...\n", name.c_str(), extra.c_str(), seq_len,
                       batch);
          double first = once();       // warm-up: oneDNN builds its plan here; cuda its plan and graph
          if (name == "cuda") once();  // and the first replay, so that the timed runs are steady
          int runs = runs_wanted;
          const char* note = "";
          // The reference backend is single-threaded scalar C++: cap its wall time per point.
          if (name == "reference" && first > 2000) {
            runs = first > 20000 ? 1 : 3;
            note = ",\"note\":\"fewer runs: slow reference backend (warm-up run included when runs=1)\"";
          }
          std::vector<double> ms;
          if (name == "reference" && runs == 1)
            ms.push_back(first);
          else
            for (int r = 0; r < runs; ++r) ms.push_back(once());
          std::sort(ms.begin(), ms.end());
          const double median = ms[ms.size() / 2];
          std::printf(
              "{\"bench\":\"forecast\",\"backend\":\"%s\"%s,\"seq_len\":%d,\"batch\":%d,\"runs\":%zu,"
              "\"median_ms\":%.3f,"
              "\"min_ms\":%.3f,\"max_ms\":%.3f,\"samples_per_s\":%.1f%s}\n",
              name.c_str(), extra.c_str(), seq_len, batch, ms.size(), median, ms.front(), ms.back(),
              1000.0 * batch / median, note);
          std::fflush(stdout);
          if (bf16) print_bf16_point(*bf16, in, out, median, seq_len, batch, runs);
        }
    }
  }
  return status;
}
