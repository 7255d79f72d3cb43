#pragma once
// Private to the database importer: a read-only SQLite file and its prepared statements, with every
// failure turned into a Status naming the file, the table and SQLite's reason. Kept out of include/
// so sqlite3.h never reaches public headers.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"

namespace ascprof::importers::db {

/// One value of a row, typed as SQLite stores it (SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT,
/// SQLITE_BLOB, SQLITE_NULL); `text` lives as long as the row it came from.
struct DbValue {
  int type = SQLITE_NULL;
  int64_t i = 0;
  double d = 0;
  std::string_view text;
};

/// Integer value: a REAL rounded (`absent` if not finite or out of range), TEXT holding a whole
/// decimal number converted (PYTORCH_API declares its times TEXT), NULL and anything else `absent`.
int64_t value_i64(const DbValue& v, int64_t absent);
/// Real value: NaN for NULL, a BLOB, or TEXT that is not a number.
double value_f64(const DbValue& v);

/// One prepared query over one table. step() is true on a row, false when done or failed (then
/// status() says why, naming file and table).
class Query {
 public:
  Query() = default;
  Query(sqlite3_stmt* st, std::string file, std::string table) : st_(st), file_(std::move(file)), table_(std::move(table)) {}
  Query(Query&& o) noexcept;
  Query& operator=(Query&& o) noexcept;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();

  bool step();
  const Status& status() const { return status_; }
  void bind(int index, int64_t v) { sqlite3_bind_int64(st_, index, v); }
  void reset() { sqlite3_reset(st_); }

  bool null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  /// Column `c` of the current row (the TableScan reads values the same way: value_i64, value_f64).
  DbValue value(int c) const;
  /// value_i64 of column `c`.
  int64_t i64(int c, int64_t absent) const { return value_i64(value(c), absent); }
  double f64(int c) const { return value_f64(value(c)); }  ///< value_f64 of column `c`
  /// An integer count of a coarser unit scaled exactly (µs stored as INTEGER -> ns); a REAL is
  /// multiplied and rounded. `absent` for NULL or a value out of range.
  int64_t scaled_i64(int c, int64_t factor, int64_t absent) const;
  std::string_view text(int c) const;

 private:
  sqlite3_stmt* st_ = nullptr;
  std::string file_, table_;
  Status status_;
};

/// A database opened read-only and immutable: SQLite takes no lock and writes nothing (no journal,
/// no -wal/-shm file) next to the user's file, which may sit on a read-only file system.
class SqliteFile {
 public:
  static Result<SqliteFile> open(const std::filesystem::path& path);
  SqliteFile(SqliteFile&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }
  SqliteFile& operator=(SqliteFile&&) = delete;
  SqliteFile(const SqliteFile&) = delete;
  ~SqliteFile();

  const std::string& path() const { return path_; }
  bool has_table(std::string_view table) const;
  /// Column names of `table` in declaration order (empty when the table is absent).
  std::vector<std::string> columns(std::string_view table) const;
  Result<Query> prepare(const std::string& sql, std::string_view table) const;
  /// Rows of `table` (0 when absent or unreadable): to reserve a small table's rows before a scan.
  /// (count(*) walks the table's pages: on the trace tables, millions of rows, it cost more than the
  /// vector growth it saved.)
  size_t row_count(std::string_view table) const;
  /// META_DATA value of `name`, "" when absent (or no META_DATA table).
  std::string meta(std::string_view name) const;
  Status error(std::string_view table, std::string_view reason) const;

 private:
  SqliteFile(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// STRING_IDS resolved once per id into the rank's string pool. CANN ids are dense from 0, so they
/// index a vector; torch_npu's ids (from 1 << 28) go to a hash map.
class StringIds {
 public:
  StringIds(const SqliteFile& file, StringPool& pool, Stats& stats) : file_(file), pool_(pool), stats_(stats) {}
  Status init();
  /// The pooled string of `id`; "" (id 0 of the pool) for NULL; a dangling id is counted and read as "".
  StrId get(const Query& q, int column);
  /// The same for a value already read (a TableRows or TableScan column).
  StrId get(const DbValue& v) { return v.type == SQLITE_NULL ? StrId{0} : get_id(value_i64(v, -1)); }
  StrId get_id(int64_t id);
  std::string_view view(StrId s) const { return pool_.view(s); }
  /// Not ok when STRING_IDS itself could not be read (a damaged page): the caller fails the table.
  const Status& status() const { return lookup_.status(); }

 private:
  static constexpr uint32_t kUnset = 0xffffffffu;
  static constexpr int64_t kDenseLimit = int64_t{1} << 24;
  const SqliteFile& file_;
  StringPool& pool_;
  Stats& stats_;
  Query lookup_;
  std::vector<uint32_t> dense_;
  std::unordered_map<int64_t, StrId> sparse_;
};

/// SQL text for column `name` of `columns` when present, else "NULL" (older schema versions).
std::string column_or_null(const std::vector<std::string>& columns, std::string_view name, std::string_view prefix = "");
bool has_column(const std::vector<std::string>& columns, std::string_view name);

}  // namespace ascprof::importers::db
