// actors/every_actor.hpp
//
// What every kinformer actor's behaviour needs, written once so that a behaviour
// reads one message per line (style.md §5; CAF's examples/message_passing/cell.cpp):
//
//   self->set_exit_handler(ignore_graceful_exits(self));
//   return {
//       handed_off([=](pop_atom, std::size_t n) { return self->state.pop(self, n); }),
//       ...
//   };
//
// Contract
//   * handed_off(f) runs f inside a detail::HandlerScope (actors/tsan.hpp): the
//     handler takes over what earlier senders handed over and hands over what it
//     wrote when it returns. f keeps its exact signature (CAF's typed behaviours
//     match on it) and its result. A mutable f (one that moves out of its
//     captures, a response promise) stays mutable. Every message handler,
//     response handler, down and exit handler of an actor goes through it, so no
//     actor writes the hand-off by hand.
//   * send_over(self, dst, xs...) hands over, then sends: for sends made while a
//     handler still runs (the receiver may start before the handler returns).
//   * declare_brief(self), first in a behaviour function: the actor's type is brief for
//     the scheduler (actors/job_queue.hpp): each of its handlers returns within
//     microseconds, and user code it calls that may block runs in a JobQueue::MayBlock
//     scope. Jobs it leaves queued then stay with its worker, with no alarm or wake-up.
//     Only the informer's own actors declare it; user code they call without that scope
//     (predicates, transforms, index functions) must not block.
//   * ignore_graceful_exits(self) is the exit handler of actors linked to peers
//     that stop on purpose: user_shutdown and normal are ignored (stop() drains
//     instead), any other reason ends the actor with that reason.
// Threading: the returned functions run in their actor's context. Errors: none.
#pragma once

#include <typeinfo>
#include <utility>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/job_queue.hpp"
#include "actors/tsan.hpp"

namespace kinformer::actors {

namespace detail {

template <class F, class R, class... Args>
auto handed_off_impl(F f, R (F::*)(Args...) const) {
  return [f = std::move(f)](Args... xs) -> R {
    const HandlerScope handoff;
    return f(std::forward<Args>(xs)...);
  };
}

template <class F, class R, class... Args>
auto handed_off_impl(F f, R (F::*)(Args...)) {
  return [f = std::move(f)](Args... xs) mutable -> R {
    const HandlerScope handoff;
    return f(std::forward<Args>(xs)...);
  };
}

}  // namespace detail

/// `f` (a non-generic lambda, mutable or not) wrapped in the TSAN hand-off scope.
template <class F>
auto handed_off(F f) {
  return detail::handed_off_impl(std::move(f), &F::operator());
}

/// Hands over, then sends (see the contract).
template <class Self, class Dest, class... Ts>
void send_over(Self* self, const Dest& dest, Ts&&... xs) {
  detail::handing_over();
  self->send(dest, std::forward<Ts>(xs)...);
}

/// Declares `self`'s dynamic type brief (see the contract).
template <class Self>
void declare_brief(Self* self) {
  JobQueue::declare_brief_type(typeid(*self));
}

/// The exit handler that ignores peers stopping on purpose (see the contract).
template <class Self>
auto ignore_graceful_exits(Self* self) {
  return [self](caf::exit_msg& msg) {
    if (msg.reason != caf::exit_reason::user_shutdown && msg.reason != caf::exit_reason::normal)
      self->quit(msg.reason);
  };
}

}  // namespace kinformer::actors
