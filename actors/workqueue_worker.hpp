// actors/workqueue_worker.hpp
//
// WorkQueueWorkerActor: the actor adaptor of runtime/workqueue.hpp — worker
// actors that pull keys from a WorkQueue and reconcile them, so a controller's
// handlers only add keys (informer-semantics.md §9 "Typical controller").
//
// Contract
//   * A worker takes ready keys with try_get() (never blocking its scheduler
//     thread), at most `keys_per_turn` per message, then yields to its mailbox.
//     reconcile(key) succeeding → forget(key); failing or throwing →
//     add_rate_limited(key); done(key) always.
//   * With nothing ready it waits for the queue's waker (set by
//     spawn_workqueue_workers: every add wakes every worker) or, when keys are
//     delayed, for a timer at the earliest ready time.
//   * When the queue is shut down and has nothing ready, the worker quits.
// Threading: reconcile runs in the worker actor, one key at a time per worker;
//   several workers never get the same key at once (the queue's rule).
// Errors: a failed reconcile is counted in WorkerStats and retried by the queue.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "runtime/result.hpp"
#include "runtime/workqueue.hpp"

namespace kinformer::actors {

using WorkQueueWorkerActor = caf::typed_actor<caf::reacts_to<pull_atom>>;

struct WorkerStats {
  std::atomic<std::uint64_t> reconciled{0};  // succeeded
  std::atomic<std::uint64_t> failed{0};      // failed or threw (requeued rate-limited)
};

struct WorkQueueWorkerOptions {
  std::shared_ptr<WorkQueue> queue;                               // required
  std::function<Result<void>(const std::string& key)> reconcile;  // required
  std::size_t keys_per_turn = 16;
  std::shared_ptr<WorkerStats> stats = std::make_shared<WorkerStats>();
};

/// Spawns `workers` workers on one queue and sets the queue's waker to wake them all.
std::vector<WorkQueueWorkerActor> spawn_workqueue_workers(caf::actor_system& system,
                                                          WorkQueueWorkerOptions options,
                                                          std::size_t workers = 1);

}  // namespace kinformer::actors
