// tests/support/thread_affinity.hpp
//
// thread_pins(): every thread of this process, by name, and whether it may run on one
// given CPU only: how the home CPU's tests (runtime/home_cpu.hpp) see who is pinned.
//
// Contract
//   * Reads /proc/self/task/*/comm and the Cpus_allowed_list line of its status; a thread
//     that ends during the walk may be missing or have an empty name.
//   * A thread's name is its creator's until it sets its own (Linux copies it on clone):
//     an OpenMP thread started by a detached actor's thread has that thread's name.
// Header-only, like the other small helpers here.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kinformer::testing {

struct ThreadPin {
  std::string name;
  bool pinned = false;  // may run on the given CPU alone
};

inline std::vector<ThreadPin> thread_pins(int cpu) {
  std::vector<ThreadPin> threads;
  std::error_code ignored;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ignored)) {
    std::ifstream comm(task.path() / "comm"), status(task.path() / "status");
    ThreadPin thread;
    std::getline(comm, thread.name);
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) thread.pinned = line == "Cpus_allowed_list:\t" + std::to_string(cpu);
    threads.push_back(std::move(thread));
  }
  return threads;
}

}  // namespace kinformer::testing
