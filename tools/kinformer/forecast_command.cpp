// kinformer forecast: runs the Informer on .npy inputs and writes the forecast as .npy.
#include <cstdio>
#include <cstdlib>

#include "models/model_error.hpp"
#include "models/npy.hpp"
#include "runtime/log.hpp"
#include "tools/kinformer/command.hpp"
#include "tools/kinformer/model_cli.hpp"

namespace {

constexpr const char* forecast_usage =
    "usage: kinformer forecast --config C.json --weights W.safetensors --x-enc X.npy --x-mark-enc XM.npy\n"
    "                          --x-dec D.npy --x-mark-dec DM.npy --out Y.npy\n"
    "                          [--backend reference|onednn|cuda|auto] [--precision fp32|bf16|tf32|fp16] [--seed N]\n"
    "  inputs float32: x_enc [B, seq_len, enc_in], x_mark_enc [B, seq_len, F_t],\n"
    "  x_dec [B, label_len+pred_len, dec_in], x_mark_dec [B, label_len+pred_len, F_t];\n"
    "  output [B, pred_len, c_out]. Default backend: onednn. --seed: ProbSparse key sampling (default 2021).\n";

int run_forecast(int argc, char** argv) {
  using namespace kinformer;
  cli::Options o;
  std::string error;
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::fputs(forecast_usage, stdout);
    return 0;
  }
  if (!cli::parse_options(argc, argv, {"config", "weights", "x-enc", "x-mark-enc", "x-dec", "x-mark-dec", "out"},
                          {"backend", "seed", "precision"}, o, &error)) {
    kinformer::log::error("forecast", error);
    std::fputs(forecast_usage, stderr);
    return 2;
  }
  try {
    auto backend = cli::open_model(o["config"], o["weights"], o.count("backend") ? o["backend"] : "onednn",
                                   models::parse_precision(o.count("precision") ? o["precision"] : "fp32"));
    auto x_enc = models::read_npy(o["x-enc"]), x_mark_enc = models::read_npy(o["x-mark-enc"]),
         x_dec = models::read_npy(o["x-dec"]), x_mark_dec = models::read_npy(o["x-mark-dec"]);
    models::SeededSampler sampler(o.count("seed") ? std::strtoull(o["seed"].c_str(), nullptr, 10) : 2021);
    models::Tensor out;
    backend->forecast({x_enc, x_mark_enc, x_dec, x_mark_dec}, out, sampler);
    models::write_npy(o["out"], out);
    kinformer::log::info("forecast", "wrote",
                         {{"file", o["out"]}, {"shape", models::to_string(out.shape)}, {"backend", backend->name()}});
    return 0;
  } catch (const std::exception& e) {
    kinformer::log::error("forecast", e.what());
    return 1;
  }
}

const bool forecast_registered =
    kinformer::cli::register_command({"forecast", "run the Informer on .npy inputs", run_forecast});

}  // namespace
