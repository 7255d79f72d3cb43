// The db export of the synthetic generator (--export db|both): ascend_pytorch_profiler_<rank>.db and
// analysis.db hold the same data as the text files. Read back through the sqlite3 C API and compared
// with kernel_details.csv / step_trace_time.csv of the same capture.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;

// kernel_details columns used below
constexpr size_t kColStep = 0, kColTaskId = 3, kColName = 5, kColType = 6, kColCore = 8, kColStart = 9, kColDur = 10,
                 kColBlock = 12, kColMix = 13, kColInShapes = 15, kColOutShapes = 18, kColMacRatio = 25,
                 kColAivTime = 35, kColCube = 46;

class Db {
 public:
  explicit Db(const fs::path& p) {
    EXPECT_EQ(sqlite3_open_v2(p.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << p;
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  /// Every row of `sql` as text cells (NULL as "<null>").
  std::vector<std::vector<std::string>> rows(const std::string& sql) const {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db_);
    if (st == nullptr) return out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> r;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
        r.emplace_back(t != nullptr ? t : "<null>");
      }
      out.push_back(std::move(r));
    }
    sqlite3_finalize(st);
    return out;
  }
  double number(const std::string& sql) const {
    sqlite3_stmt* st = nullptr;
    double v = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
  }

 private:
  sqlite3* db_ = nullptr;
};

// "1764246877073569.640\t" -> 1764246877073569640 (the exact integer ns the text was printed from)
int64_t us_to_ns(std::string t) {
  while (!t.empty() && (t.back() == '\t' || t.back() == ' ')) t.pop_back();
  const size_t dot = t.find('.');
  if (dot == std::string::npos) return std::stoll(t) * 1000;
  std::string frac = t.substr(dot + 1) + "000";
  return std::stoll(t.substr(0, dot)) * 1000 + std::stoll(frac.substr(0, 3));
}

SynthOptions options(const std::string& scenario, const fs::path& out, const std::string& format) {
  SynthOptions o;
  o.scenario = scenario;
  o.out_dir = out;
  o.ranks = 4;
  o.steps = 2;
  o.seed = 11;
  o.export_format = format;
  return o;
}

SynthSummary generate(const SynthOptions& o) {
  auto r = generate_capture(o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : SynthSummary{};
}

std::vector<std::vector<std::string>> kernel_rows(const fs::path& folder) {
  auto rows = testutil::parse_csv(testutil::slurp(folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"));
  if (!rows.empty()) rows.erase(rows.begin());
  return rows;
}

std::vector<fs::path> files_under(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root));
  std::sort(out.begin(), out.end());
  return out;
}

// The kernel_details rows rebuilt from the database: compute rows (TASK + COMPUTE_TASK_INFO + pivoted
// TASK_PMU_INFO) and communication rows (COMMUNICATION_OP), ordered by start, compute first on a tie.
const char* const kRebuild = R"(
  SELECT * FROM (
    SELECT t.startNs AS s, 0 AS k, t.globalTaskId AS id, n.value, ty.value, co.value, t.endNs - t.startNs, c.blockNum,
           c.mixBlockNum, ish.value, osh.value, t.taskId,
           (SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS m ON m.id = p.name
             WHERE p.globalTaskId = t.globalTaskId AND m.value = 'aic_mac_ratio'),
           (SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS m ON m.id = p.name
             WHERE p.globalTaskId = t.globalTaskId AND m.value = 'aiv_total_time'),
           (SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS m ON m.id = p.name
             WHERE p.globalTaskId = t.globalTaskId AND m.value = 'cube_utilization'),
           (SELECT count(*) FROM TASK_PMU_INFO p WHERE p.globalTaskId = t.globalTaskId)
      FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId)
      JOIN STRING_IDS n ON n.id = c.name JOIN STRING_IDS ty ON ty.id = c.opType JOIN STRING_IDS co ON co.id = c.taskType
      JOIN STRING_IDS ish ON ish.id = c.inputShapes JOIN STRING_IDS osh ON osh.id = c.outputShapes
    UNION ALL
    SELECT o.startNs, 1, o.opId, n.value, ty.value, 'COMMUNICATION', o.endNs - o.startNs, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, 0
      FROM COMMUNICATION_OP o JOIN STRING_IDS n ON n.id = o.opName JOIN STRING_IDS ty ON ty.id = o.opType)
  ORDER BY s, k, id)";

TEST(SynthDb, BothExportsHoldTheSameKernelRows) {
  testing::ScratchDir dir("synth_db_both");
  SynthOptions o = options("dense_gqa", dir.path(), "both");
  o.faults = {"clock_offset:1", "cube_underused:2", "aicpu_fallback:3"};
  const SynthSummary s = generate(o);
  ASSERT_EQ(s.ranks.size(), 4u);
  for (const RankSummary& r : s.ranks) {
    const fs::path out = r.folder / "ASCEND_PROFILER_OUTPUT";
    const auto csv = kernel_rows(r.folder);
    ASSERT_EQ(csv.size(), r.kernel_rows);
    Db db(out / ("ascend_pytorch_profiler_" + std::to_string(r.rank_id) + ".db"));
    const auto rows = db.rows(kRebuild);
    ASSERT_EQ(rows.size(), csv.size()) << r.folder;
    std::map<int64_t, std::pair<int64_t, int64_t>> steps;  // STEP_TIME
    for (const auto& st : db.rows("SELECT id, startNs, endNs FROM STEP_TIME"))
      steps[std::stoll(st[0])] = {std::stoll(st[1]), std::stoll(st[2])};
    EXPECT_EQ(steps.size(), 2u);
    int64_t prev_end = -1;
    size_t metric_rows = 0;
    for (size_t i = 0; i < csv.size(); ++i) {
      const auto& c = csv[i];
      const auto& d = rows[i];
      const int64_t start = us_to_ns(c[kColStart]), dur = us_to_ns(c[kColDur]);
      EXPECT_EQ(std::stoll(d[0]), start) << "row " << i;
      EXPECT_EQ(d[3], c[kColName]) << "row " << i;
      EXPECT_EQ(d[4], c[kColType]) << "row " << i;
      EXPECT_EQ(d[5], c[kColCore]) << "row " << i;
      EXPECT_EQ(std::stoll(d[6]), dur) << "row " << i;
      // an importer fills Step Id from the STEP_TIME window holding the start
      const auto& w = steps[std::stoll(c[kColStep])];
      EXPECT_TRUE(w.first <= start && start <= w.second) << "row " << i;
      // Wait Time = the gap to the previous row's end
      const int64_t wait = us_to_ns(c[11]);
      EXPECT_EQ(wait, prev_end < 0 ? 0 : std::max<int64_t>(0, start - prev_end)) << "row " << i;
      prev_end = start + dur;
      if (c[kColCore] == "COMMUNICATION") continue;
      EXPECT_EQ(d[7], c[kColBlock]) << "row " << i;
      EXPECT_EQ(d[8], c[kColMix]) << "row " << i;
      EXPECT_EQ(d[9], c[kColInShapes]) << "row " << i;
      EXPECT_EQ(d[10], c[kColOutShapes]) << "row " << i;
      EXPECT_EQ(d[11], c[kColTaskId]) << "row " << i;
      if (c[kColMacRatio] == "N/A") {
        EXPECT_EQ(d[15], "0") << "AI_CPU rows have no metric rows (row " << i << ")";
        continue;
      }
      ++metric_rows;
      EXPECT_EQ(d[15], "25") << "row " << i;
      EXPECT_EQ(std::stod(d[12]), std::stod(c[kColMacRatio])) << "row " << i;
      EXPECT_EQ(std::stod(d[13]) / 1000.0, std::stod(c[kColAivTime])) << "ns in the db, us in the text (row " << i << ")";
      EXPECT_EQ(std::stod(d[14]), std::stod(c[kColCube])) << "row " << i;
    }
    EXPECT_GT(metric_rows, 0u);
    // fixed tables and metadata
    EXPECT_EQ(db.rows("SELECT value FROM META_DATA WHERE name = 'SCHEMA_VERSION'"),
              (std::vector<std::vector<std::string>>{{"1.2.0"}}));
    EXPECT_EQ(db.rows("SELECT rankId, deviceId FROM RANK_DEVICE_MAP"),
              (std::vector<std::vector<std::string>>{{std::to_string(r.rank_id), std::to_string(r.device_id)}}));
    Json md;
    std::string err;
    ASSERT_TRUE(testutil::parse_json(testutil::slurp(r.folder / "profiler_metadata.json"), md, err)) << err;
    const auto pgi = db.rows("SELECT value FROM META_DATA WHERE name = 'parallel_group_info'");
    ASSERT_EQ(pgi.size(), 1u);
    Json pj;
    ASSERT_TRUE(testutil::parse_json(pgi[0][0], pj, err)) << err;
    EXPECT_EQ(pj.members.size(), md.at("parallel_group_info").members.size());
    // every node launch owns one device task; torch ops reach it through CONNECTION_IDS
    EXPECT_EQ(db.number("SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO USING (globalTaskId) WHERE NOT EXISTS "
                        "(SELECT 1 FROM CANN_API a WHERE a.connectionId = t.connectionId AND a.type = 10000) OR NOT EXISTS "
                        "(SELECT 1 FROM CONNECTION_IDS x WHERE x.connectionId = t.connectionId)"),
              0.0);
    // analysis.db: one StepTraceTime row per step_trace_time.csv row, same numbers
    Db ana(out / "analysis.db");
    auto st_csv = testutil::parse_csv(testutil::slurp(out / "step_trace_time.csv"));
    st_csv.erase(st_csv.begin());
    const auto st_db = ana.rows("SELECT * FROM StepTraceTime");
    ASSERT_EQ(st_db.size(), st_csv.size());
    for (size_t i = 0; i < st_db.size(); ++i)
      for (size_t k = 0; k < st_csv[i].size(); ++k) EXPECT_EQ(std::stod(st_db[i][k]), std::stod(st_csv[i][k])) << i << "," << k;
    EXPECT_GT(ana.number("SELECT count(*) FROM CommAnalyzerTime"), 0.0);
    EXPECT_EQ(ana.number("SELECT count(*) FROM CommAnalyzerMatrix"), 0.0);
  }
}

// Both exports describe the same device tasks: the Ascend Hardware X events of trace_view.json (compute
// kernels, EVENT_RECORD and, as in real captures, every HCCL plane task on its stream) are the TASK rows,
// field for field; each plane task is on its Plane thread too, with the same times, and its op has a
// Node@launch (CANN_API type 10000) with the tasks' connection id.
TEST(SynthDb, AscendHardwareEventsAreTheTaskRows) {
  const std::pair<const char*, int> kCases[] = {{"glm5_mtp", 0}, {"training", 2}};  // (scenario, pp)
  for (const auto& [scenario, pp] : kCases) {
    SCOPED_TRACE(scenario);
    testing::ScratchDir dir("synth_db_tasks");
    SynthOptions o = options(scenario, dir.path(), "both");
    o.pp = pp;
    if (std::string(scenario) == "glm5_mtp") o.layers = 8;
    o.faults = {"clock_offset:1"};
    const SynthSummary s = generate(o);
    ASSERT_EQ(s.ranks.size(), 4u);
    for (const RankSummary& r : s.ranks) {
      SCOPED_TRACE("rank " + std::to_string(r.rank_id));
      const fs::path out = r.folder / "ASCEND_PROFILER_OUTPUT";
      Json tv;
      std::string err;
      ASSERT_TRUE(testutil::parse_json(testutil::slurp(out / "trace_view.json"), tv, err)) << err;
      std::map<double, std::string> process;
      std::map<std::pair<double, double>, std::string> thread;
      for (const Json& e : tv.items) {
        if (e.at("ph").text != "M") continue;
        if (e.at("name").text == "process_name") process[e.at("pid").num] = e.at("args").at("name").text;
        if (e.at("name").text == "thread_name") thread[{e.at("pid").num, e.at("tid").num}] = e.at("args").at("name").text;
      }
      // (stream, task id, start ns, dur ns, task type, connection id or "<null>")
      using Task = std::tuple<std::string, std::string, int64_t, int64_t, std::string, std::string>;
      std::multiset<Task> hw, planes, hw_on_plane_stream;
      for (const Json& e : tv.items) {
        if (e.at("ph").text != "X") continue;
        const std::string& p = process[e.at("pid").num];
        const int64_t start = us_to_ns(e.at("ts").text), dur = us_to_ns(e.at("dur").text);
        const Json& a = e.at("args");
        if (p == "Ascend Hardware") {
          const std::string stream = a.at("Physic Stream Id").text;
          EXPECT_EQ(thread[std::make_pair(e.at("pid").num, e.at("tid").num)], "Stream " + stream);
          const Json* cid = a.find("connection_id");
          const Task t{stream, a.at("Task Id").text, start, dur, a.at("Task Type").text,
                       cid != nullptr ? cid->text : "<null>"};
          hw.insert(t);
          if (stream == "5") {
            EXPECT_EQ(e.at("name").text, a.at("Task Type").text);
            EXPECT_EQ(a.at("Subtask Id").text, "4294967295");
            hw_on_plane_stream.insert(t);
          }
        } else if (p == "Communication" && thread[{e.at("pid").num, e.at("tid").num}].rfind("Plane ", 0) == 0) {
          planes.insert({a.at("stream id").text, a.at("task id").text, start, dur, a.at("task type").text, ""});
        }
      }
      Db db(out / ("ascend_pytorch_profiler_" + std::to_string(r.rank_id) + ".db"));
      std::multiset<Task> rows;
      for (const auto& t : db.rows("SELECT t.streamId, t.taskId, t.startNs, t.endNs - t.startNs, s.value, t.connectionId "
                                   "FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType"))
        rows.insert({t[0], t[1], std::stoll(t[2]), std::stoll(t[3]), t[4], t[5]});
      EXPECT_EQ(hw.size(), rows.size());
      EXPECT_TRUE(hw == rows) << "the Ascend Hardware events differ from the TASK rows";
      // the plane tasks: on stream 5 in Ascend Hardware, one for one (the connection id aside)
      ASSERT_GT(planes.size(), 0u);
      EXPECT_EQ(db.number("SELECT count(*) FROM COMMUNICATION_TASK_INFO"), static_cast<double>(planes.size()));
      std::multiset<Task> stripped;
      for (Task t : hw_on_plane_stream) {
        std::get<5>(t).clear();
        stripped.insert(t);
      }
      EXPECT_TRUE(stripped == planes) << "every plane task once on Stream 5";
      // an HCCL op's Node@launch owns its plane tasks, as a kernel's owns its task
      EXPECT_EQ(db.number("SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO USING (globalTaskId) WHERE NOT EXISTS "
                          "(SELECT 1 FROM CANN_API a WHERE a.connectionId = t.connectionId AND a.type = 10000)"),
                0.0);
    }
  }
}

TEST(SynthDb, DbOnlyWritesNoTextExportsAndTextStaysTheSame) {
  testing::ScratchDir t("synth_db_t"), b("synth_db_b"), d("synth_db_d");
  SynthOptions o = options("training", t.path(), "text");
  o.pp = 2;
  generate(o);
  o.out_dir = b.path();
  o.export_format = "both";
  const SynthSummary sb = generate(o);
  o.out_dir = d.path();
  o.export_format = "db";
  const SynthSummary sd = generate(o);

  // both = text + the two databases; every text file byte-identical
  const auto tf = files_under(t.path()), bf = files_under(b.path()), df = files_under(d.path());
  size_t dbs = 0;
  for (const auto& f : bf) {
    if (f.extension() == ".db") {
      ++dbs;
      continue;
    }
    EXPECT_TRUE(std::binary_search(tf.begin(), tf.end(), f)) << f;
    if (f.filename() != "ground_truth.json") {
      EXPECT_EQ(testutil::slurp(t.path() / f), testutil::slurp(b.path() / f)) << f;
    }
  }
  EXPECT_EQ(dbs, 2u * 4);
  EXPECT_EQ(bf.size(), tf.size() + dbs);

  // db: profiler_info and the two databases per rank, nothing else; the databases equal those of "both"
  std::set<std::string> names;
  for (const auto& f : df) {
    names.insert(f.filename().string());
    if (f.extension() == ".db") {
      EXPECT_EQ(testutil::slurp(d.path() / f), testutil::slurp(b.path() / f)) << f;
    }
  }
  EXPECT_EQ(df.size(), 4u * 3 + 1);
  for (const char* text : {"kernel_details.csv", "trace_view.json", "communication.json", "step_trace_time.csv",
                           "op_statistic.csv", "api_statistic.csv", "profiler_metadata.json"})
    EXPECT_EQ(names.count(text), 0u) << text;
  EXPECT_EQ(names.count("profiler_info_0.json"), 1u);
  EXPECT_EQ(names.count("ascend_pytorch_profiler_3.db"), 1u);
  EXPECT_EQ(names.count("analysis.db"), 1u);
  for (const RankSummary& r : sd.ranks) {
    EXPECT_EQ(r.kernel_rows, sb.ranks[static_cast<size_t>(r.rank_id)].kernel_rows);
    Json info;
    std::string err;
    ASSERT_TRUE(testutil::parse_json(
        testutil::slurp(r.folder / ("profiler_info_" + std::to_string(r.rank_id) + ".json")), info, err));
    const Json& et = info.at("config").at("experimental_config").at("_export_type");
    ASSERT_EQ(et.items.size(), 1u);
    EXPECT_EQ(et.items[0].text, "db");
    Db db(r.folder / "ASCEND_PROFILER_OUTPUT" / ("ascend_pytorch_profiler_" + std::to_string(r.rank_id) + ".db"));
    EXPECT_EQ(db.number("SELECT count(*) FROM META_DATA WHERE name IN ('parallel_group_info', 'distributed_args')"), 2.0);
  }
  Json gt;
  std::string err;
  ASSERT_TRUE(testutil::parse_json(testutil::slurp(sd.ground_truth), gt, err)) << err;
  EXPECT_EQ(gt.at("export_format").text, "db");
}

TEST(SynthDb, SameSeedSameDbBytes) {
  testing::ScratchDir a("synth_db_a"), b("synth_db_b2"), c("synth_db_c");
  SynthOptions o = options("moe_mla_decode", a.path(), "db");
  o.faults = {"slow_collective:1", "interior_island:2"};
  generate(o);
  o.out_dir = b.path();
  o.threads = 3;  // parallel writing must not change a byte
  generate(o);
  o.out_dir = c.path();
  o.seed = 12;
  o.threads = 1;
  generate(o);
  const auto fa = files_under(a.path());
  EXPECT_EQ(fa, files_under(b.path()));
  size_t dbs = 0;
  for (const auto& f : fa) {
    EXPECT_EQ(testutil::slurp(a.path() / f), testutil::slurp(b.path() / f)) << f;
    if (f.extension() == ".db") ++dbs;
  }
  EXPECT_EQ(dbs, 8u);
  const auto fc = files_under(c.path());
  ASSERT_FALSE(fc.empty());
  const auto db_of = [](const std::vector<fs::path>& fs_) {
    for (const auto& f : fs_)
      if (f.filename() == "ascend_pytorch_profiler_0.db") return f;
    return fs::path();
  };
  EXPECT_NE(testutil::slurp(a.path() / db_of(fa)), testutil::slurp(c.path() / db_of(fc))) << "another seed, other data";
}

TEST(SynthDb, RejectsAnUnknownExportFormat) {
  testing::ScratchDir a("synth_db_bad");
  SynthOptions o = options("dense_gqa", a.path(), "parquet");
  auto r = generate_capture(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("parquet"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::synth
