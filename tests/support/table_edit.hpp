#pragma once
// Damaging one column of a stored table for the readers' bad-input tests. A table is one compound
// dataset (store::TableWriter), so a column cannot be removed or rewritten alone: the whole table
// is rewritten with that column replaced (or left out).
#include <functional>
#include <string>
#include <string_view>

#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::testing {

/// In the file `w` is updating, rewrites `table` with every column as stored except `column`, in
/// whose place `replace` writes what it likes (another type, other values, nothing).
inline Status rewrite_table(store::H5Writer& w, std::string_view table, std::string_view column,
                            const std::function<void(store::TableWriter&)>& replace) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(w.path()));  // the file before the update
  ASCPROF_ASSIGN_OR_RETURN(store::TableData d, r.read_table(table));
  ASCPROF_RETURN_IF_ERROR(w.remove(table));
  store::TableWriter t(w, table, d.rows());
  for (const auto& [name, type] : d.columns()) {
    if (name == column) {
      replace(t);
      continue;
    }
    switch (type) {
      case store::ColumnType::kUInt8: t.column(name, *d.column<uint8_t>(name)); break;
      case store::ColumnType::kInt32: t.column(name, *d.column<int32_t>(name)); break;
      case store::ColumnType::kUInt32: t.column(name, *d.column<uint32_t>(name)); break;
      case store::ColumnType::kInt64: t.column(name, *d.column<int64_t>(name)); break;
      case store::ColumnType::kUInt64: t.column(name, *d.column<uint64_t>(name)); break;
      case store::ColumnType::kFloat: t.column(name, *d.column<float>(name)); break;
      case store::ColumnType::kDouble: t.column(name, *d.column<double>(name)); break;
      case store::ColumnType::kString: t.string_column(name, *d.strings(name)); break;
    }
  }
  return t.finish();
}

}  // namespace ascprof::testing
