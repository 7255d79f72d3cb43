#pragma once
/// Static work assignment: largest input first onto the least-loaded process (LPT), so one huge
/// rank starts immediately and the small ones fill in around it. Deterministic for given sizes.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ascprof::parallel {

/// Returns, for each process 0..nprocs-1, the indices of the items it runs (largest first).
/// Ties between equal sizes keep item order; ties between equally loaded processes take the
/// lowest process number. Works for any nprocs >= 1 and any number of items (also 0).
std::vector<std::vector<size_t>> assign_largest_first(const std::vector<uint64_t>& item_bytes, int nprocs);

}  // namespace ascprof::parallel
