#pragma once
/// Columnar model tables (a struct of equal-length vectors, e.g. model::HostOpTable) declared once
/// like row tables (row_table.hpp), by one function in namespace ascprof::schema:
///   template <class V> void describe_columns(model::StepMarkerTable& t, V& v) {
///     v("step", t.step);
///     v("start_ns", t.start_ns);
///     ...
///   }
/// v(name, column) for a numeric vector, v.ids(name, column) for a StrId vector into /strings.
/// write_columns() writes them as one compound table without copying the columns (a GB-class
/// rank's kernel table would otherwise be its largest transient).
#include <string_view>
#include <vector>

#include "ascprof/store/h5_writer.hpp"

namespace ascprof::schema {

/// describe_columns() visitor of write_columns: hands each column to the table writer.
struct ColumnWriter {
  store::TableWriter& table;

  template <class T>
  void operator()(std::string_view name, const std::vector<T>& column) {
    table.column(name, column);
  }
  void ids(std::string_view name, const std::vector<StrId>& column) { table.id_column(name, column); }
};

/// Writes `rows` rows of the columnar `parts` (each with a describe_columns(), their columns in
/// order) as the one table at `path`.
template <class... Parts>
Status write_columns(store::H5Writer& w, std::string_view path, uint64_t rows, const Parts&... parts) {
  store::TableWriter t(w, path, rows, store::TableWriter::Values::kBorrow);
  ColumnWriter writer{t};
  (describe_columns(const_cast<Parts&>(parts), writer), ...);  // ColumnWriter only reads
  return t.finish();
}

}  // namespace ascprof::schema
