// TableWriter: a table as one compound dataset (see h5_writer.hpp for the layout and why).
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "h5_detail.hpp"
#include "zlib_codec.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::store {

namespace {

/// Tables of at most this many bytes are stored compact, inside their object header.
constexpr size_t kCompactTableBytes = 2u << 10;
/// Bytes of records per chunk: deflate sees many rows, a reader of a slice decompresses little.
constexpr size_t kChunkBytes = 1u << 20;
/// Chunks packed and handed to HDF5 per H5Dwrite (bounds the packing buffer).
constexpr size_t kChunksPerWrite = 4;
/// A string column is fixed-width unless padding each row to the longest inflates it beyond this
/// factor (and beyond kFixedTextAlways bytes): then it is variable-length (global heap, no padding).
constexpr size_t kMaxPaddingFactor = 4;
constexpr size_t kFixedTextAlways = 64u << 10;

/// Tables smaller than this are not probed (see choose_record_filters); the probe looks at the
/// first kProbeBytes of records. With 256 KiB the probe deflated more than the table's own write
/// did (~11 % of a small rank's whole job); 32 KiB costs an eighth and chose the same filters in 22
/// of the 23 files scripts/compare_outputs.sh writes (the other: one table of glm5_mtp without
/// shuffle, its file 0.5 % bigger).
constexpr size_t kProbeMinBytes = 64u << 10;
constexpr size_t kProbeBytes = 32u << 10;

enum class RecordFilters { kNone, kDeflate, kShuffleDeflate };

/// The calling thread's compressor at `level` (one allocation per thread and level, not per table;
/// a deque, so a reference stays valid when another level is added).
detail::ZlibCompressor& compressor(int level) {
  thread_local std::deque<std::pair<int, detail::ZlibCompressor>> by_level;
  for (auto& [l, c] : by_level)
    if (l == level) return c;
  return by_level.emplace_back(level, detail::ZlibCompressor(level)).second;
}

/// Deflated size of `n` bytes at `level`, as the table's chunks would be stored (SIZE_MAX when the
/// compressor cannot be allocated).
size_t deflated_size(const unsigned char* data, size_t n, int level, std::vector<unsigned char>& scratch) {
  return compressor(level).compress(data, n, scratch) ? scratch.size() : SIZE_MAX;
}

/// HDF5's shuffle filter, byte for byte (H5Zshuffle.c): byte b of element r goes to b * count + r;
/// a chunk of one element, or of one-byte elements, is left as it is.
void shuffle_bytes(const unsigned char* in, size_t count, size_t size, unsigned char* out) {
  if (count <= 1 || size <= 1) {
    std::memcpy(out, in, count * size);
    return;
  }
  for (size_t r = 0; r < count; ++r)
    for (size_t b = 0; b < size; ++b) out[b * count + r] = in[r * size + b];
}

/// Picks the filters of a chunked table from its first packed chunk: deflate with or without
/// HDF5's byte shuffle (shuffle wins on integer columns; on doubles with few distinct values and
/// on text, plain deflate finds the repeats shuffle scatters, measured 2x smaller on
/// kernel_metrics), or none when neither saves 15 % (random mantissas: deflate is CPU for nothing).
RecordFilters choose_record_filters(const unsigned char* chunk, size_t records, size_t record, int level,
                                    size_t table_bytes) {
  if (level <= 0) return RecordFilters::kNone;
  const size_t n = records * record;
  // a small table is one chunk: probing would deflate it twice more than storing it does
  if (table_bytes < kProbeMinBytes) return RecordFilters::kShuffleDeflate;
  std::vector<unsigned char> shuffled(n), scratch;
  shuffle_bytes(chunk, records, record, shuffled.data());
  const size_t plain = deflated_size(chunk, n, level, scratch);
  const size_t shuf = deflated_size(shuffled.data(), n, level, scratch);
  const size_t best = std::min(plain, shuf);
  if (best == SIZE_MAX) return RecordFilters::kShuffleDeflate;
  if (static_cast<double>(best) > 0.85 * static_cast<double>(n)) return RecordFilters::kNone;
  return shuf < plain ? RecordFilters::kShuffleDeflate : RecordFilters::kDeflate;
}

/// How one column is laid out inside the record.
struct Member {
  H5Handle file_type;  ///< owned copies (string types are made here; numeric ones copied)
  H5Handle mem_type;
  size_t offset = 0;
  size_t size = 0;
  bool vlen = false;
};

H5Handle copy_type(Hid t) { return H5Handle(H5Tcopy(t), H5Kind::kDatatype); }

H5Handle fixed_utf8_type(size_t width) {
  H5Handle t(H5Tcopy(H5T_C_S1), H5Kind::kDatatype);
  if (!t.valid() || H5Tset_size(t.get(), std::max<size_t>(width, 1)) < 0 || H5Tset_cset(t.get(), H5T_CSET_UTF8) < 0 ||
      H5Tset_strpad(t.get(), H5T_STR_NULLPAD) < 0)
    return {};
  return t;
}

/// Copies `rows` elements of `width` bytes into every `stride`-th slot of `dst`.
template <size_t W>
void scatter_fixed(unsigned char* dst, size_t stride, const unsigned char* src, size_t rows) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * stride, src + r * W, W);
}

void scatter(unsigned char* dst, size_t stride, const unsigned char* src, size_t rows, size_t width) {
  switch (width) {
    case 1: scatter_fixed<1>(dst, stride, src, rows); break;
    case 4: scatter_fixed<4>(dst, stride, src, rows); break;
    case 8: scatter_fixed<8>(dst, stride, src, rows); break;
    default:
      for (size_t r = 0; r < rows; ++r) std::memcpy(dst + r * stride, src + r * width, width);
  }
}

}  // namespace

TableWriter::TableWriter(H5Writer& writer, std::string_view table, uint64_t rows, Values values)
    : writer_(writer), table_(detail::object_path(table)), rows_(rows), values_(values) {
  if (table_ == "/")
    first_error_ = writer_.note(file_error(ErrorCode::kInternal, writer_.path().string(), "table /", "a table needs a name"));
}

void TableWriter::keep(const Status& s) {
  if (!s.ok() && first_error_.ok()) first_error_ = s;
}

bool TableWriter::begin_column(std::string_view name, uint64_t n) {
  if (!first_error_.ok()) return false;  // after an error the table is abandoned
  const std::string place = "table " + table_;
  Status s;
  const auto same = [name](const Column& c) { return c.name == name; };
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
    s = file_error(ErrorCode::kInternal, writer_.path().string(), place, "bad column name '" + std::string(name) + "'");
  else if (std::any_of(columns_.begin(), columns_.end(), same))
    s = file_error(ErrorCode::kInternal, writer_.path().string(), place, "column '" + std::string(name) + "' written twice");
  else if (n != rows_)
    s = file_error(ErrorCode::kInternal, writer_.path().string(), place,
                   "column '" + std::string(name) + "' has " + std::to_string(n) + " rows, expected " +
                       std::to_string(rows_));
  if (!s.ok()) {
    keep(writer_.note(std::move(s)));
    return false;
  }
  return true;
}

void TableWriter::add_numeric(std::string_view name, ColumnType type, const void* data, size_t width) {
  Column c;
  c.name = std::string(name);
  c.type = type;
  const auto* b = static_cast<const unsigned char*>(data);
  if (values_ == Values::kBorrow) c.borrowed = b;
  else c.bytes.assign(b, b + rows_ * width);
  columns_.push_back(std::move(c));
}

TableWriter& TableWriter::id_column(std::string_view name, std::span<const StrId> ids, std::string_view table) {
  if (!begin_column(name, ids.size())) return *this;
  const std::string tab = detail::object_path(table);
  if (auto it = writer_.table_sizes_.find(tab); it != writer_.table_sizes_.end() && !ids.empty()) {
    const StrId max_id = *std::max_element(ids.begin(), ids.end());
    if (max_id >= it->second) {
      keep(writer_.note(file_error(ErrorCode::kInternal, writer_.path().string(), "table " + table_,
                                   "column '" + std::string(name) + "': string id " + std::to_string(max_id) +
                                       " is not in " + tab + " (" + std::to_string(it->second) + " strings)")));
      return *this;
    }
  }
  add_numeric(name, ColumnType::kUInt32, ids.data(), sizeof(StrId));
  columns_.back().id_table = tab;
  return *this;
}

TableWriter& TableWriter::packed_column(std::string_view name, ColumnType type, std::span<const unsigned char> bytes) {
  const size_t width = column_type_size(type);
  if (width == 0 || bytes.size() % width != 0) {
    keep(writer_.note(file_error(ErrorCode::kInternal, writer_.path().string(), "table " + table_,
                                 "column '" + std::string(name) + "': " + std::to_string(bytes.size()) +
                                     " bytes are not whole " + column_type_name(type) + " values")));
    return *this;
  }
  if (begin_column(name, bytes.size() / width)) add_numeric(name, type, bytes.data(), width);
  return *this;
}

template <class Range>
void TableWriter::add_text(std::string_view name, const Range& values) {
  Column c;
  c.name = std::string(name);
  c.type = ColumnType::kString;
  size_t total = 0;
  for (const auto& v : values) total += v.size();
  c.text.reserve(total);
  c.ends.reserve(rows_);
  for (const auto& v : values) {
    const size_t begin = c.text.size();
    if (detail::append_clean_utf8(c.text, std::string_view(v))) ++repaired_;
    c.longest = std::max(c.longest, c.text.size() - begin);
    c.ends.push_back(c.text.size());
  }
  columns_.push_back(std::move(c));
}

TableWriter& TableWriter::string_column(std::string_view name, std::span<const std::string> values) {
  if (begin_column(name, values.size())) add_text(name, values);
  return *this;
}

TableWriter& TableWriter::string_column(std::string_view name, std::span<const std::string_view> values) {
  if (begin_column(name, values.size())) add_text(name, values);
  return *this;
}

Status TableWriter::finish() {
  if (!first_error_.ok()) return first_error_;
  keep(write_dataset());
  columns_.clear();
  columns_.shrink_to_fit();
  return first_error_;
}

Status TableWriter::write_attributes(Hid obj) {
  std::vector<std::string> names, id_columns, id_tables;
  for (const Column& c : columns_) {
    names.push_back(c.name);
    if (!c.id_table.empty()) {
      id_columns.push_back(c.name);
      id_tables.push_back(c.id_table);
    }
  }
  const int64_t rows = static_cast<int64_t>(rows_);
  ASCPROF_RETURN_IF_ERROR(writer_.set_string_array_attr_on(obj, table_, "columns", names));
  ASCPROF_RETURN_IF_ERROR(writer_.write_attr_on(obj, table_, "row_count", ColumnType::kInt64, &rows, 1, true, true));
  if (!id_columns.empty()) {
    ASCPROF_RETURN_IF_ERROR(writer_.set_string_array_attr_on(obj, table_, "id_columns", id_columns));
    ASCPROF_RETURN_IF_ERROR(writer_.set_string_array_attr_on(obj, table_, "id_tables", id_tables));
  }
  if (repaired_ > 0)
    ASCPROF_RETURN_IF_ERROR(writer_.write_attr_on(obj, table_, "repaired_strings", ColumnType::kInt64, &repaired_, 1, true, true));
  return {};
}

Status TableWriter::write_dataset() {
  const std::string op = "write table " + table_;
  ASCPROF_RETURN_IF_ERROR(writer_.check_open(op));
  const std::string p = writer_.path().string();
  if (const size_t slash = table_.rfind('/'); slash > 0) ASCPROF_RETURN_IF_ERROR(writer_.create_group(table_.substr(0, slash)));
  if (columns_.empty()) {
    // nothing to hold a record: an empty group keeps the table's name and attributes
    ASCPROF_RETURN_IF_ERROR(writer_.create_group(table_));
    H5Handle group(H5Oopen(writer_.file_.get(), table_.c_str(), H5P_DEFAULT), H5Kind::kObject);
    if (!group.valid()) return writer_.note(h5_error(p, op));
    ASCPROF_RETURN_IF_ERROR(write_attributes(group.get()));
    return writer_.note(group.close(p, op));
  }

  // ---- the record: one member per column, packed in call order
  std::vector<Member> members(columns_.size());
  size_t record = 0;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const Column& c = columns_[i];
    Member& m = members[i];
    if (c.type != ColumnType::kString) {
      m.file_type = copy_type(detail::file_type(c.type));
      m.mem_type = copy_type(detail::native_type(c.type));
      m.size = column_type_size(c.type);
    } else {
      const size_t padded = c.longest * rows_;
      m.vlen = padded > kFixedTextAlways && padded > kMaxPaddingFactor * c.text.size();
      m.file_type = m.vlen ? detail::vlen_utf8_type() : fixed_utf8_type(c.longest);
      m.mem_type = m.vlen ? detail::vlen_utf8_type() : fixed_utf8_type(c.longest);
      m.size = m.vlen ? sizeof(char*) : std::max<size_t>(c.longest, 1);
    }
    if (!m.file_type.valid() || !m.mem_type.valid()) return writer_.note(h5_error(p, op));
    m.offset = record;
    record += m.size;
  }
  // The packing buffer's record (native types, a vlen string as its char*) and the stored one
  // (little-endian standard types); HDF5 converts between them on write.
  H5Handle mem(H5Tcreate(H5T_COMPOUND, record), H5Kind::kDatatype);
  if (!mem.valid()) return writer_.note(h5_error(p, op));
  for (size_t i = 0; i < columns_.size(); ++i)
    if (H5Tinsert(mem.get(), columns_[i].name.c_str(), members[i].offset, members[i].mem_type.get()) < 0)
      return writer_.note(h5_error(p, op + ": column " + columns_[i].name));
  size_t file_record = 0;
  for (size_t i = 0; i < columns_.size(); ++i) file_record += H5Tget_size(members[i].file_type.get());
  H5Handle file(H5Tcreate(H5T_COMPOUND, file_record), H5Kind::kDatatype);
  if (!file.valid()) return writer_.note(h5_error(p, op));
  for (size_t i = 0, off = 0; i < columns_.size(); ++i) {
    if (H5Tinsert(file.get(), columns_[i].name.c_str(), off, members[i].file_type.get()) < 0)
      return writer_.note(h5_error(p, op + ": column " + columns_[i].name));
    off += H5Tget_size(members[i].file_type.get());
  }

  // ---- packing records into a buffer, a few chunks at a time
  const hsize_t dims = rows_;
  const bool compact = rows_ * file_record <= kCompactTableBytes;
  const hsize_t chunk_rows = std::clamp<hsize_t>(kChunkBytes / std::max<size_t>(file_record, 1), 1, std::max<hsize_t>(dims, 1));
  const hsize_t block = compact ? std::max<hsize_t>(dims, 1) : chunk_rows * kChunksPerWrite;
  // whole chunks: a direct chunk write (below) pads the last one
  const hsize_t whole_chunks = (std::max<hsize_t>(dims, 1) + chunk_rows - 1) / chunk_rows * chunk_rows;
  const size_t buf_rows = static_cast<size_t>(std::min<hsize_t>(block, compact ? std::max<hsize_t>(dims, 1) : whole_chunks));
  std::vector<unsigned char> buf(buf_rows * record);
  std::vector<std::string> terminated(columns_.size());  // vlen members: NUL-terminated copies
  for (size_t i = 0; i < columns_.size(); ++i)
    if (members[i].vlen) {
      const Column& c = columns_[i];
      std::string& t = terminated[i];
      t.reserve(c.text.size() + rows_);
      for (size_t r = 0, begin = 0; r < rows_; begin = c.ends[r++]) {
        t.append(c.text, begin, c.ends[r] - begin);
        t.push_back('\0');
      }
    }
  const auto pack = [&](hsize_t first, hsize_t count) {
    std::fill(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(count * record), static_cast<unsigned char>(0));
    for (size_t i = 0; i < columns_.size(); ++i) {
      const Column& c = columns_[i];
      const Member& m = members[i];
      unsigned char* dst = buf.data() + m.offset;
      if (c.type != ColumnType::kString) {
        scatter(dst, record, (c.borrowed != nullptr ? c.borrowed : c.bytes.data()) + first * m.size, count, m.size);
      } else if (!m.vlen) {
        for (hsize_t r = first; r < first + count; ++r) {
          const size_t begin = r == 0 ? 0 : c.ends[r - 1];
          std::memcpy(dst + (r - first) * record, c.text.data() + begin, c.ends[r] - begin);
        }
      } else {
        const char* base = terminated[i].data();
        for (hsize_t r = first; r < first + count; ++r) {
          const char* ptr = base + (r == 0 ? 0 : c.ends[r - 1]) + r;  // + r terminators before row r
          std::memcpy(dst + (r - first) * record, &ptr, sizeof ptr);
        }
      }
    }
  };

  // ---- storage: compact when tiny, else chunks of whole records with the filters the first
  // chunk compresses best with
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Kind::kDataspace);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Kind::kPropList);
  if (!space.valid() || !dcpl.valid()) return writer_.note(h5_error(p, op));
  RecordFilters filters = RecordFilters::kNone;
  if (compact) {
    if (H5Pset_layout(dcpl.get(), H5D_COMPACT) < 0) return writer_.note(h5_error(p, op));
  } else {
    if (H5Pset_chunk(dcpl.get(), 1, &chunk_rows) < 0) return writer_.note(h5_error(p, op));
    // the probe deflates (twice) at most kProbeBytes of records: enough to tell, cheap to try
    const hsize_t probe_rows = std::clamp<hsize_t>(kProbeBytes / record, 1, std::min(chunk_rows, dims));
    pack(0, probe_rows);
    filters = choose_record_filters(buf.data(), static_cast<size_t>(probe_rows), record, writer_.options_.deflate_level,
                                    static_cast<size_t>(dims) * record);
    if ((filters == RecordFilters::kShuffleDeflate && H5Pset_shuffle(dcpl.get()) < 0) ||
        (filters != RecordFilters::kNone &&
         H5Pset_deflate(dcpl.get(), static_cast<unsigned>(writer_.options_.deflate_level)) < 0))
      return writer_.note(h5_error(p, op));
  }
  H5Handle lcpl = detail::lcpl_with_parents();
  if (!lcpl.valid()) return writer_.note(h5_error(p, op));
  H5Handle ds(H5Dcreate2(writer_.file_.get(), table_.c_str(), file.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
              H5Kind::kDataset);
  if (!ds.valid()) return writer_.note(h5_error(p, op));

  // Filtered chunks whose packed records are already the stored ones (no vlen string, every member
  // in its file type) are filtered here and written as they will be stored: the same bytes HDF5's
  // shuffle and deflate filters produce (any HDF5 reader inflates them), with libdeflate instead of
  // zlib and without HDF5's conversion pass.
  const bool direct = filters != RecordFilters::kNone && H5Tequal(mem.get(), file.get()) > 0 &&
                      std::none_of(members.begin(), members.end(), [](const Member& m) { return m.vlen; });
  if (direct) {
    const size_t chunk_bytes = static_cast<size_t>(chunk_rows) * record;
    std::vector<unsigned char> shuffled(filters == RecordFilters::kShuffleDeflate ? chunk_bytes : 0), stored;
    detail::ZlibCompressor& z = compressor(writer_.options_.deflate_level);
    for (hsize_t first = 0; first < dims; first += block) {
      const hsize_t count = std::min(block, dims - first);
      pack(first, count);
      for (hsize_t at = 0; at < count; at += chunk_rows) {
        unsigned char* chunk = buf.data() + at * record;
        if (const hsize_t rows = std::min(chunk_rows, count - at); rows < chunk_rows)  // the edge chunk's fill
          std::memset(chunk + rows * record, 0, static_cast<size_t>(chunk_rows - rows) * record);
        const unsigned char* raw = chunk;
        if (!shuffled.empty()) {
          shuffle_bytes(chunk, static_cast<size_t>(chunk_rows), record, shuffled.data());
          raw = shuffled.data();
        }
        if (!z.compress(raw, chunk_bytes, stored))
          return writer_.note(file_error(ErrorCode::kIo, p, op, "deflate failed (out of memory?)"));
        const hsize_t offset = first + at;
        if (H5Dwrite_chunk(ds.get(), H5P_DEFAULT, 0, &offset, stored.size(), stored.data()) < 0)
          return writer_.note(h5_error(p, op));
      }
    }
    ASCPROF_RETURN_IF_ERROR(write_attributes(ds.get()));
    return writer_.note(ds.close(p, op));
  }

  H5Handle dxpl = detail::transfer_plist(buf_rows, record);
  if (!dxpl.valid()) return writer_.note(h5_error(p, op));
  for (hsize_t first = 0; first < dims; first += block) {
    const hsize_t count = std::min(block, dims - first);
    pack(first, count);
    H5Handle fspace(H5Dget_space(ds.get()), H5Kind::kDataspace);
    H5Handle mspace(H5Screate_simple(1, &count, nullptr), H5Kind::kDataspace);
    if (!fspace.valid() || !mspace.valid() ||
        H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr) < 0 ||
        H5Dwrite(ds.get(), mem.get(), mspace.get(), fspace.get(), dxpl.get(), buf.data()) < 0)
      return writer_.note(h5_error(p, "write table " + table_));
  }
  ASCPROF_RETURN_IF_ERROR(write_attributes(ds.get()));
  return writer_.note(ds.close(p, "write table " + table_));
}

}  // namespace ascprof::store
