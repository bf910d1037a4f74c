#include "tests/models/golden_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "models/npy.hpp"

namespace kinformer::testing {

std::string golden_dir() {
  static std::once_flag once;
  const std::string dir = KINFORMER_GOLDEN_DIR;
  std::call_once(once, [&] {
    if (std::ifstream(dir + "/MANIFEST")) return;
    // Direct runs of the binary (not through ctest's fixture) generate on first use.
    std::string cmd = std::string(KINFORMER_PYTHON) + " " + KINFORMER_SOURCE_DIR +
                      "/tools/reference/make_goldens.py --out " + dir + " > /dev/null";
    WARN("golden files missing; generating them: " << cmd);
    if (std::system(cmd.c_str()) != 0) WARN("golden generation failed");
  });
  if (!std::ifstream(dir + "/MANIFEST"))
    FAIL("golden files are missing in " << dir << " and could not be generated: they need Debian's python3 with "
         "python3-torch (scripts/install-deps installs it), then run /usr/bin/python3 "
         "tools/reference/make_goldens.py --out " << dir);
  return dir;
}

std::string golden_weights() { return golden_dir() + "/weights.safetensors"; }

std::string golden_weights(const std::string& case_name) {
  const std::string own = golden_dir() + "/" + case_name + "/weights.safetensors";
  return std::ifstream(own).good() ? own : golden_weights();
}

models::InformerConfig golden_config(const std::string& case_name) {
  return models::load_config(golden_dir() + "/" + case_name + "/config.json");
}

models::Tensor golden_tensor(const std::string& case_name, const std::string& name) {
  return models::read_npy(golden_dir() + "/" + case_name + "/" + name + ".npy");
}

models::ReplaySampler golden_sampler(const std::string& case_name, int first, int count, bool with_top) {
  std::vector<models::ReplaySampler::Call> calls;
  for (int k = first; k < first + count; ++k) {
    auto base = golden_dir() + "/" + case_name + "/";
    auto idx = models::read_npy_indices(base + "idx" + std::to_string(k) + ".npy");
    models::ReplaySampler::Call call;
    call.l_q = static_cast<int>(idx.shape.at(0));
    call.sample_k = static_cast<int>(idx.shape.at(1));
    call.idx.assign(idx.data.begin(), idx.data.end());
    if (with_top) {
      auto top = models::read_npy_indices(base + "top" + std::to_string(k) + ".npy");
      call.top.assign(top.data.begin(), top.data.end());
    }
    calls.push_back(std::move(call));
  }
  return models::ReplaySampler(std::move(calls));
}

double scaled_error(const models::Tensor& a, const models::Tensor& b) {
  REQUIRE(models::to_string(a.shape) == models::to_string(b.shape));
  double max_err = 0, scale = 1e-3;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double d = std::fabs(static_cast<double>(a.data[i]) - b.data[i]);
    max_err = std::max(max_err, std::isnan(d) ? INFINITY : d);
    scale = std::max(scale, std::fabs(static_cast<double>(b.data[i])));
  }
  return max_err / scale;
}

}  // namespace kinformer::testing
