#include "mem_advice.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace ascprof::importers::tv {

namespace {
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
constexpr uintptr_t kPage = 4096;
}  // namespace

void advise_huge_pages(const void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t hi = (begin + bytes) & ~(kHugePage - 1);
  if (p == nullptr || hi <= lo) return;
  (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void populate_read(const void* p, size_t bytes) {
#ifdef MADV_POPULATE_READ
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = begin & ~(kPage - 1);
  if (p == nullptr || bytes == 0) return;
  (void)madvise(reinterpret_cast<void*>(lo), begin + bytes - lo, MADV_POPULATE_READ);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace ascprof::importers::tv
