// The threads pipebench starts itself (the loader's graph thread, the callbacks' thread,
// the system sampler's): counted while they run, so that a test can tell them from
// oneTBB's shared pool (whose workers come and go as the scheduler likes), and named where
// a name cannot spread, so that a user sees them in top -H, perf and gdb.
//
// Names start with kThreadNamePrefix ("pb-") and are at most 15 characters (Linux's limit
// for a thread's comm, TASK_COMM_LEN 16 with the NUL; longer names are cut). The loader's
// graph thread is not named: a thread created on Linux inherits its creator's name, and
// oneTBB starts its workers from whichever thread asks for them, so they would all read
// "pb-loader".
#pragma once

#include <string_view>
#include <thread>
#include <utility>

namespace pipebench {

inline constexpr std::string_view kThreadNamePrefix = "pb-";

// Names `thread` ("pb-" + `what`, cut to 15 characters) from the thread that started it.
// Never throws; where the platform cannot name threads, or `thread` is not running, it
// does nothing.
void name_thread(std::thread& thread, std::string_view what) noexcept;

// How many threads started by start_own_thread are running: counted from before
// start_own_thread returns until their body has returned (so after a join, never).
int own_thread_count() noexcept;

namespace detail {
void own_thread_enter() noexcept;
void own_thread_exit() noexcept;
}  // namespace detail

// Starts `body` on a new thread that pipebench owns (own_thread_count), named "pb-" +
// `name` unless `name` is empty. Throws what std::thread's constructor throws
// (std::system_error), the count left as it was.
template <class F>
std::thread start_own_thread(std::string_view name, F&& body) {
  detail::own_thread_enter();
  try {
    std::thread t([b = std::forward<F>(body)]() mutable {
      struct Exit {
        ~Exit() { detail::own_thread_exit(); }
      } exit;
      b();
    });
    if (!name.empty()) name_thread(t, name);
    return t;
  } catch (...) {
    detail::own_thread_exit();
    throw;
  }
}

}  // namespace pipebench
