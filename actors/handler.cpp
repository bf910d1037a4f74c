#include "actors/handler.hpp"

#include <exception>
#include <iostream>
#include <tuple>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/every_actor.hpp"

namespace kinformer::actors {

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

namespace {

constexpr std::uint64_t logged_failures = 5;  // then only counted

void call(const NotificationFunc& func, const Notification& n, HandlerStats& stats) {
  ++stats.notifications;
  try {
    func(n);
  } catch (const std::exception& e) {
    if (stats.failures++ < logged_failures)
      std::cerr << "kinformer handler: " << n.key() << ": handler threw: " << e.what() << "\n";
  } catch (...) {
    if (stats.failures++ < logged_failures)
      std::cerr << "kinformer handler: " << n.key() << ": handler threw a non-exception\n";
  }
}

HandlerActor::behavior_type handler(HandlerActor::pointer, NotificationFunc func,
                                    std::shared_ptr<HandlerStats> stats) {
  return {
      [=](notify_atom, const RegistrationId& id, const NotificationBatchPtr& batch) {
        detail::taking_over();
        // No handing_over() here: it would order this handler's user code before
        // every other handler's next batch and hide races between handlers.
        for (const auto& n : batch->items) call(func, n, *stats);
        return std::make_tuple(handled_atom::value, id);
      },
  };
}

}  // namespace

HandlerActor spawn_handler(caf::actor_system& system, NotificationFunc func, std::shared_ptr<HandlerStats> stats) {
  if (!stats) stats = std::make_shared<HandlerStats>();
  return system.spawn(handler, std::move(func), std::move(stats));
}

}  // namespace kinformer::actors
