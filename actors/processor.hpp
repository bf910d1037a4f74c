// actors/processor.hpp
//
// ProcessorActor: the handler registry. It routes every notification from the
// Controller through handler chains (architecture.md §4 "Processor";
// informer-semantics.md §7, checklist 47–57).
//
// Contract
//   * Routing. A registration (actors/registration.hpp) belongs to one group; a
//     group is one chain: its handlers in priority order (lower first, ties by
//     registration order). Each notification visits the group's handlers whose
//     predicate matches it, one after the other; a handler answering `stop` ends
//     the notification's route in that group. Groups are independent; a
//     registration without a group is a group of its own (client-go's broadcast).
//     Every hop sees the group's notifications in order: one its predicate does
//     not take passes by (behind what the hop is handling), so no notification
//     overtakes an earlier one; a group of one drops what its handler does not take.
//   * Order and pipelining. Each handler gets its notifications in order, one
//     batch at a time (at most one batch in its mailbox); notification k+1 may be
//     at hop 1 while k is at hop 2. The route of a notification is the group's
//     chain as it was when the notification entered the group: a handler added
//     or moved later is not visited by it, so nothing reaches a handler twice.
//   * Late registration (attach): the handler first gets the replay the
//     Controller made at that point of the stream (the cache as adds with the
//     initial-list flag), for itself only, then every later change.
//   * Unregistration (detach): the handler gets nothing new; the batch it is
//     handling is answered and honoured (its `stop`s count), then the
//     registration is gone and an owned actor is ended. In a chain, what was
//     queued for it goes on to the next hop; alone in its group, it is dropped.
//     Unknown ids are ignored (idempotent).
//   * Replacement (swap, same id): the new actor, predicate and priority apply to
//     every batch sent after the swap; a batch in flight to the old actor is
//     answered by it (then an owned old actor is ended), and the new actor gets
//     nothing before that answer — no notification is lost or delivered to both.
//     The group cannot change.
//   * Resync (items 49–51). resync_period = 0: never. Otherwise a registration's
//     period is its request raised to 1 s (0 = none), the check period is the
//     minimum of resync_period and every period, and each check (a delayed_send
//     to itself) marks the registrations whose period elapsed as due and, if one
//     is, asks the upstream for a resync. Sync notifications (is_sync(): a resync,
//     or a relist that found an object unchanged) go only to handlers currently
//     due; a registration is due from its registration. As client-go's syncing
//     flag, which only resync checks clear, every handler of an informer that
//     never resyncs counts as due: a relist's update(x, x) reaches them all
//     (informer-semantics.md §7.3). (client-go also counts a period-0 handler of
//     a resyncing informer as due until its first check; that transient is not
//     copied.)
//   * Credit and lagging groups. The Processor grants the Controller
//     max_buffered_keys at start; a batch's credit comes back once every group
//     has handled it (each of its notifications stopped or left the group's last
//     hop), so under a flood events wait in the DeltaFIFO (a key's deltas pop
//     together) rather than in every group, and no group keeping up takes the
//     coalescing path. A group that lags is cut loose so that
//     it holds back neither the cache nor the other groups: when it still holds
//     a batch lag_timeout after another group finished that batch, or
//     stall_timeout after the batch came (a lone or wholly stuck group), or when
//     more than group_window notifications are inside it. A group cut loose
//     gives back every credit it held and takes what arrives into its backlog;
//     it holds credit again once it caught up: that backlog is empty and nothing
//     is inside it (InformerStatus::groups_cut_loose counts the cuts).
//   * Slow handlers, bounded memory (item 56). A group's backlog (what arrived
//     while it was cut loose) is coalesced per key (actors/coalescing_backlog.hpp):
//       - the handler always ends up seeing the latest state of every key;
//       - it sees every delete of an object it had been told about (a delete is
//         never merged away when the group had taken in an earlier state);
//       - an add and a delete of a key both still in the backlog collapse to
//         nothing (the group never heard of that object);
//       - merged updates carry the old state the group last took in, and the
//         newest state; a resync merged into a pending change disappears in it.
//     A backlog therefore holds at most two notifications per key (a delete and
//     a newer add or update) and grows with the number of keys, never with the
//     number of events. The backlog goes into the group, up to its window, as one
//     batch.
//   * Supervision (actors/registration.hpp FailurePolicy). A failure is a
//     handler's report (failed_at: that notification failed, the positions
//     before it are handled), a batch not answered within hop_timeout, or the
//     death of the handler actor (monitored): then the whole batch failed.
//       restart: the failed notification(s) go to the dead-letter log; the actor
//         is ended and a new one made by the registration's factory after the
//         back-off (1 s doubling to 16 s by default); it gets what follows.
//       retry: after the back-off the failed notification(s) are sent again, at
//         most `retries` times, then dead-lettered; a dead actor is restarted.
//       skip: dead-lettered at once, the next batch goes out; a dead actor is
//         restarted.
//     More than max_restarts restarts within restart_window, or a restart
//     without a factory, mark the registration failed (status, log line) and
//     remove it. Other registrations and the cache are never affected.
//   * drain: once every group is empty and every handler answered, owned
//     handler actors are ended and the actor quits.
// Threading: an actor. Errors: none; unknown registrations are ignored.
// Logs (runtime/log.hpp, component "processor", with informer, resource, handler
// and key where there is one): dead letters, restarts, failures.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/informer_metrics.hpp"
#include "actors/notification.hpp"
#include "actors/registration.hpp"

namespace kinformer::actors {

/// What the Processor sends credit and resync requests to (the Controller).
using ProcessorUpstream =
    caf::typed_actor<caf::reacts_to<credit_atom, std::size_t>, caf::reacts_to<resync_atom>>;

using ProcessorActor =
    caf::typed_actor<caf::reacts_to<upstream_atom, ProcessorUpstream>,                // start granting credit
                     caf::reacts_to<notify_atom, NotificationBatchPtr, std::size_t>,  // batch, credit it used
                     caf::reacts_to<synced_atom>,                                     // upstream synced here
                     caf::reacts_to<attach_atom, RegistrationPtr, NotificationBatchPtr>,  // with its replay
                     caf::reacts_to<detach_atom, RegistrationId>,
                     caf::reacts_to<swap_atom, RegistrationPtr>,  // replace by id
                     caf::reacts_to<drain_atom>>;

struct ProcessorOptions {
  /// Popped keys the Controller may have handed on that are not yet in every group.
  std::size_t max_buffered_keys = 1024;
  /// Notifications in one batch to one handler at most.
  std::size_t max_batch = 256;
  /// Notifications inside one group (queued at a hop or in flight) at most; more
  /// cut the group loose and wait in its coalescing backlog. Keep it at least
  /// max_buffered_keys, or a group keeping up is cut loose by a full credit's batch.
  std::size_t group_window = 1024;
  /// A group still holding a batch this long after another group finished it is cut loose.
  std::chrono::milliseconds lag_timeout{20};
  /// A group still holding a batch this long after it came is cut loose, even alone.
  std::chrono::milliseconds stall_timeout{1000};
  /// The informer's resync period: 0 = never resync (informer-semantics.md §7.4).
  std::chrono::milliseconds resync_period{0};
  std::shared_ptr<InformerStatus> status = std::make_shared<InformerStatus>();
  /// Per handler: deliveries, batch latency, failures, restarts, dead letters; per
  /// group: coalesced, backlog (actors/informer_metrics.hpp); null = none.
  InformerMetricsPtr metrics;
};

ProcessorActor spawn_processor(caf::actor_system& system, ProcessorOptions options);

}  // namespace kinformer::actors
