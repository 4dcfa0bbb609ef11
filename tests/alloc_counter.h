// A counting global operator new for the tests that check heap use (linked into them by
// tests/CMakeLists.txt: pipebench_test(<name> alloc_counter.cpp)). Counts every C++ heap
// allocation of the whole binary (plain and aligned new; new[] and nothrow forms go through
// them) and tracks the bytes in use and their peak, measured as malloc_usable_size (bytes,
// the block glibc hands out: at least the size asked for). Allocations made with malloc
// directly (TurboJPEG, libjpeg, OpenCV's fastMalloc) are not seen. Read the counters around
// the calls under test; they are process-wide, so run nothing else at the same time.
#pragma once

#include <cstddef>

namespace pipebench::testing {

/// Calls of operator new (any form) since the process started.
long allocation_count();
/// Bytes currently allocated through operator new.
size_t allocated_bytes();
/// The largest allocated_bytes() since the last reset_peak_bytes() (or the start).
size_t peak_allocated_bytes();
/// Sets the peak to the bytes allocated now.
void reset_peak_bytes();

}  // namespace pipebench::testing
