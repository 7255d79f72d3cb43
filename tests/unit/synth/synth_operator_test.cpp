// Operator-level ground truth of synthetic captures: healthy kernel metrics in every scenario, the
// operator faults (vector_scalar_heavy, cube_underused, aicpu_fallback, block_dim_one, host_sync_heavy)
// and op_statistic.csv / api_statistic.csv consistent with kernel_details.csv. Files are parsed by hand
// (the synth test binary does not link the importers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;
using Rows = std::vector<std::vector<std::string>>;

/// A CSV with its header turned into a column lookup.
struct Table {
  std::vector<std::string> header;
  Rows rows;
  size_t col(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << "missing column " << name;
    return static_cast<size_t>(it - header.begin());
  }
  const std::string& at(size_t row, const std::string& name) const { return rows[row][col(name)]; }
  double num(size_t row, const std::string& name) const { return std::stod(at(row, name)); }
};

Table load_csv(const fs::path& p) {
  Table t;
  EXPECT_TRUE(fs::exists(p)) << p;
  t.rows = testutil::parse_csv(testutil::slurp(p));
  if (!t.rows.empty()) {
    t.header = t.rows.front();
    t.rows.erase(t.rows.begin());
  }
  return t;
}

struct Capture {
  SynthSummary summary;
  Json gt;
  fs::path folder(int rank) const {
    return summary.root / gt.at("ranks").items[static_cast<size_t>(rank)].at("folder").text / "ASCEND_PROFILER_OUTPUT";
  }
  Table kernels(int rank) const { return load_csv(folder(rank) / "kernel_details.csv"); }
  const Json* fault(const std::string& name) const {
    for (const Json& f : gt.at("faults").items)
      if (f.at("name").text == name) return &f;
    return nullptr;
  }
};

Capture generate(SynthOptions o) {
  Capture c;
  auto r = generate_capture(o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return c;
  c.summary = r.value();
  std::string err;
  EXPECT_TRUE(testutil::parse_json(testutil::slurp(c.summary.ground_truth), c.gt, err)) << err;
  return c;
}

SynthOptions options(const std::string& scenario, const fs::path& out, int ranks = 4, int steps = 2) {
  SynthOptions o;
  o.scenario = scenario;
  o.out_dir = out;
  o.ranks = ranks;
  o.steps = steps;
  o.seed = 11;
  if (scenario == "glm5_mtp") o.layers = 10;
  return o;
}

bool is_vector(const std::string& core) { return core == "AI_VECTOR_CORE" || core == "MIX_AIV"; }
bool is_cube(const std::string& core) { return core == "AI_CORE" || core == "MIX_AIC"; }

/// Every limit of a healthy kernel row; `skip` = (rank, kernel name) pairs a fault changes. Returns the
/// violations (empty = healthy).
std::vector<std::string> unhealthy(const Capture& c, const std::set<std::pair<int, std::string>>& skip = {}) {
  std::vector<std::string> bad;
  auto note = [&](int rank, const std::string& name, const std::string& what) {
    if (bad.size() < 40) bad.push_back("rank " + std::to_string(rank) + " " + name + ": " + what);
  };
  const int ranks = static_cast<int>(c.gt.at("ranks").items.size());
  for (int r = 0; r < ranks; ++r) {
    const Table t = c.kernels(r);
    std::map<std::string, std::pair<double, double>> wait_by_name;  // name -> (wait, dur + wait)
    for (size_t i = 0; i < t.rows.size(); ++i) {
      const std::string& name = t.at(i, "Name");
      const std::string& core = t.at(i, "Accelerator Core");
      if (skip.count({r, name})) continue;
      if (core == "COMMUNICATION") {
        for (const char* m : {"aic_mac_ratio", "aiv_vec_ratio", "cube_utilization(%)", "Block Dim"})
          if (t.at(i, m) != "N/A" && std::string(m) != "Block Dim") note(r, name, std::string(m) + " not N/A");
        continue;
      }
      if (core == "AI_CPU") {
        note(r, name, "AI_CPU kernel in a healthy capture");
        continue;
      }
      const double bd = t.num(i, "Block Dim"), mbd = t.num(i, "Mix Block Dim");
      const bool mix = core == "MIX_AIC" || core == "MIX_AIV";
      if (core == "AI_CORE" || core == "MIX_AIC") {
        if (bd != 20) note(r, name, "Block Dim " + t.at(i, "Block Dim"));
      } else if (bd < 8) {
        note(r, name, "Block Dim " + t.at(i, "Block Dim"));
      }
      if (mbd != (mix ? 40 : 0)) note(r, name, "Mix Block Dim " + t.at(i, "Mix Block Dim"));
      if (is_cube(core)) {
        const double cu = t.num(i, "cube_utilization(%)");
        if (cu < 55 || cu > 90) note(r, name, "cube_utilization " + t.at(i, "cube_utilization(%)"));
        if (t.num(i, "aic_mac_ratio") < 0.5) note(r, name, "aic_mac_ratio " + t.at(i, "aic_mac_ratio"));
        if (t.num(i, "aic_mte2_ratio") > 0.5) note(r, name, "aic_mte2_ratio " + t.at(i, "aic_mte2_ratio"));
        if (t.num(i, "aic_scalar_ratio") > 0.2) note(r, name, "aic_scalar_ratio " + t.at(i, "aic_scalar_ratio"));
      }
      if (is_vector(core)) {
        if (t.num(i, "aiv_scalar_ratio") > 0.25) note(r, name, "aiv_scalar_ratio " + t.at(i, "aiv_scalar_ratio"));
        if (t.num(i, "aiv_mte2_ratio") > 0.5) note(r, name, "aiv_mte2_ratio " + t.at(i, "aiv_mte2_ratio"));
        if (t.num(i, "aiv_vec_ratio") < 0.3) note(r, name, "aiv_vec_ratio " + t.at(i, "aiv_vec_ratio"));
      }
      // metric columns of a core the kernel does not use are 0
      if (core == "AI_VECTOR_CORE")
        for (const char* m : {"aicore_time(us)", "aic_mac_ratio", "aic_mte2_ratio", "cube_utilization(%)"})
          if (t.num(i, m) != 0) note(r, name, std::string(m) + " on a vector kernel");
      if (core == "AI_CORE")
        for (const char* m : {"aiv_time(us)", "aiv_vec_ratio", "aiv_scalar_ratio"})
          if (t.num(i, m) != 0) note(r, name, std::string(m) + " on a cube kernel");
      auto& w = wait_by_name[name];
      w.first += t.num(i, "Wait Time(us)");
      w.second += t.num(i, "Duration(us)") + t.num(i, "Wait Time(us)");
    }
    for (const auto& [name, w] : wait_by_name)
      if (w.second > 0 && w.first / w.second >= 0.3)
        note(r, name, "wait share " + std::to_string(w.first / w.second));
  }
  return bad;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// ---- healthy baseline ----

struct HealthCase {
  const char* scenario;
  int pp;
  bool dummy;
};

class SynthHealthy : public ::testing::TestWithParam<HealthCase> {};

TEST_P(SynthHealthy, EveryKernelLooksHealthy) {
  testing::ScratchDir dir("synth_healthy");
  SynthOptions o = options(GetParam().scenario, dir.path());
  o.pp = GetParam().pp;
  if (GetParam().dummy) o.dummy_ranks = {3};
  const Capture c = generate(o);
  ASSERT_FALSE(c.summary.ranks.empty());
  const auto bad = unhealthy(c);
  EXPECT_TRUE(bad.empty()) << join(bad);
}

INSTANTIATE_TEST_SUITE_P(All, SynthHealthy,
                         ::testing::Values(HealthCase{"dense_gqa", 0, false}, HealthCase{"moe_mla_decode", 0, false},
                                           HealthCase{"moe_mla_decode", 0, true}, HealthCase{"glm5_mtp", 0, false},
                                           HealthCase{"training", 0, false}, HealthCase{"training", 2, false}),
                         [](const auto& p) {
                           return std::string(p.param.scenario) + (p.param.pp > 1 ? "_pp" : "") +
                                  (p.param.dummy ? "_dummy" : "");
                         });


// ---- op_statistic.csv / api_statistic.csv ----

/// "123.456" -> 123456 (exact; kernel_details and op_statistic times carry 3 decimals).
int64_t ns_of(const std::string& us) {
  const size_t dot = us.find('.');
  int64_t v = std::stoll(us.substr(0, dot)) * 1000;
  if (dot != std::string::npos) {
    std::string frac = us.substr(dot + 1, 3);
    while (frac.size() < 3) frac += '0';
    v += std::stoll(frac);
  }
  return v;
}

/// First row start to last row end of kernel_details (us).
double kernel_span_us(const Table& t) {
  double first = 1e300, last = 0;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    std::string st = t.at(i, "Start Time(us)");
    if (!st.empty() && st.back() == '\t') st.pop_back();
    first = std::min(first, std::stod(st));
    last = std::max(last, std::stod(st) + t.num(i, "Duration(us)"));
  }
  return last - first;
}

void check_statistics(const Capture& c, int rank) {
  SCOPED_TRACE("rank " + std::to_string(rank));
  const Table k = c.kernels(rank);
  struct Agg {
    uint64_t count = 0;
    int64_t total = 0, min = INT64_MAX, max = 0;
  };
  std::map<std::pair<std::string, std::string>, Agg> by_type;
  std::map<std::string, uint64_t> by_api;
  uint64_t compute = 0;
  const std::string device = c.gt.at("ranks").items[static_cast<size_t>(rank)].at("device_id").text;
  for (size_t i = 0; i < k.rows.size(); ++i) {
    if (k.at(i, "Accelerator Core") == "COMMUNICATION") continue;
    ++compute;
    Agg& a = by_type[{k.at(i, "Type"), k.at(i, "Accelerator Core")}];
    const int64_t d = ns_of(k.at(i, "Duration(us)"));
    ++a.count;
    a.total += d;
    a.min = std::min(a.min, d);
    a.max = std::max(a.max, d);
    const std::string& name = k.at(i, "Name");
    ++by_api[name.substr(0, name.find('_'))];
  }
  const fs::path out = c.folder(rank);
  const Table os = load_csv(out / "op_statistic.csv");
  EXPECT_EQ(os.header, (std::vector<std::string>{"Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                                                 "Avg Time(us)", "Max Time(us)", "Ratio(%)"}));
  ASSERT_EQ(os.rows.size(), by_type.size());
  double ratio_sum = 0, prev_total = 1e300;
  for (size_t i = 0; i < os.rows.size(); ++i) {
    const auto it = by_type.find({os.at(i, "OP Type"), os.at(i, "Core Type")});
    ASSERT_NE(it, by_type.end()) << os.at(i, "OP Type");
    const Agg& a = it->second;
    EXPECT_EQ(os.at(i, "Device_id"), device);
    EXPECT_EQ(std::stoull(os.at(i, "Count")), a.count) << os.at(i, "OP Type");
    EXPECT_EQ(ns_of(os.at(i, "Total Time(us)")), a.total) << os.at(i, "OP Type");
    EXPECT_EQ(ns_of(os.at(i, "Min Time(us)")), a.min);
    EXPECT_EQ(ns_of(os.at(i, "Max Time(us)")), a.max);
    EXPECT_NEAR(static_cast<double>(ns_of(os.at(i, "Avg Time(us)"))), static_cast<double>(a.total) / static_cast<double>(a.count), 1.0);
    EXPECT_LE(os.num(i, "Total Time(us)"), prev_total) << "sorted by Total Time desc";
    prev_total = os.num(i, "Total Time(us)");
    EXPECT_EQ(os.at(i, "Ratio(%)").size() - os.at(i, "Ratio(%)").find('.'), 4u) << "3 decimals";
    ratio_sum += os.num(i, "Ratio(%)");
  }
  EXPECT_NEAR(ratio_sum, 100.0, 0.01 * static_cast<double>(os.rows.size()));

  const Table as = load_csv(out / "api_statistic.csv");
  EXPECT_EQ(as.header, (std::vector<std::string>{"Device_id", "Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)",
                                                 "Max(us)", "Variance"}));
  std::map<std::string, size_t> api_row;
  for (size_t i = 0; i < as.rows.size(); ++i) {
    EXPECT_EQ(as.at(i, "Device_id"), "host");
    api_row[as.at(i, "API Name")] = i;
    EXPECT_LE(as.num(i, "Min(us)"), as.num(i, "Avg(us)") + 1e-9);
    EXPECT_LE(as.num(i, "Avg(us)"), as.num(i, "Max(us)") + 1e-9);
    EXPECT_NEAR(as.num(i, "Avg(us)") * as.num(i, "Count"), as.num(i, "Time(us)"), 0.001 * as.num(i, "Count") + 0.01);
    EXPECT_GE(as.num(i, "Variance"), 0);
  }
  for (const auto& [api, n] : by_api) {
    ASSERT_TRUE(api_row.count(api)) << api;
    const size_t i = api_row[api];
    EXPECT_EQ(as.at(i, "Level"), "acl");
    EXPECT_EQ(std::stoull(as.at(i, "Count")), n) << api;
    EXPECT_GE(as.num(i, "Avg(us)"), 5) << api;
    EXPECT_LE(as.num(i, "Avg(us)"), 40) << api;
  }
  ASSERT_TRUE(api_row.count("KernelLaunch"));
  ASSERT_TRUE(api_row.count("StreamSynchronize"));
  const size_t kl = api_row["KernelLaunch"], ss = api_row["StreamSynchronize"];
  EXPECT_EQ(as.at(kl, "Level"), "runtime");
  EXPECT_EQ(std::stoull(as.at(kl, "Count")), compute) << "one launch per compute kernel row";
  EXPECT_EQ(as.at(ss, "Level"), "runtime");
  EXPECT_EQ(as.num(ss, "Count"), c.gt.at("steps_per_rank").num);
  EXPECT_EQ(as.rows.size(), by_api.size() + 2);
}

TEST(SynthStatistics, AggregateTheKernelRowsOfEveryRank) {
  for (const char* scenario : {"moe_mla_decode", "dense_gqa", "training", "glm5_mtp"}) {
    SCOPED_TRACE(scenario);
    testing::ScratchDir dir("synth_stats");
    SynthOptions o = options(scenario, dir.path());
    o.faults = {"exposed_aicpu:2"};  // AI_CPU rows are compute rows too
    const Capture c = generate(o);
    const Json& files = c.gt.at("ranks").items[0].at("bytes");
    EXPECT_EQ(files.at("op_statistic.csv").num, static_cast<double>(fs::file_size(c.folder(0) / "op_statistic.csv")));
    EXPECT_EQ(files.at("api_statistic.csv").num, static_cast<double>(fs::file_size(c.folder(0) / "api_statistic.csv")));
    for (int r = 0; r < 4; ++r) {
      check_statistics(c, r);
      // healthy host: synchronisation and launches are small next to the device span
      const Table as = load_csv(c.folder(r) / "api_statistic.csv");
      const double span = kernel_span_us(c.kernels(r));
      for (size_t i = 0; i < as.rows.size(); ++i) {
        if (as.at(i, "API Name") == "StreamSynchronize") {
          EXPECT_LT(as.num(i, "Time(us)"), 0.1 * span);
        }
        if (as.at(i, "API Name") == "KernelLaunch") {
          EXPECT_LT(as.num(i, "Time(us)"), 0.3 * span);
        }
      }
    }
  }
}

// ---- operator faults ----

/// Columns that define what a kernel row is and how it behaves (timestamps and waits excluded).
const std::vector<std::string> kIdentity = {
    "Name", "Type", "Accelerator Core", "Block Dim", "Mix Block Dim", "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio",
    "aic_mte2_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio",
    "cube_utilization(%)"};

bool waits_for_peers(const std::string& type) { return type.rfind("MoeDistribute", 0) == 0 || type.rfind("hcom_", 0) == 0; }

/// Compares two kernel_details tables row by row (after dropping the rows `drop` selects from `b`):
/// identity columns equal, durations equal except kernels that wait for peers. Returns the indices (in
/// `b`) of the rows that differ.
std::vector<size_t> differing_rows(const Table& a, const Table& b, const std::string& drop = "") {
  std::vector<size_t> kept;
  for (size_t i = 0; i < b.rows.size(); ++i)
    if (drop.empty() || b.at(i, "Name") != drop) kept.push_back(i);
  EXPECT_EQ(kept.size(), a.rows.size());
  std::vector<size_t> diff;
  for (size_t j = 0; j < std::min(kept.size(), a.rows.size()); ++j) {
    const size_t i = kept[j];
    bool same = true;
    for (const auto& col : kIdentity) same = same && a.at(j, col) == b.at(i, col);
    if (!waits_for_peers(a.at(j, "Type"))) same = same && a.at(j, "Duration(us)") == b.at(i, "Duration(us)");
    if (!same) diff.push_back(i);
  }
  return diff;
}

struct FaultRun {
  Capture base, fault;
  const Json* entry = nullptr;
  std::string target;
};

FaultRun run_fault(const fs::path& dir, const std::string& scenario, const std::string& spec) {
  FaultRun f;
  SynthOptions o = options(scenario, dir / "base");
  f.base = generate(o);
  o.out_dir = dir / "fault";
  o.faults = {spec};
  f.fault = generate(o);
  f.entry = f.fault.fault(spec.substr(0, spec.find(':')));
  EXPECT_NE(f.entry, nullptr);
  if (f.entry != nullptr) f.target = f.entry->at("kernel").at("name").text;
  return f;
}

/// Position (0-based) of `name` among the rank's kernel names by total duration.
int hot_position(const Table& t, const std::string& name) {
  std::map<std::string, double> total;
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.at(i, "Accelerator Core") != "COMMUNICATION") total[t.at(i, "Name")] += t.num(i, "Duration(us)");
  int pos = 0;
  for (const auto& [n, v] : total)
    if (v > total[name]) ++pos;
  return pos;
}

class SynthOperatorFault : public ::testing::TestWithParam<const char*> {};

TEST_P(SynthOperatorFault, VectorScalarHeavyChangesOneKernelName) {
  testing::ScratchDir dir("synth_vsh");
  const FaultRun f = run_fault(dir.path(), GetParam(), "vector_scalar_heavy:1");
  ASSERT_NE(f.entry, nullptr);
  const Json& k = f.entry->at("kernel");
  EXPECT_EQ(k.at("accelerator_core").text, "AI_VECTOR_CORE");
  EXPECT_EQ(k.at("values").at("aiv_scalar_ratio").num, 0.7);
  EXPECT_EQ(k.at("values").at("aiv_vec_ratio").num, 0.1);
  for (int r = 0; r < 4; ++r) {
    const Table a = f.base.kernels(r), b = f.fault.kernels(r);
    if (r != 1) {
      EXPECT_EQ(testutil::slurp(f.base.folder(r) / "kernel_details.csv"), testutil::slurp(f.fault.folder(r) / "kernel_details.csv"));
      continue;
    }
    const auto diff = differing_rows(a, b);
    uint64_t calls = 0;
    for (size_t i = 0; i < b.rows.size(); ++i) {
      if (b.at(i, "Name") != f.target) continue;
      ++calls;
      EXPECT_EQ(b.at(i, "aiv_scalar_ratio"), "0.700");
      EXPECT_EQ(b.at(i, "aiv_vec_ratio"), "0.100");
      EXPECT_EQ(b.at(i, "Block Dim"), a.at(i, "Block Dim"));
      EXPECT_EQ(b.at(i, "Duration(us)"), a.at(i, "Duration(us)"));
    }
    EXPECT_EQ(calls, diff.size());
    for (const size_t i : diff) EXPECT_EQ(b.at(i, "Name"), f.target);
    EXPECT_EQ(k.at("calls").num, static_cast<double>(calls));
    EXPECT_LT(hot_position(b, f.target), 12) << f.target << " is a hot operator";
  }
}

TEST_P(SynthOperatorFault, CubeUnderusedChangesOneMatmul) {
  testing::ScratchDir dir("synth_cube");
  const FaultRun f = run_fault(dir.path(), GetParam(), "cube_underused:2");
  ASSERT_NE(f.entry, nullptr);
  const Json& k = f.entry->at("kernel");
  EXPECT_EQ(k.at("accelerator_core").text, "AI_CORE");
  EXPECT_EQ(k.at("values").at("cube_utilization(%)").num, 20);
  for (int r = 0; r < 4; ++r) {
    const Table a = f.base.kernels(r), b = f.fault.kernels(r);
    const auto diff = differing_rows(a, b);
    if (r != 2) {
      EXPECT_TRUE(diff.empty()) << "rank " << r;
      continue;
    }
    ASSERT_FALSE(diff.empty());
    uint64_t calls = 0;
    for (size_t i = 0; i < b.rows.size(); ++i) {
      if (b.at(i, "Name") != f.target) continue;
      ++calls;
      EXPECT_EQ(b.at(i, "cube_utilization(%)"), "20.000");
      EXPECT_EQ(b.at(i, "aic_mac_ratio"), "0.180");
      EXPECT_EQ(b.at(i, "aic_mte2_ratio"), "0.720");
    }
    EXPECT_EQ(calls, diff.size());
    for (const size_t i : diff) EXPECT_EQ(b.at(i, "Name"), f.target);
    EXPECT_LT(hot_position(b, f.target), 6) << f.target;
  }
  EXPECT_TRUE(unhealthy(f.fault, {{2, f.target}}).empty()) << join(unhealthy(f.fault, {{2, f.target}}));
}

TEST_P(SynthOperatorFault, BlockDimOneStretchesOneVectorKernel) {
  testing::ScratchDir dir("synth_bd1");
  const FaultRun f = run_fault(dir.path(), GetParam(), "block_dim_one:3");
  ASSERT_NE(f.entry, nullptr);
  EXPECT_EQ(f.entry->at("kernel").at("accelerator_core").text, "AI_VECTOR_CORE");
  for (int r = 0; r < 4; ++r) {
    const Table a = f.base.kernels(r), b = f.fault.kernels(r);
    const auto diff = differing_rows(a, b);
    if (r != 3) {
      EXPECT_TRUE(diff.empty()) << "rank " << r << ": only peer waits change";
      continue;
    }
    uint64_t calls = 0;
    for (size_t i = 0; i < b.rows.size(); ++i) {
      if (b.at(i, "Name") != f.target) continue;
      ++calls;
      EXPECT_EQ(b.at(i, "Block Dim"), "1");
      EXPECT_NEAR(b.num(i, "Duration(us)") / a.num(i, "Duration(us)"), 8.0, 0.01);
      EXPECT_GE(b.num(i, "Duration(us)"), 10.0);
    }
    EXPECT_GT(calls, 0u);
    EXPECT_EQ(calls, diff.size());
    for (const size_t i : diff) EXPECT_EQ(b.at(i, "Name"), f.target);
    EXPECT_LT(hot_position(b, f.target), 6) << f.target;
  }
  EXPECT_TRUE(unhealthy(f.fault, {{3, f.target}}).empty()) << join(unhealthy(f.fault, {{3, f.target}}));
}

TEST_P(SynthOperatorFault, AicpuFallbackInsertsOneAicpuKernelPerLayer) {
  testing::ScratchDir dir("synth_fallback");
  const FaultRun f = run_fault(dir.path(), GetParam(), "aicpu_fallback:1");
  ASSERT_NE(f.entry, nullptr);
  EXPECT_EQ(f.target, "aclnnIndexPut_IndexPutAiCpu_IndexPut");
  EXPECT_EQ(f.entry->at("kernel").at("accelerator_core").text, "AI_CPU");
  EXPECT_EQ(f.entry->at("kernel").at("type").text, "IndexPut");
  uint64_t layers = 0;
  for (const Json& s : f.fault.gt.at("steps").items) layers += static_cast<uint64_t>(s.at("layer_count").num);
  if (f.fault.gt.at("parallel").at("pp").num > 1) layers /= static_cast<uint64_t>(f.fault.gt.at("parallel").at("pp").num);
  for (int r = 0; r < 4; ++r) {
    const Table a = f.base.kernels(r), b = f.fault.kernels(r);
    const auto diff = differing_rows(a, b, r == 1 ? f.target : "");
    EXPECT_TRUE(diff.empty()) << "rank " << r << ": the other kernels keep their values";
    if (r != 1) continue;
    uint64_t calls = 0;
    for (size_t i = 0; i < b.rows.size(); ++i) {
      if (b.at(i, "Name") != f.target) continue;
      ++calls;
      EXPECT_EQ(b.at(i, "Accelerator Core"), "AI_CPU");
      EXPECT_EQ(b.at(i, "Type"), "IndexPut");
      EXPECT_EQ(b.at(i, "Block Dim"), "1");
      EXPECT_GT(b.num(i, "Duration(us)"), 250);
      EXPECT_EQ(b.at(i, "aic_mac_ratio"), "N/A");
      ASSERT_GT(i, 0u);
      EXPECT_NE(b.at(i - 1, "Name"), f.target);
    }
    EXPECT_EQ(calls, layers) << "once per layer";
    EXPECT_EQ(f.entry->at("op_count").num, static_cast<double>(calls));
    EXPECT_LT(hot_position(b, f.target), 6) << "a hot operator (300 us per layer)";
  }
}

TEST_P(SynthOperatorFault, HostSyncHeavyOnlyChangesApiStatistic) {
  testing::ScratchDir dir("synth_sync");
  SynthOptions o = options(GetParam(), dir / "base");
  const Capture base = generate(o);
  o.out_dir = dir / "fault";
  o.faults = {"host_sync_heavy:0"};
  const Capture fault = generate(o);
  const Json* e = fault.fault("host_sync_heavy");
  ASSERT_NE(e, nullptr);
  for (int r = 0; r < 4; ++r)
    for (const char* file : {"kernel_details.csv", "trace_view.json", "op_statistic.csv"})
      EXPECT_EQ(testutil::slurp(base.folder(r) / file), testutil::slurp(fault.folder(r) / file)) << r << " " << file;
  for (int r = 1; r < 4; ++r)
    EXPECT_EQ(testutil::slurp(base.folder(r) / "api_statistic.csv"), testutil::slurp(fault.folder(r) / "api_statistic.csv"));
  const Table as = load_csv(fault.folder(0) / "api_statistic.csv");
  const double span = kernel_span_us(fault.kernels(0));
  bool found = false;
  for (size_t i = 0; i < as.rows.size(); ++i) {
    if (as.at(i, "API Name") != "StreamSynchronize") continue;
    found = true;
    EXPECT_NEAR(as.num(i, "Time(us)") / span, 0.4, 0.001);
    EXPECT_EQ(as.num(i, "Count"), fault.gt.at("steps_per_rank").num);
    EXPECT_NEAR(std::stod(e->at("api").at("total_us").text), as.num(i, "Time(us)"), 0.01);
  }
  EXPECT_TRUE(found);
  check_statistics(fault, 0);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SynthOperatorFault,
                         ::testing::Values("moe_mla_decode", "dense_gqa", "glm5_mtp", "training"));

TEST(SynthOperatorFaults, NamesAreListedAndRankChecked) {
  const auto names = fault_names();
  for (const char* n : {"vector_scalar_heavy", "cube_underused", "aicpu_fallback", "block_dim_one", "host_sync_heavy"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  testing::ScratchDir dir("synth_opfault_err");
  SynthOptions o = options("dense_gqa", dir.path());
  o.faults = {"cube_underused:9"};
  const auto r = generate_capture(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("rank must be an integer in [0, 3]"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace ascprof::synth
