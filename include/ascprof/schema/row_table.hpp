#pragma once
/// Row tables declared once (issue 18). A row type's stored columns are listed by ONE function in
/// namespace ascprof::schema,
///   template <class V> void describe(model::HardError& r, V& v) {
///     v("error_type", r.error_type);
///     v("row_start", r.row_start);
///     ...
///   }
/// which calls v(name, field) per column in column order (the same columns for every row), v(name, field, codec) for a field kept
/// as a text cell (a TextCodec, or an enum's EnumNames), and v.part("head_", r.head) for a nested
/// struct whose columns get a prefix. write_rows() and read_rows() drive the store's TableWriter
/// and a table reader from that list, so a column is added, renamed or retyped in one place and
/// the writer and the reader cannot drift apart. A Table<Row> names where the rows live.
///
/// Storage follows the field's C++ type: numeric types as themselves (store::kIsColumnElement),
/// bool as uint8 0/1, an enum without names as its underlying number, std::string as UTF-8 text,
/// a codec field as its rendered text; v.id(name, field) marks a StrId field as an id column into
/// the rank's /strings table.
/// Reading checks every column is present with exactly that type and every cell parses; the first
/// damage is a kSchema error naming the file, table/column and row.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/store/column_type.hpp"

namespace ascprof::store {
class H5Writer;
class H5Reader;
}  // namespace ascprof::store

namespace ascprof::schema {

/// Where rows of type Row are stored: an HDF5 table path in a rank's file, and for a table that
/// always holds the same number of rows, that number (0: any).
template <class Row>
struct Table {
  std::string_view path;
  uint64_t exact_rows = 0;
};

/// A field stored as one text cell: `render` appends the cell, `parse` reads it back (nullptr on
/// success, else the reason).
template <class T>
struct TextCodec {
  void (*render)(const T&, std::string& out);
  const char* (*parse)(std::string_view cell, T* out);
};

/// An enum stored as its name: `name(E)` for each of the `count` values 0..count-1.
template <class E>
struct EnumNames {
  const char* (*name)(E);
  int count;
};

/// The value of `names` spelt `text`; false if none is.
template <class E>
bool parse_name(EnumNames<E> names, std::string_view text, E* out) {
  for (int k = 0; k < names.count; ++k)
    if (text == names.name(static_cast<E>(k))) {
      *out = static_cast<E>(k);
      return true;
    }
  return false;
}

namespace detail {

/// Columns being filled row by row (the non-template half of write_rows, in row_table.cpp): a
/// numeric column is packed bytes, a text column one buffer with each cell's start (no allocation
/// per cell). Declared once from a default row, so a table of no rows still has its columns; a row
/// whose describe() calls more columns than that is an internal error of write().
class ColumnSink {
 public:
  explicit ColumnSink(size_t rows);
  ~ColumnSink();
  void begin_row() { field_ = 0; }
  /// After the declaring pass over a default row: its cells are not rows of the table.
  void end_declaring();
  void push_prefix(std::string_view p) { prefix_.append(p); }
  void pop_prefix(std::string_view p) { prefix_.resize(prefix_.size() - p.size()); }
  void number(std::string_view name, store::ColumnType type, const void* value, bool id = false);
  /// The text cell of the current field, to append to.
  std::string& text(std::string_view name);
  Status write(store::H5Writer& w, std::string_view table);

 private:
  struct Column;
  Column& next(std::string_view name, store::ColumnType type, bool id);
  std::vector<Column> columns_;
  size_t rows_ = 0;
  size_t field_ = 0;
  bool declaring_ = true;
  bool overflow_ = false;  ///< a row called more columns than were declared
  std::string prefix_;
};

/// One column read whole: its values decoded to the field's type.
struct LoadedColumn {
  virtual ~LoadedColumn() = default;
};
template <class T>
struct Loaded final : LoadedColumn {
  std::vector<T> values;
};

/// A table read whole (the non-template half of read_rows, in row_table.cpp), keeping the first
/// error: numeric columns of an exact type, text columns, and cells decoded by a parser.
class ColumnSource {
 public:
  ColumnSource(const store::H5Reader& r, std::string_view table, uint64_t exact_rows);
  ~ColumnSource();
  const Status& status() const { return st_; }
  uint64_t rows() const { return rows_; }
  void push_prefix(std::string_view p) { prefix_.append(p); }
  void pop_prefix(std::string_view p) { prefix_.resize(prefix_.size() - p.size()); }
  /// Reads column `name` into `out` (rows() values of `type`); false after any error.
  bool number(std::string_view name, store::ColumnType type, void* out);
  bool text(std::string_view name, std::vector<std::string>* out);
  /// Marks row `row` of column `name` damaged for `reason`.
  void fail(std::string_view name, size_t row, std::string_view reason);
  std::vector<std::unique_ptr<LoadedColumn>>& columns() { return columns_; }

 private:
  struct Impl;
  bool locate(std::string_view name, std::string* column, std::string* place);
  template <class T>
  void copy_column(const std::string& column, const std::string& place, void* out);
  std::unique_ptr<Impl> impl_;
  Status st_;
  uint64_t rows_ = 0;
  std::string prefix_;
  std::vector<std::unique_ptr<LoadedColumn>> columns_;
};

}  // namespace detail

// The describe() visitors live in namespace schema, so that describe(row, visitor) finds the
// declarations of schema by argument-dependent lookup wherever write_rows / read_rows are used.

/// describe() visitor of write_rows: appends one row's fields to the sink.
struct RowWriter {
  detail::ColumnSink& sink;

  template <class T>
  void operator()(std::string_view name, const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const uint8_t b = v ? 1 : 0;
      sink.number(name, store::ColumnType::kUInt8, &b);
    } else if constexpr (std::is_enum_v<T>) {
      const auto u = static_cast<std::underlying_type_t<T>>(v);
      sink.number(name, store::column_type_of<std::underlying_type_t<T>>(), &u);
    } else if constexpr (store::kIsColumnElement<T>) {
      sink.number(name, store::column_type_of<T>(), &v);
    } else {
      static_assert(std::is_same_v<T, std::string>, "a column is a number, a bool, a string or has a codec");
      sink.text(name).append(v);
    }
  }
  template <class T>
  void operator()(std::string_view name, const T& v, TextCodec<T> codec) {
    codec.render(v, sink.text(name));
  }
  template <class E>
  void operator()(std::string_view name, const E& v, EnumNames<E> names) {
    sink.text(name).append(names.name(v));
  }
  void id(std::string_view name, const StrId& v) { sink.number(name, store::ColumnType::kUInt32, &v, true); }
  template <class P>
  void part(std::string_view prefix, const P& p) {
    sink.push_prefix(prefix);
    describe(const_cast<P&>(p), *this);  // RowWriter only reads
    sink.pop_prefix(prefix);
  }
};

/// describe() visitor of read_rows' first pass (over a default row): reads and decodes every column.
struct RowLoader {
  detail::ColumnSource& src;

  template <class T>
  void operator()(std::string_view name, T&) {
    auto col = std::make_unique<detail::Loaded<T>>();
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> raw(src.rows());
      if (src.number(name, store::ColumnType::kUInt8, raw.data())) col->values.assign(raw.begin(), raw.end());
    } else if constexpr (std::is_enum_v<T>) {
      using U = std::underlying_type_t<T>;
      std::vector<U> raw(src.rows());
      if (src.number(name, store::column_type_of<U>(), raw.data()))
        for (const U u : raw) col->values.push_back(static_cast<T>(u));
    } else if constexpr (store::kIsColumnElement<T>) {
      col->values.resize(src.rows());
      src.number(name, store::column_type_of<T>(), col->values.data());
    } else {
      static_assert(std::is_same_v<T, std::string>, "a column is a number, a bool, a string or has a codec");
      src.text(name, &col->values);
    }
    src.columns().push_back(std::move(col));
  }
  template <class T>
  void operator()(std::string_view name, T&, TextCodec<T> codec) {
    cells<T>(name, [&codec](const std::string& cell, T* out) -> std::string {
      const char* why = codec.parse(cell, out);
      return why != nullptr ? why : "";
    });
  }
  template <class E>
  void operator()(std::string_view name, E&, EnumNames<E> names) {
    cells<E>(name, [&names](const std::string& cell, E* out) -> std::string {
      return parse_name(names, cell, out) ? "" : "unknown value '" + cell + "'";
    });
  }
  // A text column whose cells `parse` decodes (returning "" or the reason a cell is damaged).
  template <class T, class Parse>
  void cells(std::string_view name, Parse parse) {
    auto col = std::make_unique<detail::Loaded<T>>();
    std::vector<std::string> text;
    if (src.text(name, &text)) {
      col->values.resize(text.size());
      for (size_t i = 0; i < text.size(); ++i)
        if (const std::string why = parse(text[i], &col->values[i]); !why.empty()) {
          src.fail(name, i, why);
          break;
        }
    }
    src.columns().push_back(std::move(col));
  }
  void id(std::string_view name, StrId& v) { (*this)(name, v); }
  template <class P>
  void part(std::string_view prefix, P& p) {
    src.push_prefix(prefix);
    describe(p, *this);
    src.pop_prefix(prefix);
  }
};

/// describe() visitor of read_rows' second pass: moves row `row` of every loaded column into a row.
struct RowFiller {
  std::vector<std::unique_ptr<detail::LoadedColumn>>& columns;
  size_t row = 0;
  size_t field = 0;

  template <class T>
  void operator()(std::string_view, T& v) {
    v = std::move(static_cast<detail::Loaded<T>&>(*columns[field++]).values[row]);
  }
  template <class T, class Codec>
  void operator()(std::string_view name, T& v, Codec) {
    (*this)(name, v);
  }
  void id(std::string_view name, StrId& v) { (*this)(name, v); }
  template <class P>
  void part(std::string_view, P& p) {
    describe(p, *this);
  }
};

/// Writes `rows` as the table `table` (one compound dataset, store::TableWriter).
template <class Row>
Status write_rows(store::H5Writer& w, Table<Row> table, std::span<const Row> rows) {
  detail::ColumnSink sink(rows.size());
  RowWriter writer{sink};
  Row shape{};
  describe(shape, writer);
  sink.end_declaring();
  for (const Row& r : rows) {
    sink.begin_row();
    describe(const_cast<Row&>(r), writer);  // RowWriter only reads
  }
  return sink.write(w, table.path);
}
template <class Row>
Status write_rows(store::H5Writer& w, Table<Row> table, const std::vector<Row>& rows) {
  return write_rows(w, table, std::span<const Row>(rows));
}

/// Reads the table `table` into `out` (replacing its contents).
template <class Row>
Status read_rows(const store::H5Reader& r, Table<Row> table, std::vector<Row>* out) {
  detail::ColumnSource src(r, table.path, table.exact_rows);
  if (!src.status().ok()) return src.status();
  RowLoader loader{src};
  Row shape{};
  describe(shape, loader);
  if (!src.status().ok()) return src.status();
  out->assign(src.rows(), Row{});
  RowFiller filler{src.columns()};
  for (size_t i = 0; i < out->size(); ++i) {
    filler.row = i;
    filler.field = 0;
    describe((*out)[i], filler);
  }
  return {};
}

}  // namespace ascprof::schema
