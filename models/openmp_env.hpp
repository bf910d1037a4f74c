// models/openmp_env.hpp
//
// OpenMP's wait policy for processes that run the model next to other work.
// libgomp (oneDNN's runtime here) lets its threads spin after every parallel
// region; in a process that also runs actors or I/O, that takes the cores those
// need. OMP_WAIT_POLICY=PASSIVE makes them sleep instead. libgomp reads the
// variable once, when it is loaded, so setting it from main() is too late: a
// program either gets it from its environment or re-executes itself with it.
//
// Contract
//   * passive_wait_policy(): true when OMP_WAIT_POLICY is PASSIVE (any case).
//   * reexec_with_passive_wait_policy(): when the variable is unset, sets it and
//     re-executes /proc/self/exe with the same arguments (does not return on
//     success). A variable already set (to anything) is respected, and the call
//     returns, as it does when exec fails.
// Threading: call first thing in main(), before any other thread exists.
#pragma once

namespace kinformer::models {

bool passive_wait_policy();

void reexec_with_passive_wait_policy(char** argv);

}  // namespace kinformer::models
