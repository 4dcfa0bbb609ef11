// Names for the threads pipebench starts itself, so that a user sees them in top -H, perf,
// gdb and /proc/<pid>/task/*/comm, and a test can tell them from the scheduler's pool.
//
// Every name starts with kThreadNamePrefix ("pb-") and is at most 15 characters (Linux's
// limit for a thread's comm, TASK_COMM_LEN 16 with the terminating NUL; longer names are
// cut). oneTBB's worker threads are not ours and keep the process's name.
#pragma once

#include <string_view>
#include <thread>

namespace pipebench {

inline constexpr std::string_view kThreadNamePrefix = "pb-";

// Names `thread` ("pb-" + `what`, cut to 15 characters) from the thread that started it, so
// the name is set when the call returns. Never throws; where the platform cannot name
// threads, or `thread` is not running, it does nothing.
void name_thread(std::thread& thread, std::string_view what) noexcept;

// How many threads of this process carry a name set by name_this_thread (read from
// /proc/self/task/*/comm; 0 where /proc is absent).
int named_thread_count() noexcept;

}  // namespace pipebench
