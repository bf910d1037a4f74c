#include "tests/models/allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0}, allocated_bytes{0}, largest{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting) {
    ++allocations;
    allocated_bytes += static_cast<long>(n);
    if (static_cast<long>(n) > largest) largest = static_cast<long>(n);
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// Every other unaligned form too, so that each allocation is counted and freed by the
// same allocator that made it: a sanitizer (or a libstdc++) that supplies its own nothrow
// or array new would otherwise hand our free() memory it did not malloc() (Catch2 makes
// its test invokers with nothrow new; ASan reported the mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept { return ::operator new(n, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace kinformer::testing {

void start_counting_allocations() {
  allocations = 0;
  allocated_bytes = 0;
  largest = 0;
  counting = true;
}

AllocationCount stop_counting_allocations() {
  counting = false;
  return {allocations.load(), allocated_bytes.load(), largest.load()};
}

}  // namespace kinformer::testing
