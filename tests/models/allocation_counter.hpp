// tests/models/allocation_counter.hpp
//
// Counts heap allocations made through operator new (any thread) between
// start_counting_allocations() and stop_counting_allocations(), for the backends'
// "no allocation per call after warm-up" tests. The replacement operator new lives
// in allocation_counter.cpp, once per test binary.
#pragma once

namespace kinformer::testing {

struct AllocationCount {
  long calls = 0;
  long bytes = 0;
  long largest = 0;
};

void start_counting_allocations();
AllocationCount stop_counting_allocations();

}  // namespace kinformer::testing
