// actors/atoms.hpp
//
// Every atom of kinformer's actors, and only here (style.md §5 "Messages and
// atoms"). An atom is a verb; its text is the alias minus "_atom" (at most 10
// characters, [a-z_]). CAF's own names (add, close, delete, get, put, reset, tick,
// timeout, flush, ok, ...: caf/type_id.hpp) are never reused: the text is the
// identity, so a clash would make two message types one.
#pragma once

#include <caf/atom.hpp>

namespace kinformer::actors {

// DeltaFIFO actor
using replace_atom = caf::atom_constant<caf::atom("replace")>;    // a full list
using deltas_atom = caf::atom_constant<caf::atom("deltas")>;      // watch events
using resync_atom = caf::atom_constant<caf::atom("resync")>;      // periodic resync
using pop_atom = caf::atom_constant<caf::atom("pop")>;            // pull up to n keys
using synced_atom = caf::atom_constant<caf::atom("synced")>;      // has_synced()?
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;  // close and drain
using depth_atom = caf::atom_constant<caf::atom("depth")>;        // queue depth, no side effect

// Reflector: the public query, then what it sends itself (callbacks turned into
// messages, timers); each private message carries a generation.
using last_rv_atom = caf::atom_constant<caf::atom("last_rv")>;        // LastSyncResourceVersion
using listed_atom = caf::atom_constant<caf::atom("listed")>;          // a list page answered
using observe_atom = caf::atom_constant<caf::atom("observe")>;        // watch events arrived
using closed_atom = caf::atom_constant<caf::atom("closed")>;          // the watch ended
using retry_atom = caf::atom_constant<caf::atom("retry")>;            // a back-off wait is over
using resync_due_atom = caf::atom_constant<caf::atom("resync_due")>;  // the resync period passed

}  // namespace kinformer::actors

namespace kinformer::actors {

// Controller, Processor and handler actors (informer work)
using credit_atom = caf::atom_constant<caf::atom("credit")>;      // downstream grants n keys
using upstream_atom = caf::atom_constant<caf::atom("upstream")>;  // who to grant credit to
using notify_atom = caf::atom_constant<caf::atom("notify")>;      // a notification batch
using handled_atom = caf::atom_constant<caf::atom("handled")>;    // a handler finished a batch
using attach_atom = caf::atom_constant<caf::atom("attach")>;      // register a handler
using detach_atom = caf::atom_constant<caf::atom("detach")>;      // remove a registration
using drain_atom = caf::atom_constant<caf::atom("drain")>;        // finish delivering, then quit
using swap_atom = caf::atom_constant<caf::atom("swap")>;          // replace a registration by id
using check_atom = caf::atom_constant<caf::atom("check")>;        // Processor: a resync check is due
using revive_atom = caf::atom_constant<caf::atom("revive")>;      // Processor: a handler's back-off is over
using lag_atom = caf::atom_constant<caf::atom("lag")>;            // Processor: a group may be holding others back
using pull_atom = caf::atom_constant<caf::atom("pull")>;          // work queue worker: keys may be ready

}  // namespace kinformer::actors

namespace kinformer::actors {

// Inference actor: the public requests, then what it and its backend worker exchange.
using forecast_atom = caf::atom_constant<caf::atom("forecast")>;    // one window -> its forecast
using metrics_atom = caf::atom_constant<caf::atom("metrics")>;      // read the actor's metrics
using batch_due_atom = caf::atom_constant<caf::atom("batch_due")>;  // a max-delay timer ran out
using run_batch_atom = caf::atom_constant<caf::atom("run_batch")>;  // the worker runs one batch

}  // namespace kinformer::actors
