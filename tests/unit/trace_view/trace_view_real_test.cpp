// Imports every real trace_view.json fixture and checks exact counts and values.
//
// Expected numbers were computed independently with Python's json module (json.load of the whole file,
// processes identified by their process_name M events, thread kinds by thread_name M events, times as
// Decimal(text) * 1000 rounded half-up), e.g. for the counts by ph:
//   python3 -c "import json,collections,sys; d=json.load(open(sys.argv[1]));
//               print(len(d), collections.Counter(e.get('ph') for e in d))" trace_view.json
// and, for the tables, X events split by process name (Python/CANN -> host ops, Ascend Hardware -> device
// tasks, HCCL 'Group N Communication' threads -> comm ops, 'Plane k' threads -> plane tasks, Overlap
// Analysis -> overlap), distinct pids of all events -> processes, distinct (pid, tid) of X events and
// thread M events -> threads, and per-(pid, tid) count of X events starting before their predecessor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using model::ProcessKind;

struct Imported {
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  Status status;
};

std::unique_ptr<Imported> import_path(const fs::path& p, const TraceViewOptions& opts = {}) {
  auto r = std::make_unique<Imported>();
  r->status = import_trace_view(p, r->pool, r->t, r->stats, opts);
  return r;
}

struct Expected {
  const char* rel;
  uint64_t file_bytes;
  uint64_t total, x, m, c, s, f;
  size_t host, cann, device, comm, plane, overlap, processes, threads;
  uint64_t out_of_order, unnamed;
  int64_t step, step_start, step_end;
};

// Numbers from the Python count described at the top of this file.
const Expected kExpected[] = {
    {"e2-cnn-level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 1805798, 8375, 3379, 63, 3716, 606, 611,
     2460, 0, 533, 4, 0, 382, 12, 16, 874, 210, 50, 1736405443862052130, 1736405443998949950},
    {"e2-cnn-level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 1808000, 8394, 3379, 63, 3735, 606, 611,
     2460, 0, 533, 4, 0, 382, 12, 16, 874, 210, 50, 1736405443878117140, 1736405443999008300},
    {"e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 2218825, 10112, 4384, 80, 4431, 606, 611,
     3167, 707, 535, 4, 296, 382, 12, 24, 874, 0, 50, 1736408883686740710, 1736408883842726510},
    {"e2-cnn-level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 2200746, 9969, 4385, 80, 4287, 606, 611,
     3168, 708, 535, 4, 296, 382, 12, 24, 874, 0, 50, 1736408883688868080, 1736408883842756470},
    {"e2-cnn-level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 2326148, 10476, 4811, 80, 4368, 606, 611,
     3594, 1134, 535, 4, 296, 382, 12, 24, 874, 0, 50, 1736412474712651500, 1736412474861437600},
    {"e2-cnn-level2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 2355544, 10697, 4816, 80, 4584, 606, 611,
     3599, 1139, 535, 4, 296, 382, 12, 24, 874, 0, 50, 1736412474712833260, 1736412474861285490},
    {"single-files/e1_trace_view_single_device.json", 635433, 3670, 2212, 32, 0, 713, 713, 1389, 382, 276, 0, 0, 547,
     4, 12, 390, 0, 1, 1704161511420289011, 1704161511434380981},
    {"single-files/trace_view_tiny.json", 2132, 23, 0, 23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 7, 0, 0, -1, 0, 0},
    {"single-files/trace_view_heatmap.json", 1462, 6, 4, 2, 0, 0, 0, 3, 3, 1, 0, 0, 0, 2, 4, 0, 0, -1, 0, 0},
};

std::vector<std::string> process_names(const Imported& r) {
  std::vector<std::string> names;
  for (const auto& p : r.t.processes)
    if (p.name != 0) names.emplace_back(r.pool.view(p.name));
  std::sort(names.begin(), names.end());
  return names;
}

TEST(TraceViewReal, ExactCountsForEveryFixture) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.rel);
    const auto r = import_path(testing::real_fixtures_dir() / e.rel);
    ASSERT_TRUE(r->status.ok()) << r->status.to_string();
    const model::TraceTables& t = r->t;
    EXPECT_EQ(t.file_bytes, e.file_bytes);
    EXPECT_EQ(t.events_total, e.total);
    EXPECT_EQ(t.metadata_events, e.m);
    EXPECT_EQ(t.counter_events, e.c);
    const size_t s_count = static_cast<size_t>(std::count(t.flows.phase.begin(), t.flows.phase.end(), 's'));
    EXPECT_EQ(s_count, e.s);
    EXPECT_EQ(t.flows.size() - s_count, e.f);
    // Every X event of these files lands in exactly one table.
    EXPECT_EQ(t.host_ops.size() + t.device_tasks.size() + t.comm_ops.size() + t.comm_plane_tasks.size() +
                  t.overlap.size(),
              e.x);
    EXPECT_EQ(t.host_ops.size(), e.host);
    EXPECT_EQ(static_cast<size_t>(std::count(t.host_ops.is_cann.begin(), t.host_ops.is_cann.end(), 1)), e.cann);
    EXPECT_EQ(t.device_tasks.size(), e.device);
    EXPECT_EQ(t.comm_ops.size(), e.comm);
    EXPECT_EQ(t.comm_plane_tasks.size(), e.plane);
    EXPECT_EQ(t.overlap.size(), e.overlap);
    EXPECT_EQ(t.processes.size(), e.processes);
    EXPECT_EQ(t.threads.size(), e.threads);
    EXPECT_EQ(r->stats.count(Stat::tv_events_out_of_order), e.out_of_order);
    EXPECT_EQ(r->stats.count(Stat::tv_unnamed_process), e.unnamed);
    // Clean files: nothing damaged, dropped or unparsed.
    EXPECT_TRUE(t.damaged_spans.empty());
    for (Stat s : {Stat::tv_damaged_span, Stat::tv_truncated, Stat::tv_event_bad_json, Stat::tv_event_missing_field,
                   Stat::tv_bad_ts, Stat::tv_unknown_ph, Stat::tv_event_too_large, Stat::tv_unused_process_event,
                   Stat::tv_unclassified_event})
      EXPECT_EQ(r->stats.count(s), 0u) << stat_info(s).name;
    if (e.step >= 0) {
      ASSERT_EQ(t.steps.size(), 1u);
      EXPECT_EQ(t.steps.step[0], e.step);
      EXPECT_EQ(t.steps.start_ns[0], e.step_start);
      EXPECT_EQ(t.steps.end_ns[0], e.step_end);
    } else {
      EXPECT_EQ(t.steps.size(), 0u);
    }
    // Invariants: every table sorted by start, offsets point at '{' of an object.
    EXPECT_TRUE(std::is_sorted(t.host_ops.start_ns.begin(), t.host_ops.start_ns.end()));
    EXPECT_TRUE(std::is_sorted(t.device_tasks.start_ns.begin(), t.device_tasks.start_ns.end()));
    EXPECT_TRUE(std::is_sorted(t.comm_plane_tasks.start_ns.begin(), t.comm_plane_tasks.start_ns.end()));
    EXPECT_TRUE(std::is_sorted(t.overlap.start_ns.begin(), t.overlap.start_ns.end()));
    EXPECT_TRUE(std::is_sorted(t.flows.ts_ns.begin(), t.flows.ts_ns.end()));
  }
}

// The AI Core Freq counter (ph C, its args before its ph) is the one counter kept: every level has
// two samples per rank, both at the nominal 1800 MHz, and nothing else is taken for one.
TEST(TraceViewReal, AicoreFreqSamplesAreKept) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const auto r = import_path(testing::real_fixtures_dir() / "e2-cnn-level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  EXPECT_EQ(r->t.aicore_freq.ts_ns, (std::vector<int64_t>{1736412474607917240, 1736412474994600000}));
  EXPECT_EQ(r->t.aicore_freq.mhz, (std::vector<uint32_t>{1800, 1800}));
  for (const char* level : {"e2-cnn-level0", "e2-cnn-level1"}) {
    const auto l = import_path(testing::real_fixtures_dir() / level / "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    ASSERT_TRUE(l->status.ok());
    EXPECT_EQ(l->t.aicore_freq.mhz, (std::vector<uint32_t>{1800, 1800})) << level;
  }
}

TEST(TraceViewReal, ProcessNamesAndKinds) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const auto r = import_path(testing::real_fixtures_dir() / kExpected[2].rel);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  EXPECT_EQ(process_names(*r),
            (std::vector<std::string>{"AI Core Freq", "Acc PMU", "Ascend Hardware", "CANN", "HBM", "HCCL", "LLC",
                                      "NPU MEM", "Overlap Analysis", "Python", "QoS", "Stars Soc Info"}));
  std::map<int64_t, const model::ProcessInfo*> by_pid;
  for (const auto& p : r->t.processes) by_pid[p.pid] = &p;
  // pids from the spec (§3: host pid 3096504, device 0).
  ASSERT_TRUE(by_pid.count(3096504));
  EXPECT_EQ(by_pid[3096504]->kind, ProcessKind::kPython);
  EXPECT_EQ(r->pool.view(by_pid[3096504]->label), "CPU");
  EXPECT_EQ(by_pid[3096504]->sort_index, 0);
  ASSERT_TRUE(by_pid.count(3170820320));
  EXPECT_EQ(by_pid[3170820320]->kind, ProcessKind::kCann);
  EXPECT_EQ(by_pid[3170820320]->sort_index, 7);
  ASSERT_TRUE(by_pid.count(3170820512));
  EXPECT_EQ(by_pid[3170820512]->kind, ProcessKind::kAscendHardware);
  EXPECT_EQ(by_pid[3170820512]->sort_index, 13);
  EXPECT_EQ(r->pool.view(by_pid[3170820512]->label), "NPU");
  EXPECT_EQ(by_pid[3170820512]->device_id, -1);
  EXPECT_EQ(by_pid[3170820576]->kind, ProcessKind::kCommunication);
  EXPECT_EQ(by_pid[3170820832]->kind, ProcessKind::kOverlapAnalysis);
  EXPECT_EQ(by_pid[3170820544]->kind, ProcessKind::kCounter);
  EXPECT_EQ(r->pool.view(by_pid[3170820544]->name), "AI Core Freq");

  const auto tiny = import_path(testing::real_fixtures_dir() / "single-files/trace_view_tiny.json");
  ASSERT_TRUE(tiny->status.ok());
  EXPECT_EQ(process_names(*tiny), (std::vector<std::string>{"Ascend Hardware", "HBM", "LLC"}));
  // pid beyond 2^32 (E1 scheme) is kept exactly.
  bool found = false;
  for (const auto& p : tiny->t.processes)
    if (p.pid == 14083661100) {
      found = true;
      EXPECT_EQ(tiny->pool.view(p.name), "HBM");
      EXPECT_EQ(p.sort_index, 11);
    }
  EXPECT_TRUE(found);
}

TEST(TraceViewReal, FirstRowsExactValues) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const auto r = import_path(testing::real_fixtures_dir() / kExpected[2].rel);
  ASSERT_TRUE(r->status.ok());
  const auto& pool = r->pool;
  const auto& d = r->t.device_tasks;
  ASSERT_GT(d.size(), 0u);
  // {"name": "PROFILING_ENABLE", "pid": 3170820512, "tid": 0, "ts": "1736408883674584.732", "dur": 0.02,
  //  "args": {"Task Type": "PLACE_HOLDER_SQE", "Physic Stream Id": 0, "Task Id": 8, "connection_id": 1644}}
  EXPECT_EQ(pool.view(d.name[0]), "PROFILING_ENABLE");
  EXPECT_EQ(pool.view(d.task_type[0]), "PLACE_HOLDER_SQE");
  EXPECT_EQ(d.stream_id[0], 0);
  EXPECT_EQ(d.task_id[0], 8);
  EXPECT_EQ(d.connection_id[0], 1644);
  EXPECT_EQ(d.start_ns[0], 1736408883674584732);
  EXPECT_EQ(d.dur_ns[0], 20);
  EXPECT_EQ(r->t.file_bytes > d.source_offset[0], true);

  const auto& c = r->t.comm_ops;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(pool.view(c.name[0]), "hcom_allReduce__586_0_1");
  EXPECT_EQ(pool.view(c.group[0]), "Group 0 Communication");
  EXPECT_EQ(pool.view(c.data_type[0]), "FP32");
  EXPECT_EQ(pool.view(c.alg_type[0]), "MESH-RING");
  EXPECT_EQ(c.count[0], 4097000);
  EXPECT_EQ(c.connection_id[0], 1175);
  EXPECT_EQ(c.start_ns[0], 1736408883732241564);
  EXPECT_EQ(c.dur_ns[0], 79089520);  // "dur": 79089.52021875 -> rounded at the 4th decimal

  const auto& p = r->t.comm_plane_tasks;
  ASSERT_GT(p.size(), 0u);
  EXPECT_EQ(pool.view(p.name[0]), "Reduce_Inline");
  EXPECT_EQ(p.plane[0], 0);
  EXPECT_EQ(pool.view(p.task_type[0]), "Reduce_Inline");
  EXPECT_EQ(pool.view(p.transport[0]), "SDMA");
  EXPECT_EQ(pool.view(p.link_type[0]), "ON_CHIP");
  EXPECT_EQ(p.src_rank[0], 0);
  EXPECT_EQ(p.dst_rank[0], 4294967295);
  EXPECT_EQ(p.size_bytes[0], 4);
  EXPECT_DOUBLE_EQ(p.bandwidth_gbps[0], 0.006666319462527994);
  EXPECT_EQ(p.start_ns[0], 1736408883732241564);
  EXPECT_EQ(p.dur_ns[0], 600);

  const auto& h = r->t.host_ops;
  EXPECT_EQ(pool.view(h.name[0]), "<string>(1): <module>");
  EXPECT_EQ(pool.view(h.cat[0]), "python_function");
  EXPECT_EQ(h.start_ns[0], 1736408883686490810);
  EXPECT_EQ(h.dur_ns[0], 156289120);
  EXPECT_EQ(h.pid[0], 3096504);
  EXPECT_EQ(h.is_cann[0], 0);

  // Overlap thread kinds (Computing 187, Communication 4, Not Overlapped 101, Free 90).
  std::map<int, int> kinds;
  for (uint8_t k : r->t.overlap.kind) ++kinds[k];
  EXPECT_EQ(kinds, (std::map<int, int>{{0, 187}, {1, 4}, {2, 101}, {3, 90}}));

  // Flows: string ids "936" parse as ints; int ids of async_npu are device start ns. 374 HostToDevice ids
  // are 20-digit strings beyond int64 ("40004068119343529983"): they are interned (id = -(StrId+1)).
  std::map<std::string, int> cats;
  bool saw_936 = false;
  size_t interned = 0;
  for (size_t i = 0; i < r->t.flows.size(); ++i) {
    ++cats[std::string(pool.view(r->t.flows.cat[i]))];
    if (r->t.flows.id[i] == 936 && pool.view(r->t.flows.cat[i]) == "HostToDevice") saw_936 = true;
    // "HostToDevice936" is kept as "HostToDevice": the id is in its own column, so one pool entry serves all
    if (pool.view(r->t.flows.cat[i]) == "HostToDevice") {
      EXPECT_EQ(pool.view(r->t.flows.name[i]), "HostToDevice");
    }
    if (r->t.flows.id[i] < 0) {
      ++interned;
      const std::string_view text = pool.view(static_cast<StrId>(-r->t.flows.id[i] - 1));
      EXPECT_EQ(text.size(), 20u) << text;
      EXPECT_EQ(pool.view(r->t.flows.cat[i]), "HostToDevice");
    }
  }
  EXPECT_TRUE(saw_936);
  EXPECT_EQ(interned, 374u);
  StrId big = 0;
  ASSERT_TRUE(pool.find("40004068119343529983", &big));
  EXPECT_EQ(std::count(r->t.flows.id.begin(), r->t.flows.id.end(), -static_cast<int64_t>(big) - 1), 2);
  EXPECT_EQ(cats, (std::map<std::string, int>{{"HostToDevice", 425}, {"async_npu", 420}, {"async_task_queue", 318},
                                              {"fwdbwd", 54}}));
}

TEST(TraceViewReal, HeatmapDeviceTaskWithoutThreadNameUsesTid) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const auto r = import_path(testing::real_fixtures_dir() / "single-files/trace_view_heatmap.json");
  ASSERT_TRUE(r->status.ok());
  ASSERT_EQ(r->t.device_tasks.size(), 1u);
  EXPECT_EQ(r->pool.view(r->t.device_tasks.name[0]), "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul");
  EXPECT_EQ(r->t.device_tasks.stream_id[0], 383683);
  EXPECT_EQ(r->t.device_tasks.task_id[0], -1);
  EXPECT_EQ(r->t.device_tasks.start_ns[0], 1742490378358161950);
  EXPECT_EQ(r->t.device_tasks.dur_ns[0], 28190);
}

TEST(TraceViewReal, Level0UnnamedPidKeepsHostFlows) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const auto r = import_path(testing::real_fixtures_dir() / kExpected[0].rel);
  ASSERT_TRUE(r->status.ok());
  // The pruned CANN process (pid 3089232096) has thread metadata and 210 's' HostToDevice flows, no process_name.
  EXPECT_EQ(r->stats.count(Stat::tv_unnamed_process), 210u);
  ASSERT_FALSE(r->stats.samples(Stat::tv_unnamed_process).empty());
  EXPECT_NE(r->stats.samples(Stat::tv_unnamed_process)[0].find("pid 3089232096"), std::string::npos);
  size_t flows = 0;
  for (size_t i = 0; i < r->t.flows.size(); ++i)
    if (r->t.flows.pid[i] == 3089232096) ++flows;
  EXPECT_EQ(flows, 210u);
  bool listed = false;
  for (const auto& p : r->t.processes)
    if (p.pid == 3089232096) {
      listed = true;
      EXPECT_EQ(p.kind, ProcessKind::kUnknown);
      EXPECT_EQ(p.name, 0u);
    }
  EXPECT_TRUE(listed);
}

TEST(TraceViewReal, ParseModesAgree) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.rel);
    const auto a = import_path(testing::real_fixtures_dir() / e.rel);
    ASSERT_TRUE(a->status.ok());
    for (TraceViewParseMode mode : {TraceViewParseMode::kPerEvent}) {
      TraceViewOptions opts;
      opts.parse_mode = mode;
      const auto b = import_path(testing::real_fixtures_dir() / e.rel, opts);
      ASSERT_TRUE(b->status.ok());
      EXPECT_EQ(a->t.events_total, b->t.events_total);
      EXPECT_EQ(a->t.host_ops.start_ns, b->t.host_ops.start_ns);
      EXPECT_EQ(a->t.host_ops.source_offset, b->t.host_ops.source_offset);
      EXPECT_EQ(a->t.device_tasks.dur_ns, b->t.device_tasks.dur_ns);
      EXPECT_EQ(a->t.device_tasks.task_id, b->t.device_tasks.task_id);
      EXPECT_EQ(a->t.comm_plane_tasks.size_bytes, b->t.comm_plane_tasks.size_bytes);
      EXPECT_EQ(a->t.overlap.start_ns, b->t.overlap.start_ns);
      EXPECT_EQ(a->t.flows.id, b->t.flows.id);
      EXPECT_EQ(a->t.threads.size(), b->t.threads.size());
    }
  }
}

// Minimal RFC-4180 line splitter for the cross-check (kernel_details has quoted fields with commas).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool q = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (q) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        q = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      q = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// Cross-check with kernel_details.csv of the same rank (191 rows): 187 rows are device tasks of the
// Ascend Hardware process with the same name and the same start time to the ns; the other 4 are the
// hcom_allReduce ops, which live in the HCCL process (comm_ops) and start within 1 µs of the kernel row.
TEST(TraceViewReal, CrossCheckWithKernelDetails) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path dir = testing::real_fixtures_dir() / "e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT";
  const auto r = import_path(dir / "trace_view.json");
  ASSERT_TRUE(r->status.ok());
  std::ifstream in(dir / "kernel_details.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  const auto header = split_csv(line);
  const auto name_col = std::find(header.begin(), header.end(), "Name") - header.begin();
  const auto start_col = std::find(header.begin(), header.end(), "Start Time(us)") - header.begin();
  ASSERT_LT(static_cast<size_t>(start_col), header.size());
  std::set<std::pair<std::string, int64_t>> device;
  std::set<std::string> device_names;
  for (size_t i = 0; i < r->t.device_tasks.size(); ++i) {
    device.emplace(r->pool.view(r->t.device_tasks.name[i]), r->t.device_tasks.start_ns[i]);
    device_names.emplace(r->pool.view(r->t.device_tasks.name[i]));
  }
  size_t rows = 0, same_name = 0, same_name_and_start = 0, comm_within_1us = 0;
  while (std::getline(in, line)) {
    const auto f = split_csv(line);
    ASSERT_GT(f.size(), static_cast<size_t>(start_col));
    ++rows;
    const std::string& name = f[static_cast<size_t>(name_col)];
    const auto start = parse_us_to_ns(f[static_cast<size_t>(start_col)]);
    ASSERT_TRUE(start.has_value());
    if (device_names.count(name)) ++same_name;
    if (device.count({name, *start})) ++same_name_and_start;
    for (size_t i = 0; i < r->t.comm_ops.size(); ++i)
      if (r->pool.view(r->t.comm_ops.name[i]) == name && std::llabs(r->t.comm_ops.start_ns[i] - *start) <= 1000)
        ++comm_within_1us;
  }
  EXPECT_EQ(rows, 191u);
  EXPECT_EQ(same_name, 187u);
  EXPECT_EQ(same_name_and_start, 187u);
  EXPECT_EQ(comm_within_1us, 4u);
}

}  // namespace
}  // namespace ascprof::importers
