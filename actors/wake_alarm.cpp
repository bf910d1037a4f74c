#include "actors/wake_alarm.hpp"

#include <pthread.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace kinformer::actors {
namespace {

int make_timerfd() {
  // libstdc++'s steady_clock reads CLOCK_MONOTONIC, so deadlines need no conversion.
  const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "timerfd_create");
  return fd;
}

}  // namespace

WakeAlarm::WakeAlarm(std::function<void()> on_fire) : on_fire_(std::move(on_fire)), fd_(make_timerfd()) {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

WakeAlarm::~WakeAlarm() {
  stopping_ = true;
  set(Clock::time_point{});  // already past: read() returns at once
  thread_.join();
  ::close(fd_);
}

void WakeAlarm::arm(Clock::time_point deadline) { set(deadline); }

void WakeAlarm::disarm() {
  itimerspec none{};
  ::timerfd_settime(fd_, TFD_TIMER_ABSTIME, &none, nullptr);
}

void WakeAlarm::set(Clock::time_point deadline) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  itimerspec when{};
  // An it_value of zero would disarm; a deadline at or before the clock's epoch is past anyway.
  when.it_value.tv_sec = ns > 0 ? static_cast<time_t>(ns / 1'000'000'000) : 0;
  when.it_value.tv_nsec = ns > 0 ? static_cast<long>(ns % 1'000'000'000) : 1;
  ::timerfd_settime(fd_, TFD_TIMER_ABSTIME, &when, nullptr);
}

void WakeAlarm::run() {
  ::pthread_setname_np(::pthread_self(), "job_queue.alarm");
  for (;;) {
    std::uint64_t expirations = 0;
    if (::read(fd_, &expirations, sizeof expirations) != static_cast<ssize_t>(sizeof expirations)) continue;  // EINTR
    if (stopping_) return;
    on_fire_();
  }
}

}  // namespace kinformer::actors
