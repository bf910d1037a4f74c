// kinformer serve-inference: the inference actor (actors/inference.hpp) published
// with CAF's io middleman, for requesters in other processes
// (actors/inference_client.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

#include "actors/errors.hpp"
#include "actors/inference.hpp"
#include "actors/scheduler.hpp"
#include "models/openmp_env.hpp"
#include "runtime/log.hpp"
#include "runtime/stop_signals.hpp"
#include "tools/kinformer/command.hpp"

namespace {

using namespace kinformer;

constexpr const char* serve_inference_usage =
    "usage: kinformer serve-inference --port P --model NAME=CONFIG.json,WEIGHTS.safetensors [--model ...]\n"
    "                                 [--host 127.0.0.1] [--backend auto|onednn|reference|cuda]\n"
    "                                 [--precision fp32|bf16|tf32|fp16] [--max-batch 32] [--max-delay-ms 5] "
    "[--max-queue 1024]\n"
    "  publishes the inference actor on HOST:P (loopback by default; --port 0 picks a free port), prints\n"
    "  \"serving inference on HOST:PORT\" on stdout, and serves until SIGINT or SIGTERM.\n"
    "  Runs with OMP_WAIT_POLICY=PASSIVE unless the environment sets it.\n";

bool parse_model(const std::string& spec, models::Precision precision, actors::InferenceModel& out) {
  auto eq = spec.find('='), comma = spec.find(',', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || eq == 0 || comma == std::string::npos || comma == eq + 1 ||
      comma + 1 == spec.size())
    return false;
  out = actors::InferenceModel{spec.substr(0, eq), spec.substr(eq + 1, comma - eq - 1),
                               spec.substr(comma + 1), precision};
  return true;
}

// "--name value" pairs; --model may repeat. Returns an error message, empty when fine.
std::string parse(int argc, char** argv, actors::InferenceOptions& options, std::string& host, int& port) {
  std::vector<std::string> model_specs;
  models::Precision precision = models::Precision::fp32;
  port = -1;
  for (int i = 1; i < argc; i += 2) {
    std::string name = argv[i];
    if (i + 1 >= argc) return "option '" + name + "' needs a value";
    std::string value = argv[i + 1];
    char* end = nullptr;
    auto number = [&] { return std::strtol(value.c_str(), &end, 10); };
    if (name == "--model")
      model_specs.push_back(value);
    else if (name == "--host")
      host = value;
    else if (name == "--backend")
      options.backend = value;
    else if (name == "--port")
      port = static_cast<int>(number());
    else if (name == "--max-batch")
      options.batching.max_batch = static_cast<std::size_t>(number());
    else if (name == "--max-delay-ms")
      options.batching.max_delay = std::chrono::milliseconds(number());
    else if (name == "--max-queue")
      options.batching.max_queue = static_cast<std::size_t>(number());
    else if (name == "--precision") {
      if (value != "fp32" && value != "bf16" && value != "tf32" && value != "fp16")
        return "--precision must be fp32, bf16, tf32 or fp16";
      precision = models::parse_precision(value);
    } else
      return "unknown argument '" + name + "'";
    if (end && (*end != '\0' || value.empty() || value[0] == '-'))
      return "option " + name + " needs a number >= 0";
  }
  if (port < 0 || port > 65535) return "missing or bad --port (0..65535)";
  if (model_specs.empty()) return "missing --model NAME=CONFIG,WEIGHTS";
  if (options.batching.max_batch < 1) return "--max-batch must be at least 1";
  for (const auto& spec : model_specs) {
    actors::InferenceModel model;
    if (!parse_model(spec, precision, model)) return "bad --model '" + spec + "' (NAME=CONFIG,WEIGHTS)";
    options.models.push_back(model);
  }
  return {};
}

int run_serve_inference(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::fputs(serve_inference_usage, stdout);
    return 0;
  }
  // argv is main's argv + 1 (command.hpp), so argv - 1 re-runs the whole command line.
  models::reexec_with_passive_wait_policy(argv - 1);
  actors::InferenceOptions options;
  std::string host = "127.0.0.1";
  int port = 0;
  if (auto error = parse(argc, argv, options, host, port); !error.empty()) {
    kinformer::log::error("serve-inference", error);
    std::fputs(serve_inference_usage, stderr);
    return 2;
  }
  // Before the actor system starts its threads, so only the wait below sees the stop signals.
  const StopSignals stop;
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  actors::configure_scheduler(cfg);
  actors::register_errors(cfg);
  actors::register_inference_types(cfg);
  caf::actor_system system{cfg};
  auto inference = actors::spawn_inference(system, options);
  if (!inference) {
    kinformer::log::error("serve-inference", inference.error().to_string());
    return 1;
  }
  auto published = system.middleman().publish(*inference, static_cast<uint16_t>(port), host.c_str(), true);
  if (!published) {
    kinformer::log::error("serve-inference", "cannot publish",
                          {{"host", host}, {"port", port}, {"error", system.render(published.error())}});
    caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::printf("serving inference on %s:%u\n", host.c_str(), static_cast<unsigned>(*published));
  std::fflush(stdout);
  kinformer::log::info("serve-inference", "stopping", {{"signal", stop.wait()}});
  (void)system.middleman().unpublish(*inference, *published);
  caf::anon_send_exit(*inference, caf::exit_reason::user_shutdown);
  return 0;
}

const bool serve_inference_registered = kinformer::cli::register_command(
    {"serve-inference", "publish the batched inference actor for other processes", run_serve_inference});

}  // namespace
