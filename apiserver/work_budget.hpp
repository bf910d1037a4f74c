// apiserver/work_budget.hpp
//
// WorkBudget: the CPU time one request may spend in the patch engines and in schema
// validation, in proportion to its size (issue 33). The API handlers run on the
// server's few I/O threads, so a request that makes them loop for seconds delays every
// other client by as much; with a budget it is refused instead, after at most
// base + per_byte × bytes of the thread's CPU time.
//
// Contract
//   * A budget holds base + per_byte × n for the bytes allow_bytes() was told of (the
//     request body, then the stored object the request works on), and starts at the
//     first charge(): decoding the body and reading the stored object, both linear in
//     bounded sizes, come before and are not counted.
//   * charge(units) tells it that about `units` steps of work were done (a node
//     visited, an element compared or moved). Every few thousand units it reads the
//     thread's CPU clock (CLOCK_THREAD_CPUTIME_ID: time spent waiting for a core or
//     for etcd does not count). Once past the deadline it stays exhausted and charge()
//     answers false; the engines then stop and their caller answers error().
//   * error() is 413 RequestEntityTooLarge: the work a request needs is a property of
//     the request (kube-apiserver also answers 413 to a JSON patch of too many
//     operations), so a retry would fail the same way; 429 would invite client-go to
//     retry it.
//   * unbounded(): never exhausted (in-process callers and tests that need no budget).
// Threading: one budget belongs to one request on one thread (the CPU clock is the
//   calling thread's). Errors: none thrown.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "apiserver/api_error.hpp"

namespace kinformer::apiserver {

// Defaults: server-side apply, the heaviest engine, needs ~0.2 s of CPU per 300 KB (10k
// keyed elements) on a loaded two-core machine, so a legitimate request stays well
// within 1 µs per byte; a quadratic one (seconds for the same size) does not.
struct WorkLimits {
  std::chrono::milliseconds base{100};      // any request: a small patch, validation
  std::chrono::nanoseconds per_byte{1000};  // per byte of body and stored object: 1 s per MB
};

class WorkBudget {
 public:
  explicit WorkBudget(const WorkLimits& limits);
  static WorkBudget unbounded();

  /// Extends the deadline by limits.per_byte × bytes.
  void allow_bytes(std::size_t bytes);
  /// false once the budget is spent (and from then on).
  [[nodiscard]] bool charge(std::size_t units = 1);
  bool exhausted() const { return exhausted_; }
  /// The 413 a request gets when its budget is spent.
  ApiError error() const;

 private:
  WorkBudget() = default;
  static std::int64_t thread_cpu_ns();

  bool bounded_ = false;
  std::int64_t start_ns_ = -1;    // the thread's CPU clock at the first charge(); -1 before
  std::int64_t per_byte_ns_ = 0;
  std::int64_t allowed_ns_ = 0;   // CPU time from start_ns_ on
  std::size_t units_since_check_ = 0;
  bool exhausted_ = false;
};

}  // namespace kinformer::apiserver
