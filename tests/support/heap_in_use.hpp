// tests/support/heap_in_use.hpp
//
// heap_in_use(): the bytes the process's allocator has handed out and not taken back, for
// tests that tell a leak (the heap grows) from pages an allocator keeps (only RSS grows).
//
// Contract
//   * glibc: mallinfo2's uordblks + hblkhd, which sees C allocations as well as new.
//   * Under ASan, whose allocator serves malloc and leaves mallinfo2 empty: the sanitizer's
//     own count of allocated bytes (freed blocks in its quarantine are not counted).
// Header-only, like the other small helpers here: the model tests use it without linking
// kinformer::testing.
#pragma once

#include <malloc.h>

#include <cstddef>

#include "runtime/sanitizers.hpp"

#if KINFORMER_UNDER_ASAN
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();  // the sanitizers' allocator interface
#endif

namespace kinformer::testing {

inline long heap_in_use() {
#if KINFORMER_UNDER_ASAN
  return static_cast<long>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 info = mallinfo2();
  return static_cast<long>(info.uordblks + info.hblkhd);
#endif
}

}  // namespace kinformer::testing
