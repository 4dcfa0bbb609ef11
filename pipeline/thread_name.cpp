#include "pipeline/thread_name.h"

#include <dirent.h>
#include <pthread.h>

#include <fstream>
#include <string>

namespace pipebench {

void name_thread(std::thread& thread, std::string_view what) noexcept {
  if (!thread.joinable()) return;
  char name[16] = {};
  const size_t prefix = kThreadNamePrefix.copy(name, 15);
  what.copy(name + prefix, 15 - prefix);
#if defined(__linux__)
  pthread_setname_np(thread.native_handle(), name);
#endif
}

int named_thread_count() noexcept {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind(kThreadNamePrefix, 0) == 0) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace pipebench
