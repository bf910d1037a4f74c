#include "tests/models/allocation_counter.hpp"

#include <malloc.h>

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

long heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<long>(m.uordblks + m.hblkhd);
}

}  // namespace kinformer::testing
