#pragma once
// Private to the database importer: a table's rows read straight from the database file's B-tree
// pages (the SQLite file format, https://www.sqlite.org/fileformat2.html), in rowid order, as
// `SELECT columns FROM table` returns them.
//
// Why: TASK_PMU_INFO holds one row per metric per kernel (25 per kernel with aic_metrics), and
// stepping it through SQLite's VM cost ~0.3 us a row here even without reading a column (issue 19:
// 2.5 M rows/s against the ~50 M a 2 M kernel rows/s ingest needs). Decoding the leaf pages
// ourselves is a varint walk per row.
//
// Only what the scan is sure of: a rowid table of a UTF-8 database in rollback-journal mode whose
// wanted columns have no DEFAULT (a row written before ALTER TABLE ADD COLUMN reads as NULL here,
// its default in SQLite). Anything else, and any page that does not parse (bounds, page types,
// cycles, overflow chains), is a failure the caller answers by reading the table through SQLite,
// whose result and error messages stay the reference.
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"
#include "sqlite_file.hpp"

namespace ascprof::importers::db {

/// The rowid a `column = rowid` join matches for value `v`: an integer, or a real equal to one
/// (SQLite compares them numerically); false for anything else (NULL, text, a fraction).
bool as_rowid(const DbValue& v, int64_t& rowid);

class TableScan {
 public:
  /// Prepares a scan of `columns` of `table` ("rowid" names the row's rowid). kSchema when the table
  /// or a column is absent, or the table is one the scan does not read (see the file comment): read
  /// it through SQLite then.
  static Result<TableScan> open(const SqliteFile& file, std::string_view table, const std::vector<std::string>& columns);

  TableScan(TableScan&&) noexcept = default;
  TableScan& operator=(TableScan&&) = delete;

  /// The next row; false at the end, or when a page does not parse (status() then says where).
  bool next();
  const Status& status() const { return status_; }
  /// The row's value of the `i`-th wanted column.
  const DbValue& value(size_t i) const { return values_[i]; }

 private:
  TableScan() = default;
  struct Level {
    uint32_t page = 0;
    uint32_t cell = 0, cells = 0;
    std::string bytes;  // the interior page
  };
  bool fail(const std::string& why);
  bool read_page(uint32_t page, std::string& out);
  bool descend(uint32_t page);
  bool decode_cell(uint32_t offset);
  bool decode_record(std::string_view payload, int64_t rowid);

  struct Fd {  // the database file, closed with the scan
    int fd = -1;
    Fd() = default;
    Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    Fd& operator=(Fd&&) = delete;
    ~Fd();
  };
  Fd fd_;
  std::string path_, table_;
  uint32_t page_size_ = 0, usable_ = 0, page_count_ = 0;
  uint64_t pages_read_ = 0;
  static constexpr int kRowid = INT32_MIN;  // a wanted "rowid"
  std::vector<int> wanted_;  // per wanted column: its position in the record (-1 - it for the rowid alias), or kRowid
  std::vector<Level> stack_;    // interior pages from the root down
  std::string leaf_;            // the current leaf page
  uint32_t leaf_page_ = 0, leaf_cell_ = 0, leaf_cells_ = 0;
  std::string overflow_;        // a payload assembled from overflow pages
  std::vector<uint64_t> serial_;   // the record's serial types
  std::vector<uint64_t> offsets_;  // and each value's offset in the payload (one more: its end)
  std::vector<DbValue> values_;
  Status status_;
  bool done_ = false;
};

/// A table's rows as `SELECT columns FROM table` returns them: through the page scan when it reads
/// the table (and `allow_scan`), through SQLite otherwise. The same values either way; a scan that
/// stops on a page it cannot parse reports it (scan_failed()), and its caller redoes the import
/// through SQLite alone, whose answer is the reference.
class TableRows {
 public:
  static Result<TableRows> open(const SqliteFile& file, std::string_view table, const std::vector<std::string>& columns,
                                bool allow_scan);
  bool step();
  const Status& status() const;
  bool scan_failed() const { return scan_.has_value() && !scan_->status().ok(); }
  DbValue value(int c) const { return scan_ ? scan_->value(static_cast<size_t>(c)) : query_.value(c); }
  int64_t i64(int c, int64_t absent) const { return value_i64(value(c), absent); }
  bool null(int c) const { return value(c).type == SQLITE_NULL; }

 private:
  std::optional<TableScan> scan_;
  Query query_;
};

}  // namespace ascprof::importers::db
