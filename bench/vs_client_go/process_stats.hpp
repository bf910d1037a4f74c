// bench/vs_client_go/process_stats.hpp
//
// ProcessStats: what bench_vs_client_go reads about another process from /proc —
// CPU time, resident and peak memory, context switches — so that each informer's
// cost is its own process's, apart from the server and the writer.
//
// Contract
//   * cpu_seconds: the sum over the process's threads of the run time in
//     /proc/PID/task/TID/schedstat (nanoseconds; the 10 ms ticks of /proc/PID/stat
//     would round a 10 s idle window to 0 or 0.1 % of a core). A thread that has
//     exited no longer counts: read it over windows in which the threads persist
//     (both informers keep theirs). stat_cpu_seconds is /proc/PID/stat's utime +
//     stime (exited threads included), the cross-check.
//   * rss_bytes, peak_rss_bytes: VmRSS and VmHWM of /proc/PID/status.
//   * voluntary_switches, involuntary_switches: summed over the threads.
//   * A process that is gone reads as valid = false and zeros.
// Threading: free functions, no state.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace kinformer::bench {

struct ProcessStats {
  bool valid = false;
  double cpu_seconds = 0;
  double stat_cpu_seconds = 0;
  std::size_t rss_bytes = 0;
  std::size_t peak_rss_bytes = 0;
  std::uint64_t voluntary_switches = 0;
  std::uint64_t involuntary_switches = 0;
};

/// Reads /proc/PID now.
ProcessStats read_process_stats(pid_t pid);

/// The 1-minute load average, for the setup line.
double load_average_1m();

}  // namespace kinformer::bench
