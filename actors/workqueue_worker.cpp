#include "actors/workqueue_worker.hpp"

#include <exception>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include "actors/every_actor.hpp"

namespace kinformer::actors {
namespace {

/// The timer carries a generation: only the latest armed one pulls.
using WorkerImpl = WorkQueueWorkerActor::extend<caf::reacts_to<pull_atom, std::uint64_t>>;

struct WorkerState {
  using Self = WorkerImpl::stateful_pointer<WorkerState>;
  WorkQueueWorkerOptions options;
  std::uint64_t timer_gen = 0;

  void pull(Self self) {
    for (std::size_t n = 0; n < options.keys_per_turn; ++n) {
      auto key = options.queue->try_get();
      if (!key) {
        wait(self);
        return;
      }
      reconcile(*key);
    }
    self->send(self, pull_atom::value);  // yield to the mailbox, then go on
  }

  void reconcile(const std::string& key) {
    bool ok = false;
    try {
      ok = static_cast<bool>(options.reconcile(key));
    } catch (const std::exception&) {
      ok = false;  // a throwing reconcile is a failed one: retried with back-off
    } catch (...) {
      ok = false;
    }
    if (ok) {
      ++options.stats->reconciled;
      options.queue->forget(key);
    } else {
      ++options.stats->failed;
      options.queue->add_rate_limited(key);
    }
    options.queue->done(key);
  }

  void wait(Self self) {
    if (options.queue->shutting_down()) {
      self->quit();
      return;
    }
    if (auto in = options.queue->next_ready_in())
      self->delayed_send(self, std::chrono::duration_cast<std::chrono::nanoseconds>(*in), pull_atom::value,
                         ++timer_gen);
  }

  void on_timer(Self self, std::uint64_t gen) {
    if (gen == timer_gen) pull(self);
  }
};

WorkerImpl::behavior_type worker(WorkerImpl::stateful_pointer<WorkerState> self,
                                 WorkQueueWorkerOptions options) {
  self->state.options = std::move(options);
  self->set_exit_handler(ignore_graceful_exits(self));
  self->send(self, pull_atom::value);
  return {
      handed_off([=](pull_atom) { self->state.pull(self); }),
      handed_off([=](pull_atom, std::uint64_t gen) { self->state.on_timer(self, gen); }),
  };
}

}  // namespace

std::vector<WorkQueueWorkerActor> spawn_workqueue_workers(caf::actor_system& system,
                                                          WorkQueueWorkerOptions options,
                                                          std::size_t workers) {
  std::vector<WorkQueueWorkerActor> spawned;
  std::vector<caf::weak_actor_ptr> weak;
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    WorkQueueWorkerActor actor = system.spawn(worker, options);
    weak.push_back(caf::actor_cast<caf::weak_actor_ptr>(actor));
    spawned.push_back(std::move(actor));
  }
  // From any thread that adds: a quit worker is simply gone.
  options.queue->set_waker([weak] {
    for (const auto& w : weak)
      if (auto strong = w.lock()) {
        detail::handing_over();
        caf::anon_send(caf::actor_cast<WorkQueueWorkerActor>(strong), pull_atom::value);
      }
  });
  return spawned;
}

}  // namespace kinformer::actors
