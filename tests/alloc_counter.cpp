// tests/alloc_counter.h: the replacements of the global operator new / delete. Each pairs
// malloc (or aligned_alloc) with free itself, which GCC cannot see (hence the pragma).
#include "tests/alloc_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long> g_count{0};
std::atomic<size_t> g_bytes{0};
std::atomic<size_t> g_peak{0};

void* counted(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  g_count.fetch_add(1, std::memory_order_relaxed);
  const size_t now = g_bytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) +
                     malloc_usable_size(p);
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void released(void* p) {
  if (p == nullptr) return;
  g_bytes.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

void* aligned(std::size_t n, std::align_val_t a) {
  const size_t al = static_cast<size_t>(a);
  return std::aligned_alloc(al, (n + al - 1) / al * al);  // a multiple of the alignment
}

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) { return counted(std::malloc(n == 0 ? 1 : n)); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(aligned(n == 0 ? 1 : n, a)); }
void operator delete(void* p) noexcept { released(p); }
void operator delete(void* p, std::size_t) noexcept { released(p); }
void operator delete(void* p, std::align_val_t) noexcept { released(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { released(p); }
#pragma GCC diagnostic pop

namespace pipebench::testing {

long allocation_count() { return g_count.load(); }
size_t allocated_bytes() { return g_bytes.load(); }
size_t peak_allocated_bytes() { return g_peak.load(); }
void reset_peak_bytes() { g_peak.store(g_bytes.load()); }

}  // namespace pipebench::testing
