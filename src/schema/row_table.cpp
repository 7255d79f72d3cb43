// The non-template halves of write_rows / read_rows (row_table.hpp).
#include "ascprof/schema/row_table.hpp"

#include <cstring>
#include <optional>

#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::schema::detail {

using store::ColumnType;

// ---- writing ------------------------------------------------------------------------------------

struct ColumnSink::Column {
  std::string name;
  ColumnType type = ColumnType::kUInt8;
  std::vector<unsigned char> bytes;  ///< numeric: the packed values
  std::string text;                  ///< text: the cells end to end
  std::vector<uint64_t> starts;      ///< text: where each cell starts (it ends where the next starts)
  bool id = false;                   ///< a StrId column into /strings
};

ColumnSink::ColumnSink(size_t rows) : rows_(rows) {}
ColumnSink::~ColumnSink() = default;

void ColumnSink::end_declaring() {
  declaring_ = false;
  for (Column& c : columns_) c.text.clear();  // what the default row's codecs rendered
}

ColumnSink::Column& ColumnSink::next(std::string_view name, ColumnType type, bool id) {
  if (declaring_) {
    Column c;
    c.name = prefix_;
    c.name += name;
    c.type = type;
    c.id = id;
    if (type == ColumnType::kString) c.starts.reserve(rows_);
    else c.bytes.reserve(rows_ * store::column_type_size(type));
    columns_.push_back(std::move(c));
    return columns_.back();
  }
  if (field_ < columns_.size()) return columns_[field_++];
  overflow_ = true;  // a describe() that varies its columns by row: write() refuses the table
  static thread_local Column scratch;
  scratch.bytes.clear();
  scratch.text.clear();
  scratch.starts.clear();
  return scratch;
}

void ColumnSink::number(std::string_view name, ColumnType type, const void* value, bool id) {
  Column& c = next(name, type, id);
  if (declaring_) return;
  const auto* b = static_cast<const unsigned char*>(value);
  c.bytes.insert(c.bytes.end(), b, b + store::column_type_size(type));
}

std::string& ColumnSink::text(std::string_view name) {
  Column& c = next(name, ColumnType::kString, false);
  if (!declaring_) c.starts.push_back(c.text.size());
  return c.text;
}

Status ColumnSink::write(store::H5Writer& w, std::string_view table) {
  if (overflow_)
    return file_error(ErrorCode::kInternal, w.path().string(), "table " + std::string(table),
                      "a row has more columns than the table declares");
  store::TableWriter t(w, table, rows_, store::TableWriter::Values::kBorrow);
  std::vector<std::string_view> cells;
  for (Column& c : columns_) {
    if (!t.status().ok()) break;
    if (c.id) {
      t.id_column(c.name, std::span(reinterpret_cast<const StrId*>(c.bytes.data()), c.bytes.size() / sizeof(StrId)));
      continue;
    }
    if (c.type != ColumnType::kString) {
      t.packed_column(c.name, c.type, c.bytes);
      continue;
    }
    cells.clear();
    cells.reserve(c.starts.size());
    for (size_t i = 0; i < c.starts.size(); ++i) {
      const size_t begin = c.starts[i];
      const size_t end = i + 1 < c.starts.size() ? c.starts[i + 1] : c.text.size();
      cells.push_back(std::string_view(c.text).substr(begin, end - begin));
    }
    t.string_column(c.name, std::span<const std::string_view>(cells));
    std::string().swap(c.text);  // the writer holds its own copy now
  }
  return t.finish();
}

// ---- reading ------------------------------------------------------------------------------------

struct ColumnSource::Impl {
  const store::H5Reader& reader;
  std::string table;
  std::optional<store::TableData> data;  ///< the compound table (absent: an older group of columns)
};

ColumnSource::ColumnSource(const store::H5Reader& r, std::string_view table, uint64_t exact_rows)
    : impl_(std::make_unique<Impl>(Impl{r, std::string(table), std::nullopt})) {
  if (auto d = r.read_table(table); d.ok()) {
    rows_ = d->rows();
    impl_->data.emplace(std::move(d).value());
  } else if (r.kind(table) == store::ObjectKind::kDataset) {
    st_ = d.status();  // a damaged table
    return;
  } else if (!r.is_table(table)) {
    st_ = file_error(ErrorCode::kSchema, r.path().string(), std::string(table), "missing table");
    return;
  } else if (auto rows = r.uint_attr(table, "row_count"); rows.ok()) {
    rows_ = *rows;  // an older file's table: a group of equal-length columns with row_count
  } else {
    st_ = rows.status();
    return;
  }
  if (exact_rows != 0 && rows_ != exact_rows)
    st_ = file_error(ErrorCode::kSchema, r.path().string(), std::string(table),
                     std::to_string(rows_) + " rows, expected exactly " + std::to_string(exact_rows));
}

ColumnSource::~ColumnSource() = default;

void ColumnSource::fail(std::string_view name, size_t row, std::string_view reason) {
  if (st_.ok())
    st_ = file_error(ErrorCode::kSchema, impl_->reader.path().string(), impl_->table + "/" + prefix_ + std::string(name),
                     "row " + std::to_string(row) + ": " + std::string(reason));
}

namespace {

template <class T>
Result<std::vector<T>> read_numbers(const store::H5Reader& r, const std::optional<store::TableData>& data,
                                    const std::string& table, const std::string& column) {
  return data ? data->column<T>(column) : r.read_column<T>(table + "/" + column);
}

// The column read, if it has the table's row count.
template <class T>
Status check_rows(const Result<std::vector<T>>& v, uint64_t rows, const std::string& file, const std::string& place) {
  if (!v.ok()) return v.status();
  if (v->size() != rows)
    return file_error(ErrorCode::kSchema, file, place, std::to_string(v->size()) + " rows, the table has " + std::to_string(rows));
  return {};
}

}  // namespace

bool ColumnSource::locate(std::string_view name, std::string* column, std::string* place) {
  if (!st_.ok()) return false;
  *column = prefix_ + std::string(name);
  *place = impl_->table + "/" + *column;
  const bool present = impl_->data ? impl_->data->has(*column) : impl_->reader.kind(*place) == store::ObjectKind::kDataset;
  if (!present) st_ = file_error(ErrorCode::kSchema, impl_->reader.path().string(), *place, "missing column");
  return st_.ok();
}

template <class T>
void ColumnSource::copy_column(const std::string& column, const std::string& place, void* out) {
  auto v = read_numbers<T>(impl_->reader, impl_->data, impl_->table, column);
  st_ = check_rows(v, rows_, impl_->reader.path().string(), place);
  if (st_.ok() && !v->empty()) std::memcpy(out, v->data(), v->size() * sizeof(T));  // (no rows: `out` may be null)
}

bool ColumnSource::number(std::string_view name, ColumnType type, void* out) {
  std::string column, place;
  if (!locate(name, &column, &place)) return false;
  switch (type) {
    case ColumnType::kUInt8: copy_column<uint8_t>(column, place, out); break;
    case ColumnType::kInt32: copy_column<int32_t>(column, place, out); break;
    case ColumnType::kUInt32: copy_column<uint32_t>(column, place, out); break;
    case ColumnType::kInt64: copy_column<int64_t>(column, place, out); break;
    case ColumnType::kUInt64: copy_column<uint64_t>(column, place, out); break;
    case ColumnType::kFloat: copy_column<float>(column, place, out); break;
    case ColumnType::kDouble: copy_column<double>(column, place, out); break;
    case ColumnType::kString:
      st_ = file_error(ErrorCode::kInternal, impl_->reader.path().string(), place, "a text column read as a number");
      break;
  }
  return st_.ok();
}

bool ColumnSource::text(std::string_view name, std::vector<std::string>* out) {
  std::string column, place;
  if (!locate(name, &column, &place)) return false;
  auto v = impl_->data ? impl_->data->strings(column) : impl_->reader.read_strings(place);
  st_ = check_rows(v, rows_, impl_->reader.path().string(), place);
  if (st_.ok()) *out = std::move(v).value();
  return st_.ok();
}

}  // namespace ascprof::schema::detail
