// runtime/home_cpu.hpp
//
// The home CPU: one CPU that a process's HTTP client I/O threads and one scheduler
// worker (actors/scheduler.hpp) share, so that an event read on the I/O thread reaches
// the worker that handles it without waking another CPU (issue 29).
//
// Why: in this VM a thread woken on an idle vCPU costs an interprocessor interrupt and a
// halted vCPU's exit and re-entry; the kernel puts a woken worker on the idle CPU, not
// beside its waker. With the informer pinned to one CPU, our CPU at 100 writes/s fell
// from 1.08-1.57 % to 0.59-0.67 % of a core and our p50 from 317-412 µs to 218-336 µs
// (README "Against client-go"). Pinning only the threads on an event's way keeps the other
// workers, and every thread the process starts elsewhere, free to run on any CPU.
//
// Contract
//   * enable() turns the home CPU on for this process (the scheduler profile does, unless
//     SchedulerProfile::home_cpu is false or KINFORMER_HOME_CPU=off). Until then join()
//     and follow() do nothing.
//   * join(), on an I/O thread: chooses the home CPU if none is chosen yet, the CPU the
//     caller runs on, and pins the caller to it. True when the caller is now pinned.
//   * follow(), on the home worker before it takes a job: pins the caller to the home CPU
//     once one is chosen. After its first pin, one atomic load.
//   * leave(): gives the calling thread back the affinity mask the process had before the
//     first pin. A thread inherits its creator's mask, so a long-lived thread started from
//     a pinned one (a detached actor spawned by a handler, an OpenMP pool) calls it first;
//     the inference actor's model worker does.
//   * A CPU the process may not use, or a failed sched_setaffinity(), leaves the thread
//     as it was: nothing is pinned and nothing fails.
//   * chosen(): the home CPU, or -1 while none is chosen.
// Threading: every function is thread-safe.
// Errors: none; see above.
#pragma once

namespace kinformer::home_cpu {

void enable();
[[nodiscard]] bool join();
void follow();
void leave();
[[nodiscard]] int chosen();

}  // namespace kinformer::home_cpu
