#include "runtime/home_cpu.hpp"

#include <sched.h>

#include <atomic>
#include <mutex>

namespace kinformer::home_cpu {
namespace {

std::atomic<bool> enabled{false};
std::atomic<int> home{-1};
std::mutex choosing;  // guards the choice and process_mask
cpu_set_t process_mask;
bool have_process_mask = false;

thread_local int pinned_to = -1;
thread_local int followed = -1;  // the home CPU follow() last tried, pinned or not

bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::sched_setaffinity(0, sizeof one, &one) != 0) return false;
  pinned_to = cpu;
  return true;
}

}  // namespace

void enable() { enabled.store(true, std::memory_order_release); }

bool join() {
  if (!enabled.load(std::memory_order_acquire)) return false;
  int cpu = home.load(std::memory_order_acquire);
  if (cpu < 0) {
    std::lock_guard<std::mutex> lock(choosing);
    cpu = home.load(std::memory_order_relaxed);
    if (cpu < 0) {
      cpu_set_t mask;
      CPU_ZERO(&mask);
      const int here = ::sched_getcpu();
      // A thread that cannot read its own mask, or that runs outside it (a cpuset just
      // changed), chooses nothing: no pin beats a wrong one.
      if (here < 0 || ::sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(here, &mask)) return false;
      process_mask = mask;
      have_process_mask = true;
      cpu = here;
      home.store(cpu, std::memory_order_release);
    }
  }
  return pinned_to == cpu || pin_to(cpu);
}

void follow() {
  const int cpu = home.load(std::memory_order_acquire);
  if (cpu < 0 || followed == cpu) return;
  followed = cpu;  // one try: a pin that fails is not retried on every job
  (void)pin_to(cpu);
}

void leave() {
  std::lock_guard<std::mutex> lock(choosing);
  if (!have_process_mask) return;  // nothing was ever pinned
  if (::sched_setaffinity(0, sizeof process_mask, &process_mask) == 0) pinned_to = -1;
}

int chosen() { return home.load(std::memory_order_acquire); }

}  // namespace kinformer::home_cpu
