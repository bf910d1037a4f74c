// actors/reflector.hpp
//
// ReflectorActor: lists and watches a ListWatch source and feeds the DeltaFIFO
// actor (client-go 1.32 Reflector; informer-semantics.md §5, checklist 30–46).
//
// Contract
//   * A cycle is list → replace → watch. The first list asks for RV "0", later ones
//     for the last RV seen, and "" right after a 410 or too-large-RV answer (retried
//     at once, once per cycle). Pages: page_size if set; else limit 500 for RV "0"
//     or "" and none for a specific RV, except that once an RV "0" list came back
//     in pages every later list keeps limit 500. A 410 on page 2 or later → one
//     full list without limit at the first page's RV. The pages go to the FIFO as
//     one replace(items, list RV).
//   * Known objects: when known_object is set, each listed (or watch-list
//     streamed) object whose key, uid and non-empty resourceVersion equal those of
//     the object known_object returns is replaced by that known ObjectPtr as its
//     page arrives. Equal key and RV mean the same object version, so nothing a
//     consumer sees changes, but the page's duplicate is freed with the page: a
//     relist of an unchanged cache costs one page beside the cache, not a second
//     copy of it (client-go holds both; issue 8, relist_memory).
//   * The watch starts at the list's RV with bookmarks allowed and timeoutSeconds
//     drawn from [300, 600). Added/modified/deleted go to the FIFO as deltas
//     batches, one unanswered at a time: what arrives while one is in flight is
//     kept here, in order, and goes as one batch when the FIFO answers (a replace
//     or resync first sends what is kept, so the FIFO sees arrival order). Every
//     event, bookmarks included, advances the RV.
//   * The watch ends:
//       cleanly                → watch again from the last RV (no relist), unless it
//                                had no events and lasted under 1 s ("very short
//                                watch": back off, relist);
//       429 / refused          → back off (at least retry-after), watch again;
//       Errc::server_error     → watch again at once while within
//                                max_internal_error_retry of the first such error;
//       anything else (410 …)  → back off, relist.
//     A list failure, a FIFO failure and a resync failure also end the cycle: back
//     off, relist. Back-off is runtime/backoff.hpp's (800 ms … 30 s, jitter 1.0).
//   * watch_error_handler sees every error that ends a watch or a cycle and every
//     event skipped (malformed: Errc::decode_failed; a kind other than
//     expected_kind); not the retries a list makes by itself (RV "" after 410,
//     the full list after a page-2 410). Skipped events change nothing cached.
//   * Resync: every resync_period while the cycle's watch loop runs (re-watches
//     keep the timer, a relist restarts it), if should_resync is unset or true,
//     the FIFO is asked to resync.
//   * Back-pressure: when the FIFO's last reported depth plus the events kept
//     here is above high_water_mark the watch is paused (ListWatch Watch::pause)
//     and the reflector asks the FIFO for its depth once it is at or below half
//     the mark (depth_atom with that mark, answered as soon as the pops get it
//     there, or at shutdown); the answer resumes the watch, before the FIFO runs
//     dry. The events kept here go out as the batch in flight is answered.
//   * use_watch_list: the cycle starts with a watch-list at the last RV ("" at
//     first or after 410); its ADDED events are collected and replace()d when the
//     bookmark with initial_events_end arrives, and the same watch goes on. 410 /
//     too large → once more at ""; 429 / refused → back off, stream again; any
//     other error → the classic LIST for this cycle.
//   * It runs until it receives an exit message; quitting stops its watch at once,
//     and callbacks of older lists and watches are ignored (each step has an id).
//   * Internally the reflector is always in one step, a type that carries only
//     that step's data (kube-rs watcher's State): Listing (pages so far),
//     Streaming (a watch-list before its bookmark), Watching, Waiting (a back-off).
// Threading: callbacks in the options run in the actor's context. The ListWatch's
//   callbacks may run on any thread: they only send messages to the actor.
// Errors: reported to watch_error_handler and logged (runtime/log.hpp, component
//   "reflector", with informer and resource); the reflector never gives up.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/delta_fifo.hpp"
#include "actors/informer_metrics.hpp"
#include "runtime/backoff.hpp"
#include "runtime/list_watch.hpp"
#include "runtime/result.hpp"

namespace kinformer::actors {

/// Every setting of one Reflector (client-go's ReflectorOptions and the fields
/// its controller sets). All are optional; the defaults are client-go 1.32's. The
/// source and the FIFO are not settings: spawn_reflector() takes them, so that
/// SharedInformerOptions can embed this struct whole.
struct ReflectorOptions {
  /// 0 = never resync. Each tick asks should_resync (if set) and then the FIFO.
  std::chrono::milliseconds resync_period{0};
  std::function<bool()> should_resync;
  /// Called with every error a list/watch cycle ends with (visibility only).
  std::function<void(const Error&)> watch_error_handler;
  std::int64_t page_size = 0;  // 0 = client-go's default rules (500 / none)
  std::string label_selector;
  std::string field_selector;
  /// Stop reading the watch while the FIFO holds more keys than this; read again
  /// at half of it.
  std::size_t high_water_mark = 10000;
  /// Events whose object has another kind are skipped and reported; "" = any kind.
  std::string expected_kind;
  /// Read-only lookup of the object cached under a key (null if none), for the
  /// reuse above; called in the actor's context, so it must be safe against the
  /// cache's writer (the Indexer is). Unset = every listed object is kept as sent.
  std::function<ObjectPtr(std::string_view key)> known_object;
  /// Window for re-watching at once after Errc::server_error (client-go's
  /// MaxInternalErrorRetryDuration); 0 = off, as informers use it.
  std::chrono::milliseconds max_internal_error_retry{0};
  BackoffOptions backoff;
  /// List through a watch-list (sendInitialEvents, informer-semantics.md §5.6)
  /// instead of LIST; client-go's WatchListClient gate (off in 1.32).
  bool use_watch_list = false;
  /// Uniform in [0, 1), for back-off jitter and watch timeouts; empty = a PRNG
  /// seeded from std::random_device.
  std::function<double()> random;
  /// Lists, relists by cause, watch restarts, events by type, errors, RV age
  /// (actors/informer_metrics.hpp); null = none. Its names label the log lines.
  InformerMetricsPtr metrics;
};

/// The public handle: LastSyncResourceVersion ("" before the first list).
using ReflectorActor = caf::typed_actor<caf::replies_to<last_rv_atom>::with<std::string>>;

/// Spawns the reflector of `source` into `fifo` (both required); it starts listing at
/// once and runs until it gets an exit message (then it stops its watch promptly).
ReflectorActor spawn_reflector(caf::actor_system& system, std::shared_ptr<ListWatch> source,
                               DeltaFIFOActor fifo, ReflectorOptions options = {});

}  // namespace kinformer::actors
