// tests/support/handler_drained.hpp
//
// handler_drained(sys, handler): the positive signal a "nothing more arrived at this
// handler" check waits on. It sends the handler actor an empty batch and waits for
// its answer: a mailbox is first in, first out, so every batch sent to it before
// the call has been handled by then. It fails the test, saying so, when the
// handler does not answer within the deadline.
#pragma once

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <catch2/catch.hpp>

#include "actors/notification.hpp"

namespace kinformer::testing {

/// True once `handler` handled everything sent to it before this call (see above).
inline bool handler_drained(caf::actor_system& sys, const actors::HandlerActor& handler,
                            std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  caf::scoped_actor self{sys};
  bool answered = false;
  self->request(handler, deadline, actors::notify_atom::value, actors::RegistrationId{0},
                actors::NotificationBatchPtr(std::make_shared<actors::NotificationBatch>()))
      .receive([&](actors::handled_atom, actors::RegistrationId, const actors::HopReport&) { answered = true; },
               [&](const caf::error& err) {
                 FAIL_CHECK("the handler did not answer an empty batch: " << sys.render(err));
               });
  return answered;
}

}  // namespace kinformer::testing
