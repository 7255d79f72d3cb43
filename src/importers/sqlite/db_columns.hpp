#pragma once
// Private to the database importer: putting columnar tables in time order, and the interrupt check
// of long table scans.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "ascprof/common/interrupt.hpp"

namespace ascprof::importers::db {

/// Rows between two checks of a SIGTERM/SIGINT in a table scan (a check is one atomic load).
inline constexpr uint64_t kInterruptCheckRows = 65536;

/// Reorders every column by `key` ascending (stable: equal keys keep their read order). Nothing
/// moves when the rows are in order already, as they are in torch_npu's exports.
template <class... Cols>
void sort_columns_by(std::vector<int64_t>& key, Cols&... cols) {
  if (std::is_sorted(key.begin(), key.end())) return;
  std::vector<size_t> order(key.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&key](size_t a, size_t b) { return key[a] < key[b]; });
  auto apply = [&order](auto& col) {
    using Col = std::decay_t<decltype(col)>;
    Col sorted;
    sorted.reserve(col.size());
    for (const size_t i : order) sorted.push_back(col[i]);
    col = std::move(sorted);
  };
  apply(key);
  (apply(cols), ...);
}

}  // namespace ascprof::importers::db
