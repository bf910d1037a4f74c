// tools/kinformer/stop_signals.hpp
//
// How the serving subcommands (apiserver, serve-inference) stop: SIGINT and
// SIGTERM are blocked in every thread before any thread starts (threads inherit
// the mask), and the main thread waits for one with sigwait(), so no signal
// handler runs in the middle of a library call.
// Threading: block_stop_signals() first thing, before threads exist.
#pragma once

#include <signal.h>

namespace kinformer::cli {

/// Blocks SIGINT and SIGTERM in the calling thread (and the threads it starts later).
inline sigset_t block_stop_signals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  return stop;
}

/// Blocks until SIGINT or SIGTERM arrives; returns its name.
inline const char* wait_for_stop_signal(const sigset_t& stop) {
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  return signal_number == SIGINT ? "SIGINT" : "SIGTERM";
}

}  // namespace kinformer::cli
