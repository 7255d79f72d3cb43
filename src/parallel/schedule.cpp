#include "ascprof/parallel/schedule.hpp"

#include <algorithm>
#include <numeric>
#include <queue>

namespace ascprof::parallel {

std::vector<std::vector<size_t>> assign_largest_first(const std::vector<uint64_t>& item_bytes, int nprocs) {
  if (nprocs < 1) nprocs = 1;
  std::vector<std::vector<size_t>> out(static_cast<size_t>(nprocs));
  std::vector<size_t> order(item_bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return item_bytes[a] > item_bytes[b]; });
  // min-heap of (load, process)
  using Slot = std::pair<uint64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> heap;
  for (int p = 0; p < nprocs; ++p) heap.emplace(0, p);
  for (size_t item : order) {
    auto [load, p] = heap.top();
    heap.pop();
    out[static_cast<size_t>(p)].push_back(item);
    // +1 so zero-byte items still spread over processes
    heap.emplace(load + item_bytes[item] + 1, p);
  }
  return out;
}

}  // namespace ascprof::parallel
