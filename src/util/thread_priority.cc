#include "util/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace pail {

bool SetThreadNice(int nice) {
  // On Linux the nice value belongs to the thread named by its tid.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  return setpriority(PRIO_PROCESS, tid, nice) == 0;
}

}  // namespace pail
