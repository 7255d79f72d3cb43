#include "ascprof/report/moe_tables.hpp"

#include <algorithm>
#include <cmath>

namespace ascprof::report {

namespace {

// `rows` by `key` descending, a missing number last, ties in file order.
template <class Key>
void sort_descending(std::vector<size_t>& rows, Key key) {
  auto k = [&key](size_t i) {
    const double v = key(i);
    return std::isnan(v) ? -HUGE_VAL : v;
  };
  std::stable_sort(rows.begin(), rows.end(), [&k](size_t a, size_t b) { return k(a) > k(b); });
}

}  // namespace

std::vector<size_t> moe_phase_rows(const TextTable& compare, bool with_containers) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < compare.rows.size(); ++i)
    if (compare.cell(i, "index").empty() && (with_containers || compare.cell(i, "role") != "container")) rows.push_back(i);
  sort_descending(rows, [&compare](size_t i) { return compare.number(i, "union_us_median"); });
  return rows;
}

std::vector<size_t> moe_worst_core_rows(const TextTable& phases, size_t cap) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < phases.rows.size(); ++i)
    if (phases.cell(i, "role") != "container" && phases.number(i, "cores") >= 2) rows.push_back(i);
  sort_descending(rows, [&phases](size_t i) { return phases.number(i, "max_core_us") - phases.number(i, "median_core_us"); });
  if (rows.size() > cap) rows.resize(cap);
  return rows;
}

}  // namespace ascprof::report
