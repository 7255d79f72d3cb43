#include "ascprof/common/cores.hpp"

#include <sched.h>

namespace ascprof {

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  return cores > 0 ? static_cast<unsigned>(cores) : 1u;
}

}  // namespace ascprof
