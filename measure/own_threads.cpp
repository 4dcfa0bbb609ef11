#include "measure/own_threads.h"

#include <pthread.h>

#include <atomic>

namespace pipebench {
namespace {
std::atomic<int> g_own_threads{0};
}  // namespace

void name_thread(std::thread& thread, std::string_view what) noexcept {
  if (!thread.joinable()) return;
  char name[16] = {};
  const size_t prefix = kThreadNamePrefix.copy(name, 15);
  what.copy(name + prefix, 15 - prefix);
#if defined(__linux__)
  pthread_setname_np(thread.native_handle(), name);
#endif
}

int own_thread_count() noexcept { return g_own_threads.load(std::memory_order_acquire); }

namespace detail {
void own_thread_enter() noexcept { g_own_threads.fetch_add(1, std::memory_order_acq_rel); }
void own_thread_exit() noexcept { g_own_threads.fetch_sub(1, std::memory_order_acq_rel); }
}  // namespace detail

}  // namespace pipebench
