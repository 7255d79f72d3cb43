#pragma once
/// Reading the HDF5 files the store writes (tests, resume, sweeps). Read-only; every failure is a
/// Status naming the file and the object, never a crash (HDF5 detects truncated files on open).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/store/column_type.hpp"
#include "ascprof/store/fingerprint.hpp"
#include "ascprof/store/h5_handle.hpp"

namespace ascprof::store {

/// What a path inside a file names.
enum class ObjectKind : uint8_t { kMissing, kGroup, kDataset, kOther };

/// A whole table (TableWriter's compound dataset) read in one call: its records in memory and
/// its columns extracted by name. Reading a table column by column would decompress every chunk
/// once per column. Move-only.
class TableData {
 public:
  TableData(TableData&& o) noexcept;
  TableData& operator=(TableData&&) = delete;
  TableData(const TableData&) = delete;
  TableData& operator=(const TableData&) = delete;
  ~TableData();

  uint64_t rows() const { return rows_; }
  bool has(std::string_view column) const { return find(column) != nullptr; }
  /// The columns in record order with their element types.
  std::vector<std::pair<std::string, ColumnType>> columns() const {
    std::vector<std::pair<std::string, ColumnType>> out;
    for (const Member& m : members_) out.emplace_back(m.name, m.type);
    return out;
  }
  /// A numeric column; kSchema error if missing or its element type is not exactly T.
  template <class T>
    requires kIsColumnElement<T>
  Result<std::vector<T>> column(std::string_view name) const;
  /// A string column; kSchema error if missing or not strings.
  Result<std::vector<std::string>> strings(std::string_view name) const;

 private:
  friend class H5Reader;
  TableData() = default;
  struct Member {
    std::string name;
    ColumnType type = ColumnType::kUInt8;
    size_t offset = 0;
    size_t width = 0;  ///< bytes in the record (a fixed string's width; a vlen string's char*)
    bool vlen = false;
  };
  const Member* find(std::string_view name) const;
  Status member_error(std::string_view name, const std::string& reason) const;

  std::filesystem::path file_;
  std::string table_;
  uint64_t rows_ = 0;
  size_t record_ = 0;
  std::vector<unsigned char> records_;
  std::vector<Member> members_;
  H5Handle mem_type_;  ///< the records' memory type, to free vlen strings
  H5Handle space_;
};

extern template Result<std::vector<uint8_t>> TableData::column<uint8_t>(std::string_view) const;
extern template Result<std::vector<int32_t>> TableData::column<int32_t>(std::string_view) const;
extern template Result<std::vector<uint32_t>> TableData::column<uint32_t>(std::string_view) const;
extern template Result<std::vector<int64_t>> TableData::column<int64_t>(std::string_view) const;
extern template Result<std::vector<uint64_t>> TableData::column<uint64_t>(std::string_view) const;
extern template Result<std::vector<float>> TableData::column<float>(std::string_view) const;
extern template Result<std::vector<double>> TableData::column<double>(std::string_view) const;

/// A read-only open HDF5 file. Move-only. Paths may cross external links.
class H5Reader {
 public:
  /// Opens `path` read-only. kIo error naming the path when it is missing, not HDF5, or damaged
  /// (e.g. truncated).
  static Result<H5Reader> open(const std::filesystem::path& path);

  H5Reader(H5Reader&&) noexcept = default;
  H5Reader& operator=(H5Reader&&) noexcept = default;
  H5Reader(const H5Reader&) = delete;
  H5Reader& operator=(const H5Reader&) = delete;

  const std::filesystem::path& path() const { return path_; }

  /// Kind of object at `object` (kMissing also when a link on the way is dangling). A table's
  /// column `table/column` is a kDataset: every column call below reads it like a 1-D dataset.
  ObjectKind kind(std::string_view object) const;
  bool exists(std::string_view object) const { return kind(object) != ObjectKind::kMissing; }
  /// Reads a whole table written by TableWriter (a compound dataset). kSchema error if `table`
  /// is not one.
  Result<TableData> read_table(std::string_view table) const;
  /// A table: a compound dataset (TableWriter's layout) or a group of columns with `row_count`.
  bool is_table(std::string_view object) const;
  /// Names of the members of `group` (of a table: its columns), sorted by name.
  Result<std::vector<std::string>> list(std::string_view group) const;

  /// Element type of a 1-D column dataset (kSchema error for types the store does not write).
  Result<ColumnType> column_type(std::string_view dataset) const;
  /// Number of elements of a 1-D dataset.
  Result<uint64_t> column_length(std::string_view dataset) const;
  /// Reads a whole numeric column. kSchema error if the dataset is not 1-D or its element type is
  /// not exactly T (no silent conversions).
  template <class T>
    requires kIsColumnElement<T>
  Result<std::vector<T>> read_column(std::string_view dataset) const;
  /// Reads a 1-D vlen (or fixed-length) string dataset, e.g. a string table or string column.
  Result<std::vector<std::string>> read_strings(std::string_view dataset) const;
  /// Reads a string table into `pool`, which must be fresh (only ""), so that ids keep their
  /// meaning: row i becomes StrId i. kSchema error if row 0 is not "" or a string repeats.
  Status read_string_pool(std::string_view dataset, StringPool* pool) const;

  /// Attributes of `object` ("/" for the file). kSchema error on a missing attribute or a type
  /// mismatch (integers read as int/uint and double; floats only as double; strings as strings).
  bool has_attr(std::string_view object, std::string_view name) const;
  Result<std::string> string_attr(std::string_view object, std::string_view name) const;
  Result<int64_t> int_attr(std::string_view object, std::string_view name) const;
  Result<uint64_t> uint_attr(std::string_view object, std::string_view name) const;
  Result<double> double_attr(std::string_view object, std::string_view name) const;
  Result<std::vector<std::string>> string_array_attr(std::string_view object, std::string_view name) const;
  Result<std::vector<int64_t>> int_array_attr(std::string_view object, std::string_view name) const;
  Result<std::vector<uint64_t>> uint_array_attr(std::string_view object, std::string_view name) const;
  Result<std::vector<double>> double_array_attr(std::string_view object, std::string_view name) const;

  /// Input fingerprints written by H5Writer::write_fingerprints (empty if none were written).
  Result<std::vector<Fingerprint>> read_fingerprints(std::string_view object) const;

 private:
  H5Reader() = default;
  template <class T>
  Result<std::vector<T>> numeric_attr(std::string_view object, std::string_view name, bool scalar) const;

  H5Handle file_;
  std::filesystem::path path_;
};

extern template Result<std::vector<uint8_t>> H5Reader::read_column<uint8_t>(std::string_view) const;
extern template Result<std::vector<int32_t>> H5Reader::read_column<int32_t>(std::string_view) const;
extern template Result<std::vector<uint32_t>> H5Reader::read_column<uint32_t>(std::string_view) const;
extern template Result<std::vector<int64_t>> H5Reader::read_column<int64_t>(std::string_view) const;
extern template Result<std::vector<uint64_t>> H5Reader::read_column<uint64_t>(std::string_view) const;
extern template Result<std::vector<float>> H5Reader::read_column<float>(std::string_view) const;
extern template Result<std::vector<double>> H5Reader::read_column<double>(std::string_view) const;

/// What a checkpoint file says about itself.
struct CheckpointInfo {
  std::string tool_version;
  std::string stage;
  int64_t schema_version = 0;
  std::vector<Fingerprint> inputs;  ///< empty when the file records none
};

/// Opens `path` read-only and returns its completion attributes. Error (never a crash) when the
/// file is missing, not HDF5, truncated or damaged ("not a valid checkpoint"), or lacks
/// `complete = 1`, `tool_version`, `stage` or `schema_version`.
Result<CheckpointInfo> read_checkpoint_info(const std::filesystem::path& path);

}  // namespace ascprof::store
