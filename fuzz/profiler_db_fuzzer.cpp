// libFuzzer target: the SQLite importer (ascend_pytorch_profiler_N.db and analysis.db).
//
// The first byte picks what the rest is:
//   0  the bytes of a database file (damaged headers, pages, b-trees: SQLite's errors must become a
//      failed import naming file and table, never a crash);
//   1  an SQL script run into a fresh database first (tables with the profiler's names but any
//      columns, types and values: NULLs, text in integer columns, huge or negative times, dangling
//      string ids, duplicate keys), so the importer's own handling of values is what gets explored.
// Every import then runs on the file. Besides sanitizer findings it checks that every table's
// columns have one value per row, that a failed import leaves its table empty, and that nothing is
// created beside the database.
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "fuzz_check.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ascprof-dbfuzz-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const fs::path db = work_dir() / "ascend_pytorch_profiler_0.db";
  fs::remove(db);
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    std::FILE* f = std::fopen(db.c_str(), "wb");
    if (f == nullptr) return 0;
    std::fwrite(body.data(), 1, body.size(), f);
    std::fclose(f);
  } else {
    sqlite3* h = nullptr;
    if (sqlite3_open(db.c_str(), &h) == SQLITE_OK) {
      sqlite3_limit(h, SQLITE_LIMIT_LENGTH, 1 << 20);
      sqlite3_exec(h, "PRAGMA journal_mode=OFF;", nullptr, nullptr, nullptr);
      sqlite3_exec(h, body.c_str(), nullptr, nullptr, nullptr);  // partial scripts leave partial tables: fine
    }
    sqlite3_close(h);
  }
  const size_t before = entries(work_dir());

  ascprof::Stats stats;
  ascprof::StringPool pool;
  (void)ascprof::importers::read_profiler_db_info(db, stats);
  ascprof::model::TraceTables tr;
  const ascprof::Status ts = ascprof::importers::import_db_trace(db, pool, tr, stats);
  if (!ts.ok()) FUZZ_CHECK(tr.host_ops.size() == 0 && tr.device_tasks.size() == 0, "failed trace import left rows");
  FUZZ_CHECK(tr.host_ops.name.size() == tr.host_ops.size() && tr.host_ops.dur_ns.size() == tr.host_ops.size(),
             "host op columns length");
  FUZZ_CHECK(tr.device_tasks.name.size() == tr.device_tasks.size() && tr.device_tasks.stream_id.size() == tr.device_tasks.size(),
             "device task columns length");
  FUZZ_CHECK(tr.flows.id.size() == tr.flows.size() && tr.comm_plane_tasks.bandwidth_gbps.size() == tr.comm_plane_tasks.size(),
             "flow / plane columns length");
  ascprof::model::KernelTable k;
  const ascprof::Status ks = ascprof::importers::import_db_kernels(db, pool, tr.steps, k, stats);
  const size_t n = k.size();
  if (!ks.ok()) FUZZ_CHECK(n == 0, "failed kernel import left rows");
  FUZZ_CHECK(k.name.size() == n && k.type.size() == n && k.wait_ns.size() == n && k.source_table.size() == n &&
                 k.step_id.size() == n && k.input_shapes.size() == n && k.context_id.size() == n,
             "kernel columns length");
  for (size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(k.name[i] < pool.size() && k.input_shapes[i] < pool.size(), "string id");
    FUZZ_CHECK(k.dur_ns[i] >= 0 && k.wait_ns[i] >= 0, "negative duration or wait");
  }
  for (const auto& m : k.metrics) FUZZ_CHECK(m.values.size() == n, "metric column length");
  ascprof::model::CommStatTable c;
  const ascprof::Status cs = ascprof::importers::import_analysis_db_communication(db, pool, c, stats);
  if (!cs.ok()) FUZZ_CHECK(c.size() == 0, "failed communication import left rows");
  for (const auto& t : c.transport) FUZZ_CHECK(t.size_mb.size() == c.size(), "transport column length");
  ascprof::model::StepTraceTable s;
  const ascprof::Status ss = ascprof::importers::import_analysis_db_step_trace(db, s, stats);
  if (!ss.ok()) FUZZ_CHECK(s.size() == 0, "failed step trace import left rows");
  FUZZ_CHECK(s.computing.size() == s.size() && s.preparing.size() == s.size(), "step trace column length");
  FUZZ_CHECK(entries(work_dir()) == before, "a file appeared beside the database");
  (void)stats.to_json();
  return 0;
}
