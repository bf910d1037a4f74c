#include "models/openmp_env.hpp"

#include <strings.h>
#include <unistd.h>

#include <cstdlib>

namespace kinformer::models {

bool passive_wait_policy() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  return policy && strcasecmp(policy, "passive") == 0;
}

void reexec_with_passive_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed: carry on with libgomp's default (active) policy.
}

}  // namespace kinformer::models
