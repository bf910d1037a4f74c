// bench/vs_client_go/counting_informer.hpp
//
// The kinformer side of bench_vs_client_go, run as its own process (the bench
// re-executes itself with --counting-informer), so that its CPU and memory are
// read from /proc apart from the server and the writer: a SharedInformer over
// HTTP with one counting handler, the counterpart of client-go-peer's.
//
//   bench_vs_client_go --counting-informer URL RESOURCE NAMESPACE EXPECT STAMP_KEY [--caf.OPTION=V ...]
//
// Contract
//   * The actor system gets actors::configure_scheduler(), then the given CAF
//     options on top (--scheduler.policy=sharing, --work-stealing.*: how the
//     bench compares scheduler profiles).
//   * The handler counts every add, update and delete, as the peer's does. For
//     each add, and each update whose resourceVersion changed, it reads the
//     STAMP_KEY annotation (Unix-epoch nanoseconds, CLOCK_REALTIME) and records
//     now - stamp on entry to the handler; objects without it count as unstamped.
//   * stdout, one line each: "synced" once the informer has synced; at the
//     EXPECT-th notification one JSON object (events, seconds, latency_samples,
//     latency_unstamped, latency_p50_us, latency_p99_us: nearest rank, as the
//     peer's), after which samples are no longer recorded.
//   * SIGUSR1 (after the JSON line): a forced relist, as the peer's --relist: the
//     heap is trimmed (malloc_trim, as the peer's debug.FreeOSMemory), VmRSS is the
//     steady figure, VmHWM is reset (/proc/self/clear_refs), the watch ends as a
//     410 would, and once the relist's pages are in and 1 s has passed, one JSON
//     line: steady_rss_bytes, relist_peak_bytes, relist_seconds.
//   * SIGTERM or SIGINT, or the bench's end (PR_SET_PDEATHSIG): stops the informer and exits 0. Exit 1 when the informer
//     cannot start.
#pragma once

namespace kinformer::bench {

/// The process's main when argv[1] is "--counting-informer".
int counting_informer_main(int argc, char** argv);

}  // namespace kinformer::bench
