#pragma once
// One column from a field (member pointer or function) of every row: how the store writers turn a
// vector of row structs into TableWriter columns. Private to the pipeline module.
#include <functional>
#include <type_traits>
#include <vector>

namespace ascprof::pipeline {

template <class Row, class Field>
auto pluck(const std::vector<Row>& rows, Field field) {
  std::vector<std::decay_t<std::invoke_result_t<Field, const Row&>>> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(std::invoke(field, r));
  return out;
}

}  // namespace ascprof::pipeline
