#include "runtime/stop_signals.hpp"

namespace kinformer {
namespace {

const char* name_of(int signal_number) { return signal_number == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

const char* StopSignals::wait() const {
  int signal_number = 0;
  sigwait(&set_, &signal_number);
  return name_of(signal_number);
}

const char* StopSignals::wait_for(std::chrono::milliseconds timeout) const {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout - seconds);
  const timespec wait{static_cast<time_t>(seconds.count()), static_cast<long>(nanoseconds.count())};
  const int signal_number = sigtimedwait(&set_, nullptr, &wait);
  return signal_number > 0 ? name_of(signal_number) : nullptr;
}

}  // namespace kinformer
