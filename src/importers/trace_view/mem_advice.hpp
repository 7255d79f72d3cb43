#pragma once
/// Kernel memory hints that cut page-fault cost on large imports (page faults dominate system time on
/// virtualised hosts). All hints are best effort: failures are ignored and never change results.
#include <cstddef>
#include <vector>

namespace ascprof::importers::tv {

/// Asks for transparent huge pages on the 2 MiB-aligned interior of [p, p + bytes) (anonymous memory).
void advise_huge_pages(const void* p, size_t bytes);

/// Maps the file pages of [p, p + bytes) in one call (MADV_POPULATE_READ) instead of one fault per page.
void populate_read(const void* p, size_t bytes);

/// reserve() then advise_huge_pages() on the whole capacity, for each vector.
template <typename... Vecs>
void reserve_huge(size_t n, Vecs&... vecs) {
  ((vecs.reserve(n), advise_huge_pages(vecs.data(), vecs.capacity() * sizeof(*vecs.data()))), ...);
}

}  // namespace ascprof::importers::tv
