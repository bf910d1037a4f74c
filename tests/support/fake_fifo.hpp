// tests/support/fake_fifo.hpp
//
// FakeFifo: a stand-in DeltaFIFOActor for producer tests (the Reflector's). It
// records every call in a FifoLog the test reads, answers producer calls with the
// depth the test sets, can fail the next resync, and answers pops with nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/delta_fifo.hpp"
#include "actors/errors.hpp"
#include "actors/messages.hpp"
#include "actors/tsan.hpp"

namespace kinformer::testing {

/// What the fake FIFO received, in order; shared between the actor and the test.
class FifoLog {
 public:
  struct Call {
    std::string what;  // "replace", "deltas", "resync" or "depth"
    actors::ListSnapshotPtr snapshot;  // replace
    actors::WatchDeltasPtr deltas;     // deltas
  };

  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  /// Calls of one kind, e.g. count("replace").
  std::size_t count(const std::string& what) const {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const auto& c : calls_) n += c.what == what ? 1 : 0;
    return n;
  }
  /// Every delta received, in order, as "added foo", "updated foo", "deleted foo".
  std::vector<std::string> deltas() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& c : calls_) {
      if (!c.deltas) continue;
      for (const auto& d : *c.deltas) {
        out.push_back(std::string(to_string(d.type)) + " " + std::string(d.object->name()));
      }
    }
    return out;
  }
  /// The names and RV of the last replace, e.g. "a b @ 7".
  std::string last_replace() const {
    std::lock_guard lock(mu_);
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it) {
      if (!it->snapshot) continue;
      std::string out;
      for (const auto& o : it->snapshot->items) out += std::string(o->name()) + " ";
      return out + "@ " + it->snapshot->resource_version;
    }
    return "";
  }
  /// How often the depth was asked for (a paused producer's polls).
  std::size_t polls() const { return count("depth"); }

  void set_depth(std::size_t depth) {
    std::lock_guard lock(mu_);
    depth_ = depth;
  }
  void fail_next_resync(Error error) {
    std::lock_guard lock(mu_);
    resync_failure_ = std::move(error);
  }

  // -- for the actor --
  std::size_t record(Call call) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(call));
    return depth_;
  }
  std::optional<Error> take_resync_failure() {
    std::lock_guard lock(mu_);
    auto out = std::move(resync_failure_);
    resync_failure_.reset();
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Call> calls_;              // guarded by mu_
  std::size_t depth_ = 0;                // guarded by mu_
  std::optional<Error> resync_failure_;  // guarded by mu_
};

inline actors::DeltaFIFOActor::behavior_type fake_fifo(actors::DeltaFIFOActor::pointer self,
                                                       std::shared_ptr<FifoLog> log) {
  return {
      // HandlerScope: ThreadSanitizer annotations, as in the real FIFO (actors/tsan.hpp)
      [=](actors::replace_atom, const actors::ListSnapshotPtr& s) {
        const actors::detail::HandlerScope handoff;
        return log->record({"replace", s, nullptr});
      },
      [=](actors::deltas_atom, const actors::WatchDeltasPtr& d) {
        const actors::detail::HandlerScope handoff;
        return log->record({"deltas", nullptr, d});
      },
      [=](actors::resync_atom) -> caf::result<std::size_t> {
        if (auto failure = log->take_resync_failure()) return actors::to_caf_error(*failure);
        return log->record({"resync", nullptr, nullptr});
      },
      [=](actors::pop_atom, std::size_t) { return actors::PoppedBatchPtr(std::make_shared<actors::PoppedBatch>()); },
      [=](actors::synced_atom) { return false; },
      [=](actors::depth_atom) { return log->record({"depth", nullptr, nullptr}); },
      [=](actors::shutdown_atom) { self->quit(); },
  };
}

}  // namespace kinformer::testing
