// synth --moe-trace: the instrumented FusedDeepMoe rows and the MoeTracing in-kernel trace files
// (skill, UMDK and bare-array variants), read back with the independent JSON / CSV readers of
// synth_test_util.hpp and checked against ground_truth.json, the kernel rows, the database export
// and the two in-kernel faults.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;

constexpr const char* kKernel = "aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe";
constexpr int kRanks = 3;

SynthOptions opts(const fs::path& out, const std::string& variant) {
  SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = out;
  o.ranks = kRanks;
  o.steps = 2;
  o.layers = 3;  // 3 MoE layers (no dense prefix below 5) + 2 MTP layers: 5 FusedDeepMoe calls per step
  o.seed = 29;
  o.moe_trace = variant;
  return o;
}

struct Gen {
  SynthSummary summary;
  Json gt;
};

Gen gen(const SynthOptions& o) {
  Gen g;
  auto r = generate_capture(o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return g;
  g.summary = r.value();
  std::string err;
  EXPECT_TRUE(testutil::parse_json(testutil::slurp(g.summary.ground_truth), g.gt, err)) << err;
  return g;
}

/// A fixed-point decimal literal with at most `decimals` decimals as an integer of 10^-decimals units
/// (-1 when it has more decimals or is not a plain decimal).
int64_t fixed(std::string_view s, int decimals) {
  int64_t v = 0;
  int seen = -1;
  for (const char c : s) {
    if (c == '.') {
      if (seen >= 0) return -1;
      seen = 0;
      continue;
    }
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
    if (seen >= 0 && ++seen > decimals) return -1;
  }
  for (int i = std::max(seen, 0); i < decimals; ++i) v *= 10;
  return v;
}

/// "X.YY" microseconds (exactly two decimals) -> cycles of the 50 MHz counter.
int64_t cycles_of(const Json& j) {
  EXPECT_TRUE(j.is_number()) << j.text;
  const auto dot = j.text.find('.');
  EXPECT_TRUE(dot != std::string::npos && j.text.size() - dot == 3) << "not exactly 2 decimals: " << j.text;
  const int64_t h = fixed(j.text, 2);
  EXPECT_GE(h, 0) << j.text;
  EXPECT_EQ(h % 2, 0) << "not a whole cycle: " << j.text;
  return h / 2;
}

struct Iv {
  int64_t b = 0, e = 0;
};
using LabelIndex = std::pair<std::string, int>;

struct Core {
  std::map<LabelIndex, std::vector<Iv>> by_label;  // (normalized label, #s) -> intervals
};

struct Trace {
  std::map<std::pair<int, int>, Core> cores;  // (core_type, core_id)
  int64_t span = 0;                           // cycles, latest end - earliest start
  size_t data_events = 0, metadata = 0, x_events = 0;
  std::set<std::string> tids, thread_names;
  bool ts_sorted = true;
};

bool is_container(const std::string& l) { return l == "processing" || l == "dispatch-gmm1" || l == "gmm2-combine"; }

const char* group_name(int g) {
  static const char* const kN[] = {"cube", "vector_recv", "vector_send"};
  return kN[g];
}

fs::path rank_folder(const Gen& g, int rank) {
  return g.summary.root / g.gt.at("ranks").items[static_cast<size_t>(rank)].at("folder").text;
}

const Json& moe_rank(const Gen& g, int rank) {
  for (const Json& r : g.gt.at("moe_trace").at("ranks").items)
    if (r.at("rank_id").text == std::to_string(rank)) return r;
  ADD_FAILURE() << "no moe_trace ground truth for rank " << rank;
  static const Json kNull;
  return kNull;
}

fs::path trace_path(const Gen& g, int rank) { return rank_folder(g, rank) / moe_rank(g, rank).at("file").text; }

// Reads one trace file as a reader of either collector would, checking the format on the way.
Trace read_trace(const fs::path& file, int rank, const std::string& variant) {
  Trace t;
  Json doc;
  std::string err;
  const std::string text = testutil::slurp(file);
  EXPECT_FALSE(text.empty()) << file;
  EXPECT_TRUE(testutil::parse_json(text, doc, err)) << file << ": " << err;
  const bool array = variant == "array";
  EXPECT_EQ(doc.type, array ? Json::Type::kArray : Json::Type::kObject);
  const std::vector<Json>& events = array ? doc.items : doc.at("traceEvents").items;
  if (!array) {
    EXPECT_EQ(doc.at("displayTimeUnit").text, "us");
    const Json& od = doc.at("otherData");
    EXPECT_EQ(od.at("version").text, "1.0");
    EXPECT_EQ(od.at("clock_divisor").text, "50.0");
    EXPECT_EQ(od.at("extra_mode").text, "seq");
    EXPECT_EQ(od.at("total_ranks").text, "1");
    if (variant == "umdk") {
      EXPECT_EQ(od.at("generator").text, "trace_collector_fifo_seq_sorted_us");
      EXPECT_EQ(od.at("unpaired_events").text, "0");
    } else {
      EXPECT_EQ(od.at("skipped_no_mapping").text, "0");
    }
  }
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> open;  // (tid, name) -> B stack
  std::map<std::pair<int, int>, int64_t> t0;                                  // UMDK: per core
  int64_t first = INT64_MAX, last = INT64_MIN, prev_ts = INT64_MIN;
  const Json* prev_b = nullptr;
  for (const Json& e : events) {
    EXPECT_EQ(e.at("pid").text, "0");
    const std::string ph = e.at("ph").text;
    if (ph == "M") {
      ++t.metadata;
      if (e.at("name").text == "process_sort_index") {
        EXPECT_EQ(e.at("args").at("sort_index").text, std::to_string(rank));
      }
      if (e.at("name").text == "thread_name") t.thread_names.insert(e.at("tid").text);
      continue;
    }
    ++t.data_events;
    if (ph == "X") ++t.x_events;
    EXPECT_TRUE(array ? ph == "X" : (ph == "B" || ph == "E")) << "ph " << ph << " in the " << variant << " variant";
    const Json& a = e.at("args");
    EXPECT_EQ(e.at("cat").text, "trace");
    EXPECT_EQ(a.at("rank_id").text, std::to_string(rank));
    const int type = std::stoi(a.at("core_type").text), id = std::stoi(a.at("core_id").text);
    EXPECT_TRUE(type >= 0 && type < 3 && id >= 0 && id < 24) << type << " " << id;
    char tid[32];
    std::snprintf(tid, sizeof tid, "type%d_core%03d", type, id);
    EXPECT_EQ(e.at("tid").text, tid);
    t.tids.insert(tid);
    // "<label> [extra:0] #<s>"
    const std::string name = e.at("name").text;
    const size_t x = name.find(" [extra:"), h = name.rfind(" #");
    EXPECT_TRUE(x != std::string::npos && h != std::string::npos && h > x) << name;
    if (x == std::string::npos || h == std::string::npos) continue;
    const std::string label = name.substr(0, x);
    EXPECT_EQ(name.substr(x, h - x), " [extra:0]") << name;
    const int index = std::stoi(name.substr(h + 2));
    const uint64_t extra = static_cast<uint64_t>(index) << 8;
    if (variant == "umdk") {
      EXPECT_EQ(a.at("extra_id").text, "0");
      EXPECT_EQ(a.at("extra_raw").text, std::to_string(extra));
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%016llx",
                    static_cast<unsigned long long>((extra << 32) | std::stoull(a.at("base_point_id").text)));
      EXPECT_EQ(a.at("combined_id").text, hex);
      EXPECT_EQ(a.at("clock_divisor").text, "50.0");
      EXPECT_FALSE(a.at("begin_file").text.empty());
      EXPECT_FALSE(a.at("end_line").text.empty());
    } else {
      EXPECT_EQ(a.at("extra_id").text, std::to_string(extra));
    }
    EXPECT_NE(a.at("file").text.find("fused_deep_moe/op_kernel/"), std::string::npos);
    const int64_t ts = cycles_of(e.at("ts"));
    if (ts < prev_ts) t.ts_sorted = false;
    prev_ts = ts;
    if (variant == "umdk") {
      const int64_t init = std::stoll(a.at("initial_timestamp").text);
      EXPECT_EQ(std::stoll(a.at("raw_timestamp").text) - init, ts);
      const auto [it, fresh] = t0.emplace(std::make_pair(type, id), init);
      if (!fresh) {
        EXPECT_EQ(it->second, init) << "T0 differs within a core";
      }
    }
    Core& core = t.cores[{type, id}];
    const auto key = std::make_pair(std::string(tid), name);
    Iv iv;
    if (ph == "X") {
      iv = {ts, ts + cycles_of(e.at("dur"))};
    } else if (ph == "B") {
      open[key].push_back(ts);
      prev_b = &e;
      continue;
    } else {
      // the collector writes each B immediately followed by its E
      EXPECT_TRUE(prev_b != nullptr && prev_b->at("name").text == name && prev_b->at("tid").text == tid) << name;
      prev_b = nullptr;
      auto& st = open[key];
      EXPECT_FALSE(st.empty()) << "E without B: " << name;
      if (st.empty()) continue;
      iv = {st.back(), ts};
      st.pop_back();
    }
    EXPECT_LE(iv.b, iv.e) << name;
    core.by_label[{label, index}].push_back(iv);
    first = std::min(first, iv.b);
    last = std::max(last, iv.e);
  }
  for (const auto& [key, st] : open) EXPECT_TRUE(st.empty()) << "B without E: " << key.second;
  t.span = last - first;
  return t;
}

int64_t union_len(std::vector<Iv> v) {
  std::sort(v.begin(), v.end(), [](const Iv& a, const Iv& b) { return a.b < b.b; });
  int64_t len = 0, cb = 0, ce = 0;
  bool have = false;
  for (const Iv& i : v) {
    if (have && i.b <= ce) {
      ce = std::max(ce, i.e);
      continue;
    }
    if (have) len += ce - cb;
    cb = i.b;
    ce = i.e;
    have = true;
  }
  return have ? len + ce - cb : 0;
}

struct Stat {
  int64_t count = 0, total = 0, uni = 0, max_core = 0;
};

// Phases per (label, core group) and bubbles per (container, core group), recomputed from the file.
void recompute(const Trace& t, std::map<std::pair<std::string, std::string>, Stat>* phases,
               std::map<std::pair<std::string, std::string>, int64_t>* bubbles) {
  std::map<std::pair<std::string, std::string>, std::vector<Iv>> all;
  for (const auto& [core_key, core] : t.cores) {
    const std::string group = group_name(core_key.first);
    std::map<std::string, int64_t> core_total;
    for (const auto& [li, ivs] : core.by_label) {
      Stat& s = (*phases)[{li.first, group}];
      for (const Iv& iv : ivs) {
        ++s.count;
        s.total += iv.e - iv.b;
        core_total[li.first] += iv.e - iv.b;
        all[{li.first, group}].push_back(iv);
      }
    }
    for (const auto& [label, tot] : core_total) {
      Stat& s = (*phases)[{label, group}];
      s.max_core = std::max(s.max_core, tot);
    }
    for (const std::string container : {"processing", "dispatch-gmm1", "gmm2-combine"}) {
      const auto it = core.by_label.find({container, 0});
      if (it == core.by_label.end()) continue;
      for (const Iv& box : it->second) {
        std::vector<Iv> kids;
        for (const auto& [li, ivs] : core.by_label) {
          const bool direct = container == "processing" ? (li.first == "dispatch-gmm1" || li.first == "gmm2-combine")
                                                        : !is_container(li.first);
          if (!direct) continue;
          for (const Iv& iv : ivs)
            if (iv.b >= box.b && iv.e <= box.e) kids.push_back(iv);
        }
        (*bubbles)[{container, group}] += (box.e - box.b) - union_len(kids);
      }
    }
  }
  for (auto& [key, ivs] : all) (*phases)[key].uni = union_len(ivs);
}

/// The rank's FusedDeepMoe rows of kernel_details.csv (header-indexed).
struct KernelRows {
  std::vector<std::map<std::string, std::string>> rows;
};
KernelRows fused_rows(const Gen& g, int rank, size_t* other_moe_rows = nullptr) {
  auto csv = testutil::parse_csv(testutil::slurp(rank_folder(g, rank) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"));
  KernelRows out;
  if (csv.empty()) return out;
  const auto header = csv.front();
  for (size_t i = 1; i < csv.size(); ++i) {
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size() && c < csv[i].size(); ++c) row[header[c]] = csv[i][c];
    const std::string& name = row["Name"];
    if (other_moe_rows != nullptr &&
        (name.find("MoeDistribute") != std::string::npos || name.find("GroupedMatmul") != std::string::npos))
      ++*other_moe_rows;
    if (name == kKernel) out.rows.push_back(std::move(row));
  }
  return out;
}

/// Per core, per (label, #s): the durations (cycles) in time order.
using Durations = std::map<std::tuple<int, int, std::string, int>, std::vector<int64_t>>;
Durations durations(const Trace& t) {
  Durations d;
  for (const auto& [ck, core] : t.cores)
    for (const auto& [li, ivs] : core.by_label)
      for (const Iv& iv : ivs) d[{ck.first, ck.second, li.first, li.second}].push_back(iv.e - iv.b);
  return d;
}

int64_t row_dur_ns(const std::map<std::string, std::string>& row) { return fixed(row.at("Duration(us)"), 3); }

// ---- every variant ----

class SynthMoeTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(SynthMoeTrace, TraceFilesMatchGroundTruthAndKernelRows) {
  const std::string variant = GetParam();
  testing::ScratchDir dir("synth_moe_trace");
  SynthOptions o = opts(dir.path(), variant);
  if (variant == "skill") o.export_format = "both";  // the database must carry the same rows
  const Gen g = gen(o);
  ASSERT_TRUE(g.gt.find("moe_trace") != nullptr);
  const Json& mt = g.gt.at("moe_trace");
  EXPECT_EQ(mt.at("variant").text, variant);
  EXPECT_EQ(mt.at("kernel_name").text, kKernel);
  EXPECT_EQ(cycles_of(mt.at("overhead_us")), 200);  // 4.00 us
  ASSERT_EQ(mt.at("ranks").items.size(), static_cast<size_t>(kRanks));
  const int steps = static_cast<int>(g.gt.at("steps_per_rank").num);

  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Json& gt = moe_rank(g, rank);
    const int64_t k = std::stoll(gt.at("kernel_row_index").text);
    EXPECT_EQ(gt.at("file").text, "moe_trace/trace_call" + std::to_string(k) + ".json");
    EXPECT_EQ(g.summary.ranks[static_cast<size_t>(rank)].moe_trace, trace_path(g, rank));
    // the folder holds exactly that one trace
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(rank_folder(g, rank) / "moe_trace")) files += e.is_regular_file();
    EXPECT_EQ(files, 1u);

    const Trace t = read_trace(trace_path(g, rank), rank, variant);
    EXPECT_EQ(t.tids.size(), 72u);
    EXPECT_EQ(t.thread_names.size(), 72u);
    EXPECT_EQ(t.metadata, 2u + 2u * 72u);
    const int64_t span = cycles_of(gt.at("span_us"));
    EXPECT_EQ(t.span, span);
    EXPECT_EQ(cycles_of(gt.at("kernel_duration_us")), span + 200);
    // one X per interval in the array variant, B + E pairs otherwise
    EXPECT_EQ(t.x_events, variant == "array" ? t.data_events : 0u);
    if (variant == "array") {
      EXPECT_FALSE(t.ts_sorted) << "the array variant is shuffled";
    }

    // phases and bubbles recomputed from the file equal ground truth, entry for entry
    std::map<std::pair<std::string, std::string>, Stat> phases;
    std::map<std::pair<std::string, std::string>, int64_t> bubbles;
    recompute(t, &phases, &bubbles);
    EXPECT_EQ(gt.at("phases").items.size(), phases.size());
    for (const Json& p : gt.at("phases").items) {
      const auto key = std::make_pair(p.at("label").text, p.at("core_group").text);
      SCOPED_TRACE(key.first + " / " + key.second);
      ASSERT_TRUE(phases.count(key));
      const Stat& s = phases[key];
      EXPECT_EQ(std::stoll(p.at("count").text), s.count);
      EXPECT_EQ(cycles_of(p.at("total_us")), s.total);
      EXPECT_EQ(cycles_of(p.at("union_us")), s.uni);
      EXPECT_EQ(cycles_of(p.at("max_core_us")), s.max_core);
      // a clean rank: no phase dominates the kernel, the combine waits are short
      if (!is_container(key.first)) {
        EXPECT_LT(static_cast<double>(s.uni), 0.45 * static_cast<double>(span));
      }
      if (key.first == "gmm2-combine combine-wait-status") {
        EXPECT_LT(static_cast<double>(s.uni), 0.15 * static_cast<double>(span));
      }
    }
    EXPECT_EQ(gt.at("bubbles").items.size(), bubbles.size());
    for (const Json& b : gt.at("bubbles").items) {
      const auto key = std::make_pair(b.at("container").text, b.at("core_group").text);
      ASSERT_TRUE(bubbles.count(key)) << key.first;
      EXPECT_EQ(cycles_of(b.at("total_us")), bubbles[key]) << key.first << " / " << key.second;
      EXPECT_GT(bubbles[key], 0);  // a few cycles per core, never zero
      EXPECT_LT(bubbles[key], 24 * 100);
    }
    // the spec's labels, per core group, 4 expert groups where indexed
    std::map<std::string, std::set<std::string>> labels;
    for (const auto& [key, s] : phases) labels[key.second].insert(key.first);
    EXPECT_EQ(labels["cube"], (std::set<std::string>{"processing", "dispatch-gmm1", "gmm2-combine",
                                                     "dispatch-gmm1 wait-moe-token", "dispatch-gmm1 moe-process",
                                                     "gmm2-combine moe-gmm2"}));
    EXPECT_EQ(labels["vector_recv"],
              (std::set<std::string>{"processing", "dispatch-gmm1", "gmm2-combine", "dispatch-gmm1 recv-token",
                                     "dispatch-gmm1 moe-quant", "gmm2-combine block-epilogue group",
                                     "gmm2-combine combine-recv"}));
    EXPECT_EQ(labels["vector_send"],
              (std::set<std::string>{"processing", "dispatch-gmm1", "gmm2-combine", "dispatch-gmm1 moe-dispatch-send",
                                     "gmm2-combine combine-send", "gmm2-combine combine-wait-status"}));
    EXPECT_EQ((phases[{"dispatch-gmm1 moe-process", "cube"}].count), 24 * 4);
    EXPECT_EQ((phases[{"gmm2-combine combine-wait-status", "vector_send"}].count), 24);
    // every core's processing starts at its T0
    for (const auto& [ck, core] : t.cores) EXPECT_EQ(core.by_label.at({"processing", 0}).front().b, 0);

    // kernel_details: the Kth FusedDeepMoe row (the rank's last) lasts span + 4.00 us
    size_t replaced = 0;
    const KernelRows kr = fused_rows(g, rank, &replaced);
    EXPECT_EQ(replaced, 0u) << "dispatch / GroupedMatmul / combine rows left beside FusedDeepMoe";
    ASSERT_EQ(static_cast<int64_t>(kr.rows.size()), k + 1);
    EXPECT_EQ(kr.rows.size(), static_cast<size_t>(steps) * 5u);
    const auto& row = kr.rows[static_cast<size_t>(k)];
    EXPECT_EQ(row_dur_ns(row), span * 20 + 4000);
    EXPECT_EQ(row.at("Type"), "FusedDeepMoe");
    EXPECT_EQ(row.at("Accelerator Core"), "MIX_AIC");
    EXPECT_EQ(row.at("Block Dim"), "24");
    EXPECT_EQ(row.at("Mix Block Dim"), "48");
    EXPECT_NE(row.at("aic_mac_ratio"), "N/A");  // filled like every MIX_AIC row
    EXPECT_NE(row.at("aiv_vec_ratio"), "N/A");
    EXPECT_EQ(row.at("Step Id"), std::to_string(static_cast<int64_t>(g.gt.at("first_step").num) + steps - 1));

    if (o.export_format == "both") {  // the database's Kth FusedDeepMoe task is the same row
      const fs::path db = rank_folder(g, rank) / "ASCEND_PROFILER_OUTPUT" /
                          ("ascend_pytorch_profiler_" + std::to_string(rank) + ".db");
      sqlite3* h = nullptr;
      ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(h,
                                   "SELECT t.endNs - t.startNs, c.blockNum, c.mixBlockNum FROM TASK t JOIN COMPUTE_TASK_INFO "
                                   "c ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = c.name WHERE s.value = ? "
                                   "ORDER BY t.startNs",
                                   -1, &st, nullptr),
                SQLITE_OK);
      sqlite3_bind_text(st, 1, kKernel, -1, SQLITE_STATIC);
      std::vector<std::tuple<int64_t, int64_t, int64_t>> tasks;
      while (sqlite3_step(st) == SQLITE_ROW)
        tasks.emplace_back(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
      sqlite3_finalize(st);
      sqlite3_close(h);
      ASSERT_EQ(tasks.size(), kr.rows.size());
      for (size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(std::get<0>(tasks[i]), row_dur_ns(kr.rows[i])) << "row " << i;
      EXPECT_EQ(std::get<1>(tasks.back()), 24);
      EXPECT_EQ(std::get<2>(tasks.back()), 48);
    }
  }
}

TEST_P(SynthMoeTrace, SameSeedSameBytes) {
  const std::string variant = GetParam();
  testing::ScratchDir a("synth_moe_a"), b("synth_moe_b");
  const Gen ga = gen(opts(a.path(), variant)), gb = gen(opts(b.path(), variant));
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string ta = testutil::slurp(trace_path(ga, rank)), tb = testutil::slurp(trace_path(gb, rank));
    EXPECT_FALSE(ta.empty());
    EXPECT_EQ(ta, tb) << "rank " << rank;
  }
  EXPECT_EQ(testutil::slurp(ga.summary.ground_truth), testutil::slurp(gb.summary.ground_truth));
  // another seed: other cycles
  testing::ScratchDir c("synth_moe_c");
  SynthOptions oc = opts(c.path(), variant);
  oc.seed = 30;
  const Gen gc = gen(oc);
  EXPECT_NE(testutil::slurp(trace_path(ga, 0)), testutil::slurp(trace_path(gc, 0)));
}

INSTANTIATE_TEST_SUITE_P(Variants, SynthMoeTrace, ::testing::Values("skill", "umdk", "array"));

// ---- faults ----

TEST(SynthMoeTraceFaults, SlowExpertLengthensItsProcessAndThePeersCombineWait) {
  testing::ScratchDir a("synth_moe_clean"), b("synth_moe_slow");
  const Gen clean = gen(opts(a.path(), "skill"));
  SynthOptions o = opts(b.path(), "skill");
  o.faults = {"moe_slow_expert:1"};
  const Gen slow = gen(o);
  const Json& f = slow.gt.at("faults").items.at(0);
  EXPECT_EQ(f.at("name").text, "moe_slow_expert");
  EXPECT_EQ(f.at("rank").text, "1");
  EXPECT_EQ(f.at("magnitude").num, 3.0);
  EXPECT_EQ(f.at("ops").items.at(0).text, kKernel);
  const int64_t delay = cycles_of(f.at("in_kernel").at("traced_call_delay_us"));
  EXPECT_GT(delay, 50 * 5);  // the default 3x makes the slow rank's call > 5 us longer

  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Trace tc = read_trace(trace_path(clean, rank), rank, "skill");
    const Trace tf = read_trace(trace_path(slow, rank), rank, "skill");
    EXPECT_EQ(tf.span, tc.span + delay);  // the slow rank ends late by the delay, the peers wait for it
    const int64_t k = std::stoll(moe_rank(slow, rank).at("kernel_row_index").text);
    EXPECT_EQ(row_dur_ns(fused_rows(slow, rank).rows.at(static_cast<size_t>(k))),
              row_dur_ns(fused_rows(clean, rank).rows.at(static_cast<size_t>(k))) + delay * 20);
    const Durations dc = durations(tc), df = durations(tf);
    ASSERT_EQ(dc.size(), df.size());
    for (const auto& [key, dur_c] : dc) {
      const auto& [type, id, label, index] = key;
      const std::vector<int64_t>& dur_f = df.at(key);
      ASSERT_EQ(dur_c.size(), dur_f.size());
      if (is_container(label)) continue;  // they hold the lengthened phases
      for (size_t i = 0; i < dur_c.size(); ++i) {
        int64_t want = dur_c[i];
        if (rank == 1 && type == 0 && label == "dispatch-gmm1 moe-process" && index == 0)
          want = std::llround(static_cast<double>(dur_c[i]) * 3.0);
        if (rank != 1 && type == 2 && label == "gmm2-combine combine-wait-status") want = dur_c[i] + delay;
        EXPECT_EQ(dur_f[i], want) << label << " #" << index << " core " << type << "/" << id;
      }
    }
  }
}

TEST(SynthMoeTraceFaults, RecvStarvedLengthensRecvTokenAndTheCubesFirstWait) {
  testing::ScratchDir a("synth_moe_clean"), b("synth_moe_starved");
  const Gen clean = gen(opts(a.path(), "skill"));
  SynthOptions o = opts(b.path(), "skill");
  o.faults = {"moe_recv_starved:2:4"};
  const Gen starved = gen(o);
  const Json& f = starved.gt.at("faults").items.at(0);
  EXPECT_EQ(f.at("name").text, "moe_recv_starved");
  EXPECT_EQ(f.at("rank").text, "2");
  EXPECT_EQ(f.at("in_kernel").at("core_group").text, "vector_recv");

  // other ranks: the very same trace
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(testutil::slurp(trace_path(clean, rank)), testutil::slurp(trace_path(starved, rank))) << rank;

  const Trace tc = read_trace(trace_path(clean, 2), 2, "skill");
  const Trace tf = read_trace(trace_path(starved, 2), 2, "skill");
  EXPECT_GT(tf.span, tc.span + 50 * 10);  // 4 x a ~9 us wait: the call is > 10 us longer
  const int64_t k = std::stoll(moe_rank(starved, 2).at("kernel_row_index").text);
  EXPECT_EQ(row_dur_ns(fused_rows(starved, 2).rows.at(static_cast<size_t>(k))), tf.span * 20 + 4000);
  const Durations dc = durations(tc), df = durations(tf);
  for (const auto& [key, dur_c] : dc) {
    const auto& [type, id, label, index] = key;
    if (is_container(label)) continue;
    const std::vector<int64_t>& dur_f = df.at(key);
    for (size_t i = 0; i < dur_c.size(); ++i) {
      int64_t want = dur_c[i];
      if (type == 1 && label == "dispatch-gmm1 recv-token") want = std::llround(static_cast<double>(dur_c[i]) * 4.0);
      if (type == 0 && label == "dispatch-gmm1 wait-moe-token" && index == 0) {
        // the cube core waits exactly as long as its receive core's extra wait
        const auto recv = std::make_tuple(1, id, std::string("dispatch-gmm1 recv-token"), 0);
        want = dur_c[i] + (df.at(recv)[0] - dc.at(recv)[0]);
      }
      EXPECT_EQ(dur_f[i], want) << label << " #" << index << " core " << type << "/" << id;
    }
  }
}

// ---- options ----

TEST(SynthMoeTraceOptions, RefusedCombinationsAndTheCommandLineForm) {
  testing::ScratchDir dir("synth_moe_opts");
  auto refused = [&](SynthOptions o, std::string_view why) {
    const auto r = generate_capture(o);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  };
  SynthOptions o = opts(dir.path(), "skill");
  o.scenario = "glm5_mtp";
  refused(o, "moe_mla_decode only");
  refused(opts(dir.path(), "chrome"), "unknown moe_trace variant");
  o = opts(dir.path(), "");
  o.faults = {"moe_slow_expert:1"};
  refused(o, "needs moe_trace");
  o = opts(dir.path(), "skill");
  o.faults = {"ep_imbalance:1"};
  refused(o, "ep_imbalance");
  o.faults = {"moe_recv_starved:1:0.5"};
  refused(o, ">= 1");
  const auto names = fault_names();
  for (const char* n : {"moe_slow_expert", "moe_recv_starved"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

// The live taxonomy makes FusedDeepMoe an MoE dispatch + expert + combine kernel (and nothing narrower).
TEST(SynthMoeTraceOptions, TaxonomyClassifiesFusedDeepMoe) {
  auto k = knowledge::Knowledge::load(testing::knowledge_dir());
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  const knowledge::Taxon t = k->taxonomy.classify(kKernel, "FusedDeepMoe", "MIX_AIC");
  std::set<std::string> cats, roles;
  for (size_t i = 0; i < k->vocab.categories().size(); ++i)
    if (t.categories.test(i)) cats.insert(k->vocab.categories()[i]);
  for (size_t i = 0; i < k->vocab.roles().size(); ++i)
    if (t.roles.test(i)) roles.insert(k->vocab.roles()[i]);
  EXPECT_EQ(cats, (std::set<std::string>{"moe.dispatch_expert_compute"}));
  EXPECT_EQ(roles, (std::set<std::string>{"moe"}));
}

}  // namespace
}  // namespace ascprof::synth
