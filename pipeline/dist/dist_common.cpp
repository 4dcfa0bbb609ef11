// What dist.h's two implementations share.
#include <unistd.h>

#include <climits>

#include "pipeline/dist/dist.h"

namespace pipebench::dist {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name) != 0) return "unknown";
  name[HOST_NAME_MAX] = '\0';
  return name;
}

}  // namespace pipebench::dist
