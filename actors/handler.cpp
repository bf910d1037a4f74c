#include "actors/handler.hpp"

#include <exception>
#include <tuple>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/every_actor.hpp"
#include "actors/job_queue.hpp"
#include "actors/tsan.hpp"

namespace kinformer::actors {

Verdict Handler::on_add(const ObjectPtr&, bool) { return Verdict::next; }
Verdict Handler::on_update(const ObjectPtr&, const ObjectPtr&) { return Verdict::next; }
Verdict Handler::on_delete(const DeletedObject&) { return Verdict::next; }

NotificationFunc dispatch_to(HandlerFuncs funcs) {
  return [funcs = std::move(funcs)](const Notification& n) {
    switch (n.type) {
      case NotificationType::added:
        if (funcs.on_add) funcs.on_add(n.object, n.is_in_initial_list);
        break;
      case NotificationType::updated:
        if (funcs.on_update) funcs.on_update(n.old_object, n.object);
        break;
      case NotificationType::deleted:
        if (funcs.on_delete) funcs.on_delete(DeletedObject{n.object, n.tombstone});
        break;
    }
  };
}

HopFunc dispatch_to(ChainFuncs funcs) {
  return [funcs = std::move(funcs)](const Notification& n) {
    switch (n.type) {
      case NotificationType::added:
        return funcs.on_add ? funcs.on_add(n.object, n.is_in_initial_list) : Verdict::next;
      case NotificationType::updated:
        return funcs.on_update ? funcs.on_update(n.old_object, n.object) : Verdict::next;
      case NotificationType::deleted:
        return funcs.on_delete ? funcs.on_delete(DeletedObject{n.object, n.tombstone}) : Verdict::next;
    }
    return Verdict::next;
  };
}

HopFunc dispatch_to(std::shared_ptr<Handler> handler) {
  return [handler = std::move(handler)](const Notification& n) {
    switch (n.type) {
      case NotificationType::added:
        return handler->on_add(n.object, n.is_in_initial_list);
      case NotificationType::updated:
        return handler->on_update(n.old_object, n.object);
      case NotificationType::deleted:
        return handler->on_delete(DeletedObject{n.object, n.tombstone});
    }
    return Verdict::next;
  };
}

HopFunc always_next(NotificationFunc func) {
  return [func = std::move(func)](const Notification& n) {
    func(n);
    return Verdict::next;
  };
}

namespace {

/// Runs `func` over the batch; stops at the first exception and reports it.
HopReport handle_batch(const HopFunc& func, const NotificationBatch& batch, HandlerStats& stats) {
  HopReport report;
  for (std::uint32_t i = 0; i < batch.items.size(); ++i) {
    ++stats.notifications;
    try {
      if (func(batch.items[i]) == Verdict::stop) report.stopped.push_back(i);
    } catch (const std::exception& e) {
      ++stats.failures;
      report.failed_at = i;
      report.failure = std::string(batch.items[i].key()) + ": handler threw: " + e.what();
      break;
    } catch (...) {
      ++stats.failures;
      report.failed_at = i;
      report.failure = std::string(batch.items[i].key()) + ": handler threw a non-exception";
      break;
    }
  }
  return report;
}

// Empty: it gives this handler actor a type of its own, so that declaring it brief
// (every_actor.hpp) leaves a user's function-based HandlerActor out.
struct FunctionHandlerState {};

HandlerActor::behavior_type handler(HandlerActor::stateful_pointer<FunctionHandlerState> self, HopFunc func,
                                    std::shared_ptr<HandlerStats> stats) {
  declare_brief(self);
  return {
      [=](notify_atom, const RegistrationId& id, const NotificationBatchPtr& batch) {
        detail::taking_over();
        // No handing_over() here: it would order this handler's user code before
        // every other handler's next batch and hide races between handlers. Only the
        // report's own heap blocks are handed over, to the processor that reads them
        // (ProcessorState::answered); TSAN saw the failure text race without this.
        HopReport report;
        {
          const JobQueue::MayBlock user_code;
          report = handle_batch(func, *batch, *stats);
        }
        detail::handing_over(report.failure.data());
        detail::handing_over(report.stopped.data());
        return std::make_tuple(handled_atom::value, id, std::move(report));
      },
  };
}

}  // namespace

HandlerActor spawn_handler(caf::actor_system& system, HopFunc func, std::shared_ptr<HandlerStats> stats) {
  if (!stats) stats = std::make_shared<HandlerStats>();
  return system.spawn(handler, std::move(func), std::move(stats));
}

HandlerActor spawn_handler(caf::actor_system& system, NotificationFunc func,
                           std::shared_ptr<HandlerStats> stats) {
  return spawn_handler(system, always_next(std::move(func)), std::move(stats));
}

}  // namespace kinformer::actors
