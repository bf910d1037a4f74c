// actors/tsan.hpp
//
// Hand-off annotations for ThreadSanitizer. Debian's libcaf_core is not built
// with -fsanitize=thread, so TSAN cannot see that a message (its storage and its
// payload), written by the sender, is read by the receiver only after the
// mailbox handed it over. The informer's actors call handing_over() right before
// they send and taking_over() first thing when they receive. One token serves
// every hand-off: it orders each annotated send before each later annotated
// receive, which is more than the mailboxes promise, but never orders what an
// actor does after sending, so races between handlers are still reported.
// Both compile to nothing unless the build uses -fsanitize=thread
// (KINFORMER_TSAN; scripts/test with CI=true).
// Threading: any thread. Errors: none.
#pragma once

#include "runtime/sanitizers.hpp"

#if KINFORMER_UNDER_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace kinformer::actors::detail {

#if KINFORMER_UNDER_TSAN
inline char handoff_token;
#endif

/// What this thread wrote so far happens before the next taking_over().
inline void handing_over() noexcept {
#if KINFORMER_UNDER_TSAN
  __tsan_release(&handoff_token);
#endif
}

/// What was written before earlier handing_over() calls happens before what follows.
inline void taking_over() noexcept {
#if KINFORMER_UNDER_TSAN
  __tsan_acquire(&handoff_token);
#endif
}

/// The same for one heap block that travels in a message (a string's or a vector's
/// buffer, whose address moves with it), without the shared token: what this thread
/// wrote so far happens before what the thread calling taking_over(block) does next, and
/// nothing else is ordered. For replies whose sender must not be ordered before every
/// other actor's next message (the handlers' reports, actors/handler.cpp). Null: nothing.
inline void handing_over(const void* block) noexcept {
#if KINFORMER_UNDER_TSAN
  if (block) __tsan_release(const_cast<void*>(block));
#else
  (void)block;
#endif
}

/// The receiving end of handing_over(block).
inline void taking_over(const void* block) noexcept {
#if KINFORMER_UNDER_TSAN
  if (block) __tsan_acquire(const_cast<void*>(block));
#else
  (void)block;
#endif
}

/// Both ends of a handler: taking_over() now and handing_over() when it returns.
/// CAF moves an actor between worker threads through atomics TSAN cannot see; this
/// orders the actor's own state from one handler to the next, wherever they run.
class HandlerScope {
 public:
  HandlerScope() noexcept { taking_over(); }
  ~HandlerScope() { handing_over(); }
  HandlerScope(const HandlerScope&) = delete;
  HandlerScope& operator=(const HandlerScope&) = delete;
};

}  // namespace kinformer::actors::detail
