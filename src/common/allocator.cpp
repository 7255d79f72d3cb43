#include "ascprof/common/allocator.hpp"

#include <cstdlib>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ascprof {

void keep_freed_heap_for_reuse() {
#if defined(__GLIBC__)
  // Grow and keep the heap in 64 MiB steps; give memory back only above 256 MiB of free top.
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

void return_freed_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace ascprof
