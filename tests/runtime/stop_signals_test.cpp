// runtime/stop_signals.hpp: the stop signals are taken by the waiting thread, by name,
// instead of killing the process.
#include "runtime/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

namespace {

// Restores the test thread's signal mask, so that later tests (and their threads)
// still die on Ctrl-C.
class SignalMaskGuard {
 public:
  SignalMaskGuard() { pthread_sigmask(SIG_SETMASK, nullptr, &saved_); }
  ~SignalMaskGuard() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  SignalMaskGuard(const SignalMaskGuard&) = delete;
  SignalMaskGuard& operator=(const SignalMaskGuard&) = delete;

 private:
  sigset_t saved_;
};

std::string name_or_none(const char* name) { return name ? name : "(none)"; }

}  // namespace

TEST_CASE("a SIGTERM sent while blocked is taken by wait_for, by name", "[stop_signals][unit]") {
  const SignalMaskGuard guard;
  const kinformer::StopSignals stop;
  // Directed at this thread, where it is blocked: it stays pending instead of killing the process.
  REQUIRE(pthread_kill(pthread_self(), SIGTERM) == 0);
  CHECK(name_or_none(stop.wait_for(std::chrono::seconds(5))) == "SIGTERM");
}

TEST_CASE("wait takes a pending SIGINT and names it", "[stop_signals][unit]") {
  const SignalMaskGuard guard;
  const kinformer::StopSignals stop;
  REQUIRE(pthread_kill(pthread_self(), SIGINT) == 0);
  CHECK(std::string(stop.wait()) == "SIGINT");
}

TEST_CASE("wait_for answers null when no stop signal came within the timeout", "[stop_signals][unit]") {
  const SignalMaskGuard guard;
  const kinformer::StopSignals stop;
  const auto started = std::chrono::steady_clock::now();
  CHECK(stop.wait_for(std::chrono::milliseconds(20)) == nullptr);
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(20));
}
