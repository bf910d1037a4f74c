// tests/support/fake_fifo.hpp
//
// FakeFifo: a stand-in DeltaFIFOActor for producer tests (the Reflector's). It
// records every call in a FifoLog the test reads, answers producer calls with the
// depth the test sets, can fail the next resync, can hold its answers to deltas
// until the test releases them (a busy FIFO), and answers pops with nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <caf/send.hpp>
#include <caf/actor_cast.hpp>

#include "actors/delta_fifo.hpp"
#include "actors/errors.hpp"
#include "actors/every_actor.hpp"
#include "actors/messages.hpp"

namespace kinformer::testing {

using answer_atom = caf::atom_constant<caf::atom("fkanswer")>;  // deliver the answers made ready
/// The fake's own handle; it converts to DeltaFIFOActor.
using FakeFifoActor = actors::DeltaFIFOActor::extend<caf::reacts_to<answer_atom>>;

/// What the fake FIFO received, in order; shared between the actor and the test.
class FifoLog {
 public:
  struct Call {
    std::string what;  // "replace", "deltas", "resync" or "depth"
    actors::ListSnapshotPtr snapshot;  // replace
    actors::DeltasPtr deltas;     // deltas
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
  std::size_t depth() const {
    std::lock_guard lock(mu_);
    return depth_;
  }
  /// How often the depth was asked for (a paused producer's requests).
  std::size_t polls() const { return count("depth"); }

  /// Also answers the depth(mark) requests whose mark `depth` reaches.
  void set_depth(std::size_t depth) {
    std::vector<caf::typed_response_promise<std::size_t>> ready;
    {
      std::lock_guard lock(mu_);
      depth_ = depth;
      for (auto it = low_water_.begin(); it != low_water_.end();) {
        if (depth <= it->second) {
          ready.push_back(std::move(it->first));
          it = low_water_.erase(it);
        } else {
          ++it;
        }
      }
    }
    answer_later(std::move(ready), depth);
  }
  void fail_next_resync(Error error) {
    std::lock_guard lock(mu_);
    resync_failure_ = std::move(error);
  }
  /// While held, deltas are recorded but not answered; release() answers them all
  /// (with the depth set now) and stops holding.
  void hold_deltas() {
    std::lock_guard lock(mu_);
    holding_ = true;
  }
  void release() {
    std::vector<caf::typed_response_promise<std::size_t>> held;
    std::size_t depth = 0;
    {
      std::lock_guard lock(mu_);
      holding_ = false;
      held.swap(held_);
      depth = depth_;
    }
    answer_later(std::move(held), depth);
  }
  /// Deltas calls not answered yet.
  std::size_t unanswered() const {
    std::lock_guard lock(mu_);
    return held_.size();
  }

  // -- for the actor --
  /// The answers set_depth() and release() made ready; a promise is delivered only
  /// inside its actor (CAF 0.17 sends with the actor's execution unit).
  std::vector<std::pair<caf::typed_response_promise<std::size_t>, std::size_t>> take_ready() {
    std::lock_guard lock(mu_);
    auto out = std::move(ready_);
    ready_.clear();
    return out;
  }
  void attach(caf::actor fifo) {
    std::lock_guard lock(mu_);
    fifo_ = std::move(fifo);
  }
  std::size_t record(Call call) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(call));
    return depth_;
  }
  bool holding() const {
    std::lock_guard lock(mu_);
    return holding_;
  }
  /// Records a deltas call whose answer is held until release().
  void hold(actors::DeltasPtr deltas, caf::typed_response_promise<std::size_t> promise) {
    std::lock_guard lock(mu_);
    calls_.push_back({"deltas", nullptr, std::move(deltas)});
    held_.push_back(std::move(promise));
  }
  /// Records a depth(mark) request; false if the depth is above the mark (then the
  /// promise made by `park` waits for set_depth()).
  template <class MakePromise>
  bool wait_depth(std::size_t mark, MakePromise park) {
    std::lock_guard lock(mu_);
    calls_.push_back({"depth", nullptr, nullptr});
    if (depth_ <= mark) return true;
    low_water_.emplace_back(park(), mark);
    return false;
  }
  void answer_later(std::vector<caf::typed_response_promise<std::size_t>> promises, std::size_t depth) {
    if (promises.empty()) return;
    caf::actor fifo;
    {
      std::lock_guard lock(mu_);
      for (auto& promise : promises) ready_.emplace_back(std::move(promise), depth);
      fifo = fifo_;
    }
    caf::anon_send(caf::actor_cast<FakeFifoActor>(fifo), answer_atom::value);
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
  std::vector<std::pair<caf::typed_response_promise<std::size_t>, std::size_t>> ready_;  // guarded by mu_
  caf::actor fifo_;                                                                     // guarded by mu_
  bool holding_ = false;                 // guarded by mu_
  std::vector<caf::typed_response_promise<std::size_t>> held_;  // guarded by mu_
  std::vector<std::pair<caf::typed_response_promise<std::size_t>, std::size_t>> low_water_;  // guarded by mu_
};

inline FakeFifoActor::behavior_type fake_fifo(FakeFifoActor::pointer self, std::shared_ptr<FifoLog> log) {
  log->attach(caf::actor_cast<caf::actor>(self));
  return {
      [=](answer_atom) {
        for (auto& [promise, depth] : log->take_ready()) promise.deliver(depth);
      },
      // handed_off: ThreadSanitizer annotations, as in the real FIFO (actors/every_actor.hpp)
      actors::handed_off(
          [=](actors::replace_atom, const actors::ListSnapshotPtr& s) { return log->record({"replace", s, nullptr}); }),
      actors::handed_off([=](actors::deltas_atom, const actors::DeltasPtr& d) -> caf::result<std::size_t> {
        if (!log->holding()) return log->record({"deltas", nullptr, d});
        // a promise marks the request answered, so it is made only when the answer waits
        auto promise = self->make_response_promise<std::size_t>();
        log->hold(d, promise);
        return promise;
      }),
      [=](actors::resync_atom) -> caf::result<std::size_t> {
        if (auto failure = log->take_resync_failure()) return actors::to_caf_error(*failure);
        return log->record({"resync", nullptr, nullptr});
      },
      [=](actors::pop_atom, std::size_t) { return actors::PoppedBatchPtr(std::make_shared<actors::PoppedBatch>()); },
      [=](actors::synced_atom) { return false; },
      [=](actors::depth_atom) { return log->record({"depth", nullptr, nullptr}); },
      [=](actors::depth_atom, std::size_t mark) -> caf::result<std::size_t> {
        caf::typed_response_promise<std::size_t> parked;
        if (log->wait_depth(mark, [&] { return parked = self->make_response_promise<std::size_t>(); }))
          return log->depth();
        return parked;
      },
      [=](actors::shutdown_atom) { self->quit(); },
  };
}

}  // namespace kinformer::testing
