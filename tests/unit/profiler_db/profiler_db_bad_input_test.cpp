// Bad databases: each fails with file, table and reason (or counts and skips the bad row), and
// nothing is ever written next to the database.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include "ascprof/importers/profiler_db.hpp"
#include "mini_db.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// Reads the database the way the rank job does; returns the first failure.
Status import_all(const fs::path& db, StringPool& pool, model::KernelTable& k, Stats& stats) {
  auto info = importers::read_profiler_db_info(db, stats);
  if (!info.ok()) return info.status();
  model::TraceTables tr;
  ASCPROF_RETURN_IF_ERROR(importers::import_db_trace(db, pool, tr, stats));
  return importers::import_db_kernels(db, pool, tr.steps, k, stats);
}

TEST(ProfilerDbBadInput, MiniDatabaseReadsBackExactly) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_3.db";
  auto kernels = testing::mini_kernels(10);
  testing::MiniComm comm;
  comm.start_ns = kernels[4].start_ns;  // same start as a compute row: compute first
  comm.dur_ns = 500;
  testing::write_mini_db(db, 3, kernels, {comm}, {{{7, kernels[0].start_ns, kernels[8].start_ns}}});
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  ASCPROF_ASSERT_OK(import_all(db, pool, k, stats));
  ASSERT_EQ(k.size(), 11u);
  EXPECT_EQ(pool.view(k.name[4]), "Add_2");
  EXPECT_EQ(pool.view(k.name[5]), "hcom_allReduce__1_0_1");
  EXPECT_EQ(pool.view(k.accelerator_core[5]), "COMMUNICATION");  // schema 1.2
  EXPECT_EQ(k.header.block_column, "Block Num");
  EXPECT_EQ(pool.view(k.op_state[0]), "dynamic");
  EXPECT_EQ(pool.view(k.input_shapes[0]), "8,16");
  EXPECT_EQ(k.wait_ns[1], 1000);           // 2 µs apart, 1 µs long
  EXPECT_EQ(k.wait_ns[5], 0);              // starts with row 4: no gap
  EXPECT_EQ(k.step_id[0], 7);
  EXPECT_EQ(k.step_id[10], model::kAbsentI32);  // after the last step's end
  const int mac = k.metric_index("aic_mac_time(us)");
  ASSERT_GE(mac, 0);
  EXPECT_DOUBLE_EQ(k.metrics[static_cast<size_t>(mac)].values[1], 0.5);
  EXPECT_TRUE(std::isnan(k.metrics[static_cast<size_t>(mac)].values[0]));
}

TEST(ProfilerDbBadInput, NotSqliteFailsWithFileAndReason) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_text(db, "this is a CSV file,not a database\n1,2\n");
  Stats stats;
  auto info = importers::read_profiler_db_info(db, stats);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kParse);
  EXPECT_NE(info.status().message().find(db.string()), std::string::npos);
  EXPECT_NE(info.status().message().find("not an SQLite database"), std::string::npos) << info.status().message();
}

TEST(ProfilerDbBadInput, EmptyAndMissingFiles) {
  ScratchDir dir;
  const fs::path empty = dir / "ascend_pytorch_profiler_0.db";
  testing::write_text(empty, "");
  Stats stats;
  auto info = importers::read_profiler_db_info(empty, stats);
  ASSERT_FALSE(info.ok());  // an empty file is a valid empty database to SQLite: no TASK table
  EXPECT_NE(info.status().message().find("table TASK"), std::string::npos) << info.status().message();
  auto missing = importers::read_profiler_db_info(dir / "nope.db", stats);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
}

TEST(ProfilerDbBadInput, TruncatedFileFailsTheImportNamingTheTable) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(db, 0, testing::mini_kernels(4000));
  const auto size = fs::file_size(db);
  fs::resize_file(db, size / 2);
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  const Status st = import_all(db, pool, k, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(db.string()), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("table "), std::string::npos) << st.message();
  EXPECT_EQ(k.size(), 0u);
}

TEST(ProfilerDbBadInput, CorruptPageInTheMiddleOfTask) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  // TASK first, alone, so its pages are the middle of the file: build, then damage one page.
  testing::write_mini_db(db, 0, testing::mini_kernels(6000));
  const auto pages = fs::file_size(db) / 4096;
  ASSERT_GT(pages, 20u);
  // TASK's leaf pages were written first after the schema: the page at 1/4 of the file is one.
  testing::damage_bytes(db, (pages / 4) * 4096, 4096);
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  const Status st = import_all(db, pool, k, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kParse);
  EXPECT_NE(st.message().find("malformed"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("table "), std::string::npos) << st.message();
}

TEST(ProfilerDbBadInput, MissingTableOrColumnIsASchemaError) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(db, 0, testing::mini_kernels(4));
  testing::sql_exec(db, "ALTER TABLE COMPUTE_TASK_INFO RENAME COLUMN opType TO operatorType;");
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  Status st = import_all(db, pool, k, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kSchema);
  EXPECT_NE(st.message().find("table COMPUTE_TASK_INFO: missing column 'opType'"), std::string::npos) << st.message();

  testing::write_mini_db(db, 0, testing::mini_kernels(4));
  testing::sql_exec(db, "DROP TABLE STRING_IDS;");
  st = import_all(db, pool, k, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("table STRING_IDS: missing"), std::string::npos) << st.message();

  testing::write_mini_db(db, 0, testing::mini_kernels(4));
  testing::sql_exec(db, "DROP TABLE TASK;");
  st = import_all(db, pool, k, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("table TASK"), std::string::npos) << st.message();
}

TEST(ProfilerDbBadInput, UnknownSchemaVersions) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(db, 0, testing::mini_kernels(4), {}, {}, "2.0.0");
  Stats stats;
  auto info = importers::read_profiler_db_info(db, stats);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("schema version 2.0.0 is not supported"), std::string::npos);
  // A newer minor version is read by column name, with a warning.
  testing::write_mini_db(db, 0, testing::mini_kernels(4), {}, {}, "1.7.0");
  Stats s2;
  ASCPROF_ASSERT_OK(importers::read_profiler_db_info(db, s2));
  EXPECT_EQ(s2.count(Stat::db_newer_schema), 1u);
}

TEST(ProfilerDbBadInput, DanglingStringIdsAndBadRowsAreCountedNotFatal) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(db, 0, testing::mini_kernels(6));
  // a kernel whose name id is not in STRING_IDS, a task whose end is missing, and PMU rows of a task
  // that is no kernel row (between two rows of a real one: the lookup of the next row must not reuse it)
  testing::sql_exec(db, "UPDATE COMPUTE_TASK_INFO SET name = 999999 WHERE globalTaskId = 2;"
                        "UPDATE TASK SET endNs = NULL WHERE globalTaskId = 3;"
                        "INSERT INTO TASK_PMU_INFO VALUES(777, 0, 5.0);"
                        "INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, value FROM TASK_PMU_INFO WHERE globalTaskId = 2;");
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  ASCPROF_ASSERT_OK(import_all(db, pool, k, stats));
  EXPECT_EQ(k.size(), 5u);
  EXPECT_EQ(pool.view(k.name[1]), "");
  EXPECT_GE(stats.count(Stat::db_dangling_string_id), 1u);  // the kernel row, and the device task it names
  EXPECT_GE(stats.count(Stat::db_bad_row), 1u);
  EXPECT_EQ(stats.count(Stat::db_pmu_orphan), 1u);  // task 777
  EXPECT_NE(stats.to_json().find("id 999999"), std::string::npos);
}

TEST(ProfilerDbBadInput, LockedDatabaseIsReadAndNothingIsWrittenBesideIt) {
  ScratchDir dir;
  const fs::path db = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(db, 0, testing::mini_kernels(50));
  const auto before = listing(dir.path());
  // Another process holds an exclusive lock (a profiler still writing): an immutable reader takes no lock.
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE;", nullptr, nullptr, nullptr), SQLITE_OK);
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  const Status st = import_all(db, pool, k, stats);
  sqlite3_exec(writer, "ROLLBACK;", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  ASCPROF_ASSERT_OK(st);
  EXPECT_EQ(k.size(), 50u);
  // no -journal, -wal or -shm file was created by the reader
  EXPECT_EQ(listing(dir.path()), before);
}

TEST(ProfilerDbBadInput, ReadOnlyFileSystem) {
  ScratchDir dir;
  const fs::path mnt = dir / "ro";
  fs::create_directories(mnt);
  const fs::path src = dir / "ascend_pytorch_profiler_0.db";
  testing::write_mini_db(src, 0, testing::mini_kernels(20));
  // A read-only bind mount needs root; elsewhere a read-only folder is the nearest thing.
  const std::string bind = "mount --bind " + dir.path().string() + " " + mnt.string() + " 2>/dev/null && mount -o remount,ro,bind " +
                           mnt.string() + " 2>/dev/null";
  if (std::system(bind.c_str()) != 0) {
    std::system(("umount " + mnt.string() + " 2>/dev/null").c_str());
    GTEST_SKIP() << "cannot make a read-only mount here (not root)";
  }
  StringPool pool;
  Stats stats;
  model::KernelTable k;
  const Status st = import_all(mnt / "ascend_pytorch_profiler_0.db", pool, k, stats);
  std::system(("umount " + mnt.string()).c_str());
  ASCPROF_ASSERT_OK(st);
  EXPECT_EQ(k.size(), 20u);
}

}  // namespace
}  // namespace ascprof
