// runtime/home_cpu.hpp: I/O threads choose and join the home CPU once it is enabled, the
// home worker follows them there, and a thread that inherited the pin can give it back.
// One case, in order, because enable() is for the process's life; every pin happens on a
// thread of the case's own, never on the test runner's.
#include "runtime/home_cpu.hpp"

#include <sched.h>

#include <set>
#include <thread>

#include <catch2/catch.hpp>

namespace {

// The calling thread's mask; empty when it cannot be read. Called on the case's own
// threads too, where Catch's assertions may not be used.
std::set<int> allowed_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::set<int> cpus;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) cpus.insert(cpu);
  return cpus;
}

// Runs `f` on a thread of its own and waits for it.
template <class F>
void on_new_thread(F f) {
  std::thread thread(f);
  thread.join();
}

}  // namespace

TEST_CASE("the home CPU: chosen by the first I/O thread once enabled, followed, inherited, and left",
          "[home_cpu][unit]") {
  const std::set<int> process = allowed_cpus();
  REQUIRE_FALSE(process.empty());
  REQUIRE(kinformer::home_cpu::chosen() == -1);

  bool joined = true;
  std::set<int> before_enable;
  on_new_thread([&] {
    joined = kinformer::home_cpu::join();
    before_enable = allowed_cpus();
  });
  CHECK_FALSE(joined);
  CHECK(before_enable == process);
  CHECK(kinformer::home_cpu::chosen() == -1);

  kinformer::home_cpu::enable();
  std::set<int> io_thread, inherited, after_leave;
  on_new_thread([&] {
    joined = kinformer::home_cpu::join();
    io_thread = allowed_cpus();
    on_new_thread([&] {  // a thread started from a pinned one
      inherited = allowed_cpus();
      kinformer::home_cpu::leave();
      after_leave = allowed_cpus();
    });
  });
  const int home = kinformer::home_cpu::chosen();
  REQUIRE(joined);
  REQUIRE(process.count(home) == 1);
  CHECK(io_thread == std::set<int>{home});
  CHECK(inherited == std::set<int>{home});
  CHECK(after_leave == process);

  std::set<int> worker;
  on_new_thread([&] {
    kinformer::home_cpu::follow();
    worker = allowed_cpus();
  });
  CHECK(worker == std::set<int>{home});
  CHECK(allowed_cpus() == process);  // the runner's own thread was never pinned
}
