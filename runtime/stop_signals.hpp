// runtime/stop_signals.hpp
//
// StopSignals: how a long-running program (the kinformer CLI's serving commands, the
// examples) learns that it should stop. SIGINT and SIGTERM are blocked in the thread
// that builds it, and so in every thread that thread starts afterwards (threads
// inherit the mask); one thread then takes them with sigwait()/sigtimedwait(). No
// signal handler ever runs, so none can interrupt a library call halfway.
//
// Contract
//   * Build it first thing in main(), before any thread exists (actor system,
//     I/O loops, OpenMP): a thread started earlier keeps the signals unblocked, and
//     the kernel may deliver them there, which kills the process.
//   * wait() and wait_for() consume one pending signal; a signal that arrived while
//     nobody waited stays pending until the next call.
// Threading: wait from one thread; the object itself is immutable after construction.
// Not here: what stopping means (each program's own shutdown).
#pragma once

#include <signal.h>

#include <chrono>

namespace kinformer {

class StopSignals {
 public:
  /// Blocks SIGINT and SIGTERM in the calling thread (and the threads it starts later).
  StopSignals();

  /// Blocks until SIGINT or SIGTERM arrives; returns its name ("SIGINT" or "SIGTERM").
  const char* wait() const;

  /// As wait(), for at most `timeout`: nullptr when none arrived by then (or when
  /// another signal's handler interrupted the wait).
  const char* wait_for(std::chrono::milliseconds timeout) const;

 private:
  sigset_t set_;
};

}  // namespace kinformer
