#pragma once
/// Writing HDF5 files that h5py, pandas and h5dump read without our code.
///
/// Layout conventions (every file the tool writes):
/// - A table is ONE compound dataset (TableWriter; layout and reasons there): `f["/kernels"][:]`
///   in h5py is the whole table, `pd.DataFrame(f["/kernels"][:])` a data frame. Its attributes:
///   `columns` (names in order), `row_count`, `id_columns`/`id_tables` for string-id columns.
///   Until schema version 2 a table was a group of 1-D column datasets; H5Reader reads both.
/// - Standalone 1-D columns (write_column) of at most 2 KiB are compact; larger ones are chunked
///   (64Ki elements) and deflated at level 1, with or without byte-shuffle as a per-column sample
///   shows best (WriterOptions::adaptive_filters); columns that do not compress are stored
///   unfiltered. Deflate is the only compression every HDF5 reader has built in (no plugins).
/// - Format: HDF5 1.10 (libver bounds v110), dataset object headers without room reserved for
///   attributes, groups keeping up to 128 links in their header: readable by HDF5 >= 1.10 (h5py
///   wheels since 2018, Debian 12's h5dump).
/// - Strings: a rank's StringPool is written once as `/strings`, a 1-D dataset of variable-length
///   UTF-8 strings where row i is StrId i (row 0 is ""). String columns of big tables are uint32
///   ids into it; a reader resolves them with one numpy fancy-index:
///   `names = f["/strings"].asstr()[:][f["/kernels"]["name"]]`. Why not strings per row: HDF5
///   stores each vlen element as a separate global-heap object (a 16-byte heap id plus an
///   uncompressed heap record). For 1M rows of profiler names that measured ~3x the CPU time and
///   ~7x the file size of uint32 ids plus the whole 100k-entry table (hdf5_write_benchmark
///   BM_StringColumnIds vs BM_StringColumnVlen), and ids keep the dedup the pool already paid for.
///   Text columns of small tables (JSON cells of the summaries) are fixed-width strings inside the
///   record, deflated with it.
/// - Strings must be valid UTF-8 without NUL: invalid sequences and NUL bytes are written as U+FFFD
///   and the dataset gets an int64 attribute `repaired_strings` (count) so nothing changes silently.
/// - The root carries `tool_version`, `stage`, `schema_version`, optional input fingerprints
///   (`input_paths`, `input_sizes`, `input_mtimes_ns`, `input_prefix_hashes`) and, written last,
///   `complete = 1`.
///
/// Atomicity: a writer works on a temporary sibling (`<path>.tmp.<pid>`); commit() writes the
/// completion attributes, closes the file and renames it onto `path`. A writer destroyed without a
/// successful commit() removes its temporary file, so `path` only ever holds a complete file (or the
/// previous one), even if the process is killed. A killed process can leave a `*.tmp.<pid>` file
/// behind (resume may delete it). No fsync is done: after a power loss (not a process crash) the
/// file system may hold a short file under `path`; read_checkpoint_info() reports that as not a
/// valid checkpoint, since HDF5 checks the stored end-of-file address on open.
///
/// Errors: every call returns a Status (kIo with "PATH:OPERATION: HDF5 reason"); the first error is
/// remembered and commit() refuses to publish a file after any failed write.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/store/column_type.hpp"
#include "ascprof/store/fingerprint.hpp"
#include "ascprof/store/h5_handle.hpp"

namespace ascprof::store {

/// Version of the on-disk layout; bump when a reader of the previous layout would misread a file.
inline constexpr int64_t kSchemaVersion = 2;  // 2: a table is one compound dataset

/// The tool version written into every file (the project version, e.g. "0.1.0").
const char* tool_version();

/// Knobs for dataset creation; the defaults are what the tool uses.
struct WriterOptions {
  uint32_t chunk_elements = 1u << 16;  ///< elements per chunk (clamped to the column length, min 1)
  int deflate_level = 1;               ///< 0 disables compression; 1 measured the best speed/size trade
  /// Per numeric column of >= 64 KiB, deflate three 8Ki-element samples with and without
  /// byte-shuffle and keep the smaller; store uncompressed when neither saves 15%. Measured: shuffle
  /// wins on timestamps and ids, loses badly on doubles with few distinct values, and deflate on
  /// random mantissas costs ~15x the write time for <10% saving.
  bool adaptive_filters = true;
  bool shuffle = true;                 ///< without adaptive_filters: byte-shuffle before deflate
  bool create_parent_dirs = false;     ///< create missing parent folders of the target path
};

/// Writes one new HDF5 file atomically (see the file comment). Move-only.
class H5Writer {
 public:
  /// Starts a new file for `path` (replacing any existing file at commit). kIo error naming the
  /// path if its folder does not exist (unless options.create_parent_dirs) or is not writable.
  static Result<H5Writer> create(const std::filesystem::path& path, const WriterOptions& options = {});
  /// Starts a new version of the existing file `path`: copies it to the temporary name and opens
  /// the copy read-write, so objects can be added (or removed) and committed atomically.
  static Result<H5Writer> update(const std::filesystem::path& path, const WriterOptions& options = {});

  H5Writer(H5Writer&& o) noexcept;
  H5Writer& operator=(H5Writer&& o) noexcept;
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;
  /// Without a successful commit(): closes and removes the temporary file.
  ~H5Writer();

  /// Final path (what commit() publishes).
  const std::filesystem::path& path() const { return path_; }
  /// Temporary path written until commit().
  const std::filesystem::path& temp_path() const { return temp_path_; }
  /// The first error any call returned (ok if none).
  const Status& status() const { return first_error_; }

  /// Creates `group` and any missing parents. Ok if it already exists as a group.
  Status create_group(std::string_view group);

  /// Writes a 1-D chunked, compressed column. Missing parent groups are created; zero-length
  /// columns are allowed. Error if `dataset` already exists.
  template <class T>
    requires kIsColumnElement<T>
  Status write_column(std::string_view dataset, std::span<const T> values) {
    return write_numeric(dataset, column_type_of<T>(), values.data(), values.size());
  }
  template <class T>
    requires kIsColumnElement<T>
  Status write_column(std::string_view dataset, const std::vector<T>& values) {
    return write_numeric(dataset, column_type_of<T>(), values.data(), values.size());
  }

  /// Writes a uint32 column of string ids with attribute `strings = table`. If `table` was written
  /// by this writer before, every id is checked to be < its size (kInternal error otherwise).
  Status write_id_column(std::string_view dataset, std::span<const StrId> ids,
                         std::string_view table = "/strings");
  /// Writes a column of variable-length UTF-8 strings (for small tables; see the file comment).
  Status write_string_column(std::string_view dataset, std::span<const std::string_view> values);
  Status write_string_column(std::string_view dataset, std::span<const std::string> values);
  /// Writes every string of `pool` as a vlen UTF-8 dataset whose row i is StrId i.
  Status write_string_table(std::string_view dataset, const StringPool& pool);

  /// Attributes on an existing object (`"/"` for the file, a group or a dataset). An existing
  /// attribute of the same name is replaced. Strings are vlen UTF-8 (what h5py reads as str).
  Status set_string_attr(std::string_view object, std::string_view name, std::string_view value);
  Status set_int_attr(std::string_view object, std::string_view name, int64_t value);
  Status set_uint_attr(std::string_view object, std::string_view name, uint64_t value);
  Status set_double_attr(std::string_view object, std::string_view name, double value);
  Status set_string_array_attr(std::string_view object, std::string_view name, std::span<const std::string> values);
  Status set_int_array_attr(std::string_view object, std::string_view name, std::span<const int64_t> values);
  Status set_uint_array_attr(std::string_view object, std::string_view name, std::span<const uint64_t> values);
  Status set_double_array_attr(std::string_view object, std::string_view name, std::span<const double> values);

  /// Records input fingerprints as the array attributes `input_paths`, `input_sizes`,
  /// `input_mtimes_ns`, `input_prefix_hashes` on `object` (usually "/").
  Status write_fingerprints(std::string_view object, std::span<const Fingerprint> inputs);

  /// Creates an external link `link` -> `target_file`:`target_object`. Missing parent groups of
  /// `link` are created. An absolute `target_file` is stored relative to this file's folder (HDF5
  /// resolves relative names there), so the output folder can be moved as a whole.
  Status create_external_link(std::string_view link, std::string_view target_file, std::string_view target_object);

  /// Unlinks an object (for update(): redo a stage's group). Error if it does not exist.
  Status remove(std::string_view object);

  /// Writes `tool_version`, `stage`, `schema_version`, then `complete = 1` on the root, closes the
  /// file and renames it onto path(). Refuses (returning the first error) if any call failed; after
  /// commit, whether ok or not, the writer is closed and every call returns kInternal.
  Status commit(std::string_view stage, int64_t schema_version = kSchemaVersion);

 private:
  friend class TableWriter;
  H5Writer() = default;
  static Result<H5Writer> open_temp(const std::filesystem::path& path, const WriterOptions& options, bool copy);
  Status write_numeric(std::string_view dataset, ColumnType type, const void* data, size_t n);
  Status write_vlen(std::string_view dataset, std::span<const std::string_view> values, bool is_table);
  Status write_attr(std::string_view object, std::string_view name, ColumnType type, const void* data,
                    size_t n, bool scalar);
  /// The same on an object already open (`object` names it in errors); `fresh`: the object is new,
  /// so no attribute of that name can exist (saves the lookup; a table's attributes are written on
  /// its open dataset, which measured ~10 % of a small rank's write time when opened by path).
  Status write_attr_on(Hid obj, std::string_view object, std::string_view name, ColumnType type,
                       const void* data, size_t n, bool scalar, bool fresh);
  Status set_string_array_attr_on(Hid obj, std::string_view object, std::string_view name,
                                  std::span<const std::string> values);
  Status check_open(std::string_view op);
  Status note(Status s);  ///< remembers the first error, returns s
  /// Allocates (fallocate) the disk room the commit's metadata flush can need, so a full disk is
  /// found while the file can still be discarded. kIo when there is no room.
  Status reserve_for_flush(uint64_t* reserved);
  /// Frees the room past the end of the file that the flush did not use.
  void release_reserve(uint64_t reserved);
  void abandon();

  H5Handle file_;
  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  WriterOptions options_;
  Status first_error_;
  bool closed_ = false;
  std::unordered_map<std::string, uint64_t> table_sizes_;  ///< string tables written, by dataset path
};

/// Writes one table through an H5Writer as ONE compound dataset at `table` (issue 17): each column
/// is a member, rows are records. Per column datasets cost HDF5 an object header, a link and a
/// chunk index each; at ~460 columns per rank that bookkeeping was most of a small rank's file and
/// write time. A compound table is what h5py and pandas read in one call:
///   df = pd.DataFrame(f["/kernels"][:])          # string-id columns: f["/strings"].asstr()[:][df.name]
///   t.column("start_ns", start).id_column("name", names);   // or one statement per column
///   ASCPROF_RETURN_IF_ERROR(t.finish());
/// Members in call order, numeric columns as their little-endian standard types, id columns uint32
/// (the table attributes `id_columns` and `id_tables` say which and into which string table),
/// string columns fixed-width NUL-padded UTF-8 (variable-length when padding every row to the
/// longest would more than quadruple the text). Tables of at most 2 KiB are stored compact (in the
/// object header); larger ones in ~1 MiB chunks of whole records, deflated with or without HDF5's
/// byte shuffle (a per-byte transpose of the records, so columns compress as columns), or stored
/// plain, as a probe of the first records shows best (table_writer.cpp). Attributes:
/// `columns` (names in order), `row_count`. H5Reader reads `<table>/<column>` as a column.
/// Column calls copy their values (callers often render a column into a temporary; see Values) and return
/// *this; the first error of any call is kept (status()) and returned by finish(), and later column
/// calls are skipped. Each column must have exactly `rows` entries and a unique name without '/'
/// (kInternal error otherwise, which also makes the writer refuse to commit).
class TableWriter {
 public:
  /// kCopy: column calls copy their values. kBorrow: numeric and id columns keep a pointer to the
  /// caller's values, which must then stay unchanged until finish() (a rank's model tables: a copy
  /// of a GB-class rank's kernel table would be its largest transient). Text is always copied.
  enum class Values : uint8_t { kCopy, kBorrow };
  TableWriter(H5Writer& writer, std::string_view table, uint64_t rows, Values values = Values::kCopy);
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  /// A numeric column.
  template <class T>
    requires kIsColumnElement<T>
  TableWriter& column(std::string_view name, std::span<const T> values) {
    if (begin_column(name, values.size())) add_numeric(name, column_type_of<T>(), values.data(), sizeof(T));
    return *this;
  }
  template <class T>
    requires kIsColumnElement<T>
  TableWriter& column(std::string_view name, const std::vector<T>& values) {
    return column(name, std::span<const T>(values));
  }
  /// A numeric column of `type` given as packed little-endian bytes (rows x the type's size), for
  /// callers that build columns without a C++ element type (schema::write_rows).
  TableWriter& packed_column(std::string_view name, ColumnType type, std::span<const unsigned char> bytes);
  /// A uint32 string-id column into the string table `table` (every id is checked to be < its
  /// size when this writer wrote that table).
  TableWriter& id_column(std::string_view name, std::span<const StrId> ids, std::string_view table = "/strings");
  /// A UTF-8 string column (invalid sequences and NUL become U+FFFD; the table's
  /// `repaired_strings` attribute counts them).
  TableWriter& string_column(std::string_view name, std::span<const std::string> values);
  TableWriter& string_column(std::string_view name, std::span<const std::string_view> values);
  /// Writes the dataset and its attributes (unless an error happened); returns status().
  Status finish();

  /// The first error of any call on this table (ok if none).
  const Status& status() const { return first_error_; }
  const std::string& group() const { return table_; }
  uint64_t rows() const { return rows_; }

 private:
  /// One column's values until finish(): numeric bytes, or cleaned text with end offsets.
  struct Column {
    std::string name;
    ColumnType type = ColumnType::kUInt8;  ///< kString for text columns
    std::vector<unsigned char> bytes;      ///< numeric: rows x element size
    std::string text;                      ///< text: the cleaned strings, end to end
    const unsigned char* borrowed = nullptr;  ///< Values::kBorrow: the caller's numeric values instead
    std::vector<uint64_t> ends;            ///< text: end offset of row i in `text`
    size_t longest = 0;                    ///< text: longest row in bytes
    std::string id_table;                  ///< id columns: the string table
  };
  /// Validates name and length; false (error kept) if the column must not be written.
  bool begin_column(std::string_view name, uint64_t n);
  void add_numeric(std::string_view name, ColumnType type, const void* data, size_t width);
  template <class Range>
  void add_text(std::string_view name, const Range& values);
  Status write_dataset();
  /// `columns`, `row_count`, `id_columns`/`id_tables`, `repaired_strings` on the open table object.
  Status write_attributes(Hid obj);
  void keep(const Status& s);

  H5Writer& writer_;
  std::string table_;
  uint64_t rows_;
  Values values_;
  std::vector<Column> columns_;
  int64_t repaired_ = 0;
  Status first_error_;
};

/// One external link of a link file: `link_name` in the new file -> `target_file`:`target_object`.
struct ExternalLink {
  std::string link_name;            ///< e.g. "/ranks/0"
  std::string target_file;          ///< e.g. "ranks/0.h5"; absolute paths are made relative to the link file's folder
  std::string target_object = "/";  ///< object inside the target file
};

/// Writes an analysis.h5-style file holding only external links (atomically, with the completion
/// attributes and `stage`). Relative target names keep the output folder movable.
Status write_link_file(const std::filesystem::path& path, std::span<const ExternalLink> links,
                       std::string_view stage = "links", const WriterOptions& options = {});

}  // namespace ascprof::store
