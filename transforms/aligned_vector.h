// A std::vector whose storage starts on a 64-byte cache line: for rows and tables that
// kernels read or write 64 bytes at a time (an aligned block never straddles two lines,
// which cost up to 20 % by malloc's luck), and for buffers whose timing is compared (the
// resampler's streaming stores cover whole aligned 64-byte runs, so two buffers at
// different offsets from a line do different work). Allocation errors: std::bad_alloc.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace pipebench {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace pipebench
