// The direct B-tree scan (importers/sqlite/btree_scan.hpp) against SQLite itself: every storage
// class, integer width, overflow chains, a multi-level tree, rows older than an added column; the
// tables and databases it must refuse; a damaged page stops it without a crash; and the kernel
// importer gives the same kernel table whether the PMU rows come through the scan or through SQLite.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <tuple>

#include "ascprof/importers/profiler_db.hpp"
#include "importers/sqlite/btree_scan.hpp"
#include "importers/sqlite/sqlite_file.hpp"
#include "mini_db.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;
using importers::db::DbValue;
using importers::db::SqliteFile;
using importers::db::TableScan;
using testing::ScratchDir;
using testing::sql_exec;

// Rows of every kind: ints of each stored width and sign, reals, short and overflowing text, blobs,
// NULLs; 3,000 rows so the table has interior pages; then a column added and rows that have it.
void write_mixed_table(const fs::path& db) {
  sql_exec(db, "CREATE TABLE T (id INTEGER PRIMARY KEY, a INTEGER, b REAL, c TEXT, d BLOB, e NUMERIC);");
  std::string sql = "BEGIN;";
  const int64_t ints[] = {0, 1, -1, 127, -128, 32767, -32768, 8388607, -8388608, 2147483647, -2147483648LL,
                          140737488355327LL, -140737488355328LL, std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min()};
  for (int r = 1; r <= 3000; ++r) {
    const int64_t a = ints[r % std::size(ints)];
    const std::string text = r % 97 == 0 ? std::string(5000 + r, 'x') : "name_" + std::to_string(r) + "\t\"q\"";
    sql += "INSERT INTO T VALUES (" + std::to_string(r * 3) + "," + (r % 11 == 0 ? "NULL" : std::to_string(a)) + "," +
           (r % 13 == 0 ? "NULL" : std::to_string(r) + ".25e-3") + ",'" + text + "'," +
           (r % 17 == 0 ? "x'00ff10'" : "NULL") + "," + (r % 2 ? std::to_string(r) : std::to_string(r) + ".5") + ");";
  }
  sql += "COMMIT; ALTER TABLE T ADD COLUMN f INTEGER; INSERT INTO T VALUES (9001, 5, 1.5, 'late', NULL, 7, 42);";
  sql_exec(db, sql);
}

void expect_same(const DbValue& a, const DbValue& b, int row, int col) {
  ASSERT_EQ(a.type, b.type) << "row " << row << " column " << col;
  EXPECT_EQ(a.i, b.i) << "row " << row << " column " << col;
  EXPECT_EQ(std::memcmp(&a.d, &b.d, sizeof a.d), 0) << "row " << row << " column " << col;
  EXPECT_EQ(a.text, b.text) << "row " << row << " column " << col;
}

TEST(TableScan, ReadsEveryRowAsSqliteDoes) {
  ScratchDir dir;
  const fs::path db = dir / "mixed.db";
  write_mixed_table(db);
  auto file = SqliteFile::open(db);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const std::vector<std::string> cols = {"f", "id", "a", "b", "c", "d", "e"};
  auto scan = TableScan::open(*file, "T", cols);
  ASSERT_TRUE(scan.ok()) << scan.status().to_string();
  auto q = file->prepare("SELECT f, id, a, b, c, d, e FROM T", "T");
  ASSERT_TRUE(q.ok());
  int rows = 0;
  while (q->step()) {
    ASSERT_TRUE(scan->next()) << "scan ended at row " << rows << ": " << scan->status().to_string();
    for (int c = 0; c < 7; ++c) {
      const DbValue expected = q->value(c);
      if (expected.type == SQLITE_BLOB)  // (Query::value keeps no blob bytes; the importers read none)
        EXPECT_EQ(scan->value(static_cast<size_t>(c)).type, SQLITE_BLOB);
      else
        expect_same(scan->value(static_cast<size_t>(c)), expected, rows, c);
    }
    ++rows;
  }
  EXPECT_FALSE(scan->next());
  ASCPROF_ASSERT_OK(scan->status());
  EXPECT_EQ(rows, 3001);
  // the conversions the importers use agree on the row values too
  DbValue text{SQLITE_TEXT, 0, 0, "123"};
  EXPECT_EQ(importers::db::value_i64(text, -7), 123);
  text.text = "12x";
  EXPECT_EQ(importers::db::value_i64(text, -7), -7);
  EXPECT_EQ(importers::db::value_i64({SQLITE_FLOAT, 0, 2.5, {}}, -7), 3);
  EXPECT_TRUE(std::isnan(importers::db::value_f64({SQLITE_NULL, 0, 0, {}})));
}

TEST(TableScan, RefusesWhatItCannotReadExactly) {
  ScratchDir dir;
  const fs::path db = dir / "other.db";
  sql_exec(db,
           "CREATE TABLE W (k INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID; INSERT INTO W VALUES (1, 2);"
           "CREATE TABLE D (v INTEGER DEFAULT 5); INSERT INTO D VALUES (1);");
  {
    auto file = SqliteFile::open(db);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(TableScan::open(*file, "W", {"v"}).status().code(), ErrorCode::kSchema);
    EXPECT_EQ(TableScan::open(*file, "D", {"v"}).status().code(), ErrorCode::kSchema);  // a DEFAULT
    EXPECT_EQ(TableScan::open(*file, "D", {"nope"}).status().code(), ErrorCode::kSchema);
    EXPECT_EQ(TableScan::open(*file, "ABSENT", {"v"}).status().code(), ErrorCode::kSchema);
  }
  const fs::path wal = dir / "wal.db";
  sql_exec(wal, "PRAGMA journal_mode=WAL; CREATE TABLE T (v INTEGER); INSERT INTO T VALUES (1);");
  auto file = SqliteFile::open(wal);
  ASSERT_TRUE(file.ok());
  const auto refused = TableScan::open(*file, "T", {"v"});
  EXPECT_EQ(refused.status().code(), ErrorCode::kSchema);
  EXPECT_NE(refused.status().message().find("rollback-journal"), std::string::npos) << refused.status().to_string();
}

TEST(TableScan, ADamagedPageStopsTheScanNamingTheTable) {
  ScratchDir dir;
  const fs::path db = dir / "damaged.db";
  write_mixed_table(db);
  // every page from the fifth on gets a page type no B-tree page has
  const auto size = fs::file_size(db);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    for (uint64_t page = 5; page * 4096 < size; page += 1) {
      f.seekp(static_cast<std::streamoff>(page * 4096));
      f.put('\x77');
    }
  }
  auto file = SqliteFile::open(db);
  ASSERT_TRUE(file.ok());
  auto scan = TableScan::open(*file, "T", {"id", "c"});
  if (!scan.ok()) {  // the root itself may be among the damaged pages
    EXPECT_EQ(scan.status().code(), ErrorCode::kParse) << scan.status().to_string();
    return;
  }
  int rows = 0;
  while (scan->next()) ++rows;
  EXPECT_LT(rows, 3001);
  EXPECT_EQ(scan->status().code(), ErrorCode::kParse);
  EXPECT_NE(scan->status().message().find("table T"), std::string::npos) << scan->status().to_string();
}

// The kernel importer reads TASK_PMU_INFO through the scan; in WAL mode the scan refuses and the
// importer reads it through SQLite. Both give the same kernel table, metrics included.
TEST(TableScan, PmuThroughTheScanEqualsPmuThroughSqlite) {
  ScratchDir dir;
  auto kernels = testing::mini_kernels(40);
  for (size_t i = 0; i < kernels.size(); ++i) kernels[i].mac_time_ns = static_cast<double>(i) * 12.5;
  const fs::path direct = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(direct, 0, kernels);
  fs::create_directories(dir / "wal");
  const fs::path wal = dir / "wal" / "ascend_pytorch_profiler_0.db";
  fs::copy_file(direct, wal);
  sql_exec(wal, "PRAGMA journal_mode=WAL;");
  auto read = [](const fs::path& db) {
    StringPool pool;
    Stats stats;
    model::KernelTable k;
    model::StepMarkerTable steps;
    EXPECT_TRUE(importers::import_db_kernels(db, pool, steps, k, stats).ok());
    std::vector<std::vector<double>> metrics;
    std::vector<std::string> names;
    for (const auto& m : k.metrics) {
      names.push_back(m.name);
      metrics.push_back(m.values);
    }
    return std::make_tuple(k.size(), names, metrics);
  };
  const auto a = read(direct), b = read(wal);
  EXPECT_EQ(std::get<0>(a), 40u);
  EXPECT_EQ(std::get<1>(a), std::get<1>(b));
  ASSERT_EQ(std::get<2>(a).size(), std::get<2>(b).size());
  ASSERT_FALSE(std::get<2>(a).empty());
  for (size_t m = 0; m < std::get<2>(a).size(); ++m)
    for (size_t r = 0; r < std::get<2>(a)[m].size(); ++r) {
      const double x = std::get<2>(a)[m][r], y = std::get<2>(b)[m][r];
      EXPECT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << std::get<1>(a)[m] << " row " << r;
    }
}

// A real database (db-cnn-level2 rank 0) imported whole, trace tables and kernels: once through the
// page scans, once from a WAL-mode copy the scans refuse (SQLite alone). Every table must agree,
// strings by text, and the string pools intern in the same order.
TEST(TableScan, RealDatabaseThroughTheScansEqualsThroughSqlite) {
  const fs::path real = testing::real_fixtures_dir() / "db-cnn-level2" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" /
                        "ascend_pytorch_profiler_0.db";
  if (!fs::exists(real)) GTEST_SKIP() << "real fixtures absent: " << real;
  ScratchDir dir;
  fs::create_directories(dir / "scan");
  fs::create_directories(dir / "sql");
  fs::copy_file(real, dir / "scan" / real.filename());
  fs::copy_file(real, dir / "sql" / real.filename());
  sql_exec(dir / "sql" / real.filename(), "PRAGMA journal_mode=WAL;");
  struct Loaded {
    StringPool pool;
    Stats stats;
    model::TraceTables trace;
    model::KernelTable k;
  };
  auto load = [](const fs::path& db, Loaded& l) {
    ASCPROF_ASSERT_OK(importers::import_db_trace(db, l.pool, l.trace, l.stats));
    ASCPROF_ASSERT_OK(importers::import_db_kernels(db, l.pool, l.trace.steps, l.k, l.stats));
  };
  Loaded a, b;
  load(dir / "scan" / real.filename(), a);
  load(dir / "sql" / real.filename(), b);
  ASSERT_GT(a.trace.host_ops.size(), 1000u);
  ASSERT_GT(a.trace.device_tasks.size(), 100u);
  ASSERT_GT(a.trace.flows.size(), 100u);
  ASSERT_EQ(a.pool.size(), b.pool.size());
  for (StrId i = 0; i < a.pool.size(); ++i) ASSERT_EQ(a.pool.view(i), b.pool.view(i)) << "string " << i;
  EXPECT_EQ(a.trace.host_ops.name, b.trace.host_ops.name);
  EXPECT_EQ(a.trace.host_ops.start_ns, b.trace.host_ops.start_ns);
  EXPECT_EQ(a.trace.host_ops.connection_id, b.trace.host_ops.connection_id);
  EXPECT_EQ(a.trace.host_ops.source_offset, b.trace.host_ops.source_offset);
  EXPECT_EQ(a.trace.device_tasks.name, b.trace.device_tasks.name);
  EXPECT_EQ(a.trace.device_tasks.task_type, b.trace.device_tasks.task_type);
  EXPECT_EQ(a.trace.device_tasks.start_ns, b.trace.device_tasks.start_ns);
  EXPECT_EQ(a.trace.device_tasks.connection_id, b.trace.device_tasks.connection_id);
  EXPECT_EQ(a.trace.flows.id, b.trace.flows.id);
  EXPECT_EQ(a.trace.flows.ts_ns, b.trace.flows.ts_ns);
  EXPECT_EQ(a.k.name, b.k.name);
  EXPECT_EQ(a.k.start_ns, b.k.start_ns);
  EXPECT_EQ(a.k.source_line, b.k.source_line);
  ASSERT_EQ(a.k.metrics.size(), b.k.metrics.size());
  for (size_t m = 0; m < a.k.metrics.size(); ++m) {
    EXPECT_EQ(a.k.metrics[m].name, b.k.metrics[m].name);
    for (size_t r = 0; r < a.k.size(); ++r) {
      const double x = a.k.metrics[m].values[r], y = b.k.metrics[m].values[r];
      ASSERT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << a.k.metrics[m].name << " row " << r;
    }
  }
  EXPECT_EQ(a.stats.to_json(), b.stats.to_json());
}

}  // namespace
}  // namespace ascprof
