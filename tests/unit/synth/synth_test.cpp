#include "ascprof/synth/synth.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "synth/text_sink.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;

const char* const kE3Header =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
    "Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,"
    "aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),"
    "aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),"
    "aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)";
const char* const kStepTraceHeader =
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
    "Communication(Not Overlapped and Exclude Receive),Preparing";

// kernel_details columns used below
constexpr size_t kColStep = 0, kColName = 5, kColType = 6, kColCore = 8, kColStart = 9, kColDur = 10;

Json load_json(const fs::path& p) {
  Json j;
  std::string err;
  const std::string text = testutil::slurp(p);
  EXPECT_TRUE(testutil::parse_json(text, j, err)) << p << ": " << err;
  return j;
}

struct Generated {
  SynthSummary summary;
  Json gt;
};

Generated generate(const SynthOptions& o) {
  auto r = generate_capture(o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  Generated g;
  g.summary = r.value();
  g.gt = load_json(g.summary.ground_truth);
  return g;
}

SynthOptions options(const std::string& scenario, const fs::path& out, int ranks = 4, int steps = 2) {
  SynthOptions o;
  o.scenario = scenario;
  o.out_dir = out;
  o.ranks = ranks;
  o.steps = steps;
  o.seed = 7;
  return o;
}

fs::path folder_of(const Generated& g, int rank) {
  return g.summary.root / g.gt.at("ranks").items[static_cast<size_t>(rank)].at("folder").text;
}

std::vector<std::vector<std::string>> kernel_rows(const fs::path& folder) {
  auto rows = testutil::parse_csv(testutil::slurp(folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"));
  if (!rows.empty()) rows.erase(rows.begin());
  return rows;
}

double col(const std::vector<std::string>& r, size_t c) { return std::stod(r[c]); }

uint64_t gt_u(const Json& j, std::initializer_list<const char*> path) {
  const Json* cur = &j;
  for (const char* k : path) cur = &cur->at(k);
  return static_cast<uint64_t>(cur->num);
}

// ---- the checks every generated rank must pass ----

void check_kernel_details(const fs::path& folder, const Json& rank_gt, std::set<std::string>& names_out) {
  const std::string text = testutil::slurp(folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv");
  ASSERT_EQ(text.substr(0, std::string(kE3Header).size() + 2), std::string(kE3Header) + "\r\n");
  bool crlf = false;
  auto rows = testutil::parse_csv(text, &crlf);
  EXPECT_TRUE(crlf) << "every line must end with CRLF";
  ASSERT_FALSE(rows.empty());
  rows.erase(rows.begin());
  EXPECT_EQ(rows.size(), gt_u(rank_gt, {"counts", "kernel_rows"}));
  uint64_t comm = 0;
  double prev = 0;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 47u);
    ASSERT_FALSE(r[kColStart].empty());
    EXPECT_EQ(r[kColStart].back(), '\t') << "Start Time(us) carries the trailing TAB";
    const std::string start = r[kColStart].substr(0, r[kColStart].size() - 1);
    EXPECT_EQ(start.size() - start.find('.'), 4u) << "3 decimals: " << start;
    const double s = std::stod(start);
    EXPECT_GE(s, prev) << "rows sorted by start";
    prev = s;
    EXPECT_EQ(r[1], std::to_string(static_cast<int>(rank_gt.at("device_id").num)));
    if (r[kColCore] == "COMMUNICATION") {
      ++comm;
      EXPECT_EQ(r[3], "N/A");
      EXPECT_EQ(r[kColName].rfind("hcom_", 0), 0u);
      EXPECT_EQ(r[kColName].rfind(r[kColType] + "_", 0), 0u) << "Type is the name up to the digits";
    } else {
      ASSERT_GE(r[15].size(), 2u);
      EXPECT_EQ(r[15].front(), '"') << "shapes keep their inner quotes";
      EXPECT_EQ(r[15].back(), '"');
    }
    names_out.insert(r[kColName]);
  }
  EXPECT_EQ(comm, gt_u(rank_gt, {"counts", "kernel_rows_communication"}));
}

void check_trace(const fs::path& folder, const Json& rank_gt) {
  const Json tv = load_json(folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json");
  ASSERT_EQ(tv.type, Json::Type::kArray) << "bare array";
  const Json& counts = rank_gt.at("counts");
  EXPECT_EQ(tv.items.size(), gt_u(counts, {"trace_events"}));
  std::map<std::string, uint64_t> by_ph;
  std::map<double, std::string> process;              // pid -> process_name
  std::map<std::pair<double, double>, std::string> thread;
  bool m_after_x = false, seen_x = false;
  for (const Json& e : tv.items) {
    const std::string ph = e.at("ph").text;
    ++by_ph[ph];
    if (ph == "X") seen_x = true;
    if (ph == "M") {
      if (seen_x) m_after_x = true;
      if (e.at("name").text == "process_name") process[e.at("pid").num] = e.at("args").at("name").text;
      if (e.at("name").text == "thread_name") thread[{e.at("pid").num, e.at("tid").num}] = e.at("args").at("name").text;
    } else {
      EXPECT_TRUE(e.at("ts").is_string()) << "ts is a string";
    }
  }
  EXPECT_TRUE(m_after_x) << "some metadata must follow X events";
  for (const char* ph : {"X", "M", "s", "f", "C"})
    EXPECT_EQ(by_ph[ph], gt_u(counts, {"trace_by_ph", ph})) << "ph " << ph;

  std::map<std::string, uint64_t> kinds;
  std::set<std::tuple<std::string, std::string, std::string>> device, comm;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> flows;
  for (const Json& e : tv.items) {
    const std::string ph = e.at("ph").text;
    if (ph == "s" || ph == "f") {
      const Json& id = e.at("id");
      flows[{e.at("cat").text, id.is_string() ? id.text : id.text}].push_back(ph);
      continue;
    }
    if (ph != "X") continue;
    const std::string p = process[e.at("pid").num];
    ASSERT_FALSE(p.empty()) << "X event on a pid without process_name";
    if (p == "Ascend Hardware") {
      ++kinds["device"];
      const std::string& stream = thread[std::make_pair(e.at("pid").num, e.at("tid").num)];
      EXPECT_EQ(stream.rfind("Stream ", 0), 0u) << stream;
      device.insert({e.at("name").text, e.at("ts").text, e.at("dur").text});
    } else if (p == "Communication") {
      const std::string t = thread[{e.at("pid").num, e.at("tid").num}];
      if (t.rfind("Group group_name_", 0) == 0) {
        ++kinds["comm"];
        comm.insert({e.at("name").text, e.at("ts").text, e.at("dur").text});
      } else {
        EXPECT_EQ(t.rfind("Plane ", 0), 0u) << t;
        ++kinds["plane"];
      }
    } else if (p == "Python") {
      ++kinds["python"];
      if (e.at("name").text.rfind("ProfilerStep#", 0) == 0) ++kinds["steps"];
    } else if (p == "CANN") {
      ++kinds["cann"];
    } else if (p == "Overlap Analysis") {
      ++kinds["overlap"];
    } else {
      ADD_FAILURE() << "unexpected process " << p;
    }
  }
  const Json& t = counts.at("trace_by_table");
  EXPECT_EQ(kinds["device"], gt_u(t, {"device_tasks"}));
  EXPECT_EQ(kinds["comm"], gt_u(t, {"comm_ops"}));
  EXPECT_EQ(kinds["plane"], gt_u(t, {"plane_tasks"}));
  EXPECT_EQ(kinds["python"], gt_u(t, {"python_ops"}));
  EXPECT_EQ(kinds["cann"], gt_u(t, {"cann_ops"}));
  EXPECT_EQ(kinds["python"] + kinds["cann"], gt_u(t, {"host_ops"}));
  EXPECT_EQ(kinds["overlap"], gt_u(t, {"overlap"}));
  EXPECT_EQ(kinds["steps"], gt_u(t, {"profiler_steps"}));
  uint64_t flow_events = 0;
  for (const auto& [key, phases] : flows) {
    flow_events += phases.size();
    EXPECT_EQ(phases.size(), 2u) << key.first << " " << key.second;
  }
  EXPECT_EQ(flow_events, gt_u(t, {"flows"}));

  // every kernel_details row is the same text as a trace event
  for (const auto& r : kernel_rows(folder)) {
    const std::string start = r[kColStart].substr(0, r[kColStart].size() - 1);
    const auto key = std::make_tuple(r[kColName], start, r[kColDur]);
    if (r[kColCore] == "COMMUNICATION") EXPECT_TRUE(comm.count(key)) << r[kColName] << " " << start;
    else EXPECT_TRUE(device.count(key)) << r[kColName] << " " << start;
  }
}

struct CommOp {
  double start_us, elapse, wait;
};

void check_communication(const fs::path& folder, int rank, std::map<std::string, std::map<int, CommOp>>& ops) {
  const Json meta = load_json(folder / "profiler_metadata.json");
  std::set<uint64_t> hashes;
  for (const auto& [comm_name, info] : meta.at("parallel_group_info").members) {
    EXPECT_EQ(comm_name.rfind("group_name_", 0), 0u);
    hashes.insert(double_hash(comm_name));
    EXPECT_FALSE(info.at("group_name").text.empty());
  }
  const Json cj = load_json(folder / "ASCEND_PROFILER_OUTPUT" / "communication.json");
  uint64_t n = 0;
  for (const auto& [step, kinds] : cj.members) {
    EXPECT_EQ(step.rfind("step", 0), 0u);
    ASSERT_NE(kinds.find("p2p"), nullptr);
    for (const auto& [key, op] : kinds.at("collective").members) {
      if (key == "Total Op Info") continue;
      const size_t at = key.find('@');
      ASSERT_NE(at, std::string::npos) << key;
      const std::string hash = key.substr(at + 1);
      EXPECT_TRUE(hashes.count(std::stoull(hash))) << key << " hash not of this rank's communicators";
      const size_t dd = key.find("__");
      EXPECT_EQ(key.substr(dd + 2, 3), hash.substr(hash.size() - 3)) << "hhh = last 3 digits of the hash";
      const Json& ti = op.at("Communication Time Info");
      const double elapse = ti.at("Elapse Time(ms)").num, transit = ti.at("Transit Time(ms)").num,
                   wait = ti.at("Wait Time(ms)").num, idle = ti.at("Idle Time(ms)").num;
      EXPECT_NEAR(idle, elapse - transit - wait, 1e-9);
      EXPECT_LE(ti.at("Synchronization Time(ms)").num, wait + 1e-12);
      for (const char* tr : {"RDMA", "HCCS", "PCIE", "SDMA", "SIO"})
        EXPECT_NE(op.at("Communication Bandwidth Info").find(tr), nullptr) << tr;
      ops[key][rank] = {ti.at("Start Timestamp(us)").num, elapse, wait};
      ++n;
    }
  }
  EXPECT_GT(n, 0u);
}

void check_step_trace(const fs::path& folder, const Generated& g) {
  bool crlf = false;
  const auto rows = testutil::parse_csv(testutil::slurp(folder / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"), &crlf);
  EXPECT_TRUE(crlf);
  ASSERT_FALSE(rows.empty());
  std::string header;
  for (size_t i = 0; i < rows[0].size(); ++i) header += (i ? "," : "") + rows[0][i];
  EXPECT_EQ(header, kStepTraceHeader);
  EXPECT_EQ(rows.size() - 1, static_cast<size_t>(g.gt.at("steps_per_rank").num));
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 11u);
    EXPECT_NEAR(col(rows[i], 4), col(rows[i], 5) - col(rows[i], 3), 1e-3) << "Overlapped = Comm - Comm(NotOverlapped)";
    EXPECT_NEAR(col(rows[i], 7), col(rows[i], 2) + col(rows[i], 3) + col(rows[i], 6) - col(rows[i], 8), 1e-2)
        << "Stage = Computing + NotOverlapped + Free - Bubble (pipeline receives)";
  }
}

void check_capture(const Generated& g, int ranks) {
  ASSERT_EQ(g.summary.ranks.size(), static_cast<size_t>(ranks));
  const std::regex folder_re(R"(^synth-node\d\d_\d+_\d{17}_ascend_pt$)");
  int folders = 0;
  for (const auto& e : fs::directory_iterator(g.summary.root)) {
    if (!e.is_directory()) continue;
    ++folders;
    EXPECT_TRUE(std::regex_match(e.path().filename().string(), folder_re)) << e.path();
  }
  EXPECT_EQ(folders, ranks);
  std::map<std::string, std::map<int, CommOp>> ops;
  for (int r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const Json& rg = g.gt.at("ranks").items[static_cast<size_t>(r)];
    EXPECT_EQ(static_cast<int>(rg.at("rank_id").num), r);
    const fs::path folder = folder_of(g, r);
    const Json info = load_json(folder / ("profiler_info_" + std::to_string(r) + ".json"));
    EXPECT_EQ(info.at("rank_id").type, Json::Type::kString);
    EXPECT_EQ(info.at("rank_id").text, std::to_string(r));
    EXPECT_EQ(info.at("config").at("experimental_config").at("_profiler_level").text, "Level1");
    std::set<std::string> names;
    check_kernel_details(folder, rg, names);
    check_trace(folder, rg);
    if (ranks > 1) check_communication(folder, r, ops);
    check_step_trace(folder, g);
    EXPECT_EQ(g.summary.ranks[static_cast<size_t>(r)].kernel_rows, gt_u(rg, {"counts", "kernel_rows"}));
  }
  // cross-rank: the same op@hash on every member; the last arriver waits least
  std::map<uint64_t, std::vector<int>> members;
  for (const Json& grp : g.gt.at("groups").items) {
    std::vector<int> rs;
    for (const Json& r : grp.at("global_ranks").items) rs.push_back(static_cast<int>(r.num));
    members[std::stoull(grp.at("hash").text)] = rs;
  }
  for (const auto& [key, by_rank] : ops) {
    const uint64_t h = std::stoull(key.substr(key.find('@') + 1));
    std::vector<int> seen;
    for (const auto& [r, op] : by_rank) seen.push_back(r);
    EXPECT_EQ(seen, members[h]) << key;
    const auto latest = std::max_element(by_rank.begin(), by_rank.end(),
                                         [](const auto& a, const auto& b) { return a.second.start_us < b.second.start_us; });
    for (const auto& [r, op] : by_rank) EXPECT_LE(latest->second.wait, op.wait + 1e-3) << key << " rank " << r;  // starts are doubles: ~0.25 us ulp
  }
}

// ---- tests ----

TEST(Synth, ScenarioAndFaultNames) {
  EXPECT_EQ(scenario_names(), (std::vector<std::string>{"dense_gqa", "glm5_mtp", "moe_mla_decode", "training"}));
  const auto f = fault_names();
  for (const char* n : {"slow_rank", "ep_imbalance", "slow_collective", "idle_bubble", "exposed_aicpu", "host_bound",
                        "interior_island"})
    EXPECT_NE(std::find(f.begin(), f.end(), n), f.end()) << n;
}

TEST(Synth, DoubleHashMatchesMsprofAnalyze) {
  EXPECT_EQ(double_hash("group_name_0"), 5862276093215481612ULL);
  EXPECT_EQ(double_hash("group_name_19"), 3985310405473756128ULL);
  EXPECT_EQ(double_hash("10.174.216.241%enp189s0f1_55000_0_1738895506630464"), 6960437680420871035ULL);
}

TEST(Synth, ParseRankList) {
  auto r = parse_rank_list("3, 1,5-6,1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), (std::vector<int>{1, 3, 5, 6}));
  EXPECT_TRUE(parse_rank_list("").value().empty());
  EXPECT_FALSE(parse_rank_list("a").ok());
  EXPECT_FALSE(parse_rank_list("4-2").ok());
  EXPECT_FALSE(parse_rank_list("-1").ok());
}

TEST(Synth, TextSinkNumberFormats) {
  testing::ScratchDir dir("synth_sink");
  TextSink s;
  ASSERT_TRUE(s.open(dir / "x.txt", 1).ok());
  s.us3(1764246877073569640);
  s.put('|');
  s.us3(5);
  s.put('|');
  s.us_trim(12500);
  s.put('|');
  s.us_trim(3000);
  s.put('|');
  s.us6(1881080);
  s.put('|');
  s.milli3(512);
  s.put('|');
  s.dbl(2.0);
  s.put('|');
  s.dbl(0.1);
  s.put('|');
  s.us3(-1500);
  ASSERT_TRUE(s.close().ok());
  EXPECT_EQ(testutil::slurp(dir / "x.txt"), "1764246877073569.640|0.005|12.5|3.0|1881.080000|0.512|2.0|0.1|-1.500");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "the temporary file was renamed into place";
}

class SynthScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(SynthScenario, WritesConsistentCapture) {
  testing::ScratchDir dir("synth_scn");
  const Generated g = generate(options(GetParam(), dir.path()));
  ASSERT_FALSE(g.summary.ranks.empty());
  EXPECT_EQ(g.gt.at("scenario").text, GetParam());
  EXPECT_EQ(g.gt.at("steps").items.size(), 2u);
  check_capture(g, 4);
  EXPECT_EQ(g.summary.total_bytes, [&] {
    uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(g.summary.root))
      if (e.is_regular_file()) n += e.file_size();
    return n;
  }());
}

INSTANTIATE_TEST_SUITE_P(All, SynthScenario, ::testing::Values("moe_mla_decode", "dense_gqa", "training", "glm5_mtp"));

TEST(Synth, MoeLayersAndSelection) {
  testing::ScratchDir dir("synth_moe");
  const Generated g = generate(options("moe_mla_decode", dir.path(), 2, 2));
  const Json& step = g.gt.at("steps").items[0];
  EXPECT_EQ(step.at("main_layers").num, 10);
  EXPECT_EQ(step.at("speculative_layers").num, 2);
  ASSERT_EQ(step.at("layers").items.size(), 12u);
  EXPECT_EQ(step.at("layers").items[0].at("kind").text, "dense");
  EXPECT_EQ(step.at("layers").items[9].at("kind").text, "moe");
  EXPECT_EQ(step.at("layers").items[10].at("role").text, "speculative");
  const auto rows = kernel_rows(folder_of(g, 0));
  std::map<std::string, int> per_step_counts;
  int argmax = 0, mla = 0, norm_heads = 0;
  for (const auto& r : rows) {
    if (r[kColStep] != "1") continue;
    if (r[kColType] == "ArgMaxV2") ++argmax;
    if (r[kColType] == "MlaPreprocess") ++mla;
    if (r[kColType] == "AddRmsNorm") ++norm_heads;
  }
  EXPECT_EQ(argmax, 3) << "main body + 2 MTP layers each end with an argmax";
  EXPECT_EQ(mla, 12);
  EXPECT_GT(norm_heads, 12);
  // ground-truth rows point at the right kernels
  const Json& s0 = g.gt.at("ranks").items[0].at("steps").items[0];
  for (size_t l = 0; l < 12; ++l) {
    const auto anchor = static_cast<size_t>(s0.at("layer_anchor_row").items[l].num);
    EXPECT_EQ(rows[anchor][kColType], "MlaPreprocess");
    const auto first = static_cast<size_t>(s0.at("layer_first_row").items[l].num);
    EXPECT_LT(first, anchor);
    EXPECT_NE(rows[first][kColType].find("Norm"), std::string::npos) << rows[first][kColType];
  }
}

TEST(Synth, TrainingLayersCarryRolesAndMicrobatches) {
  testing::ScratchDir dir("synth_train");
  SynthOptions o = options("training", dir.path(), 4, 1);
  o.layers = 3;
  o.microbatches = 2;
  const Generated g = generate(o);
  const Json& layers = g.gt.at("steps").items[0].at("layers");
  ASSERT_EQ(layers.items.size(), 12u);  // 2 microbatches x (3 forward + 3 backward)
  EXPECT_EQ(layers.items[0].at("role").text, "forward");
  EXPECT_EQ(layers.items[0].at("microbatch").num, 0);
  EXPECT_EQ(layers.items[3].at("role").text, "backward");
  EXPECT_EQ(layers.items[6].at("microbatch").num, 1);
  const auto rows = kernel_rows(folder_of(g, 0));
  int fa = 0, fag = 0, rs = 0, profiler_steps = 0;
  for (const auto& r : rows) {
    fa += r[kColType] == "FlashAttentionScore";
    fag += r[kColType] == "FlashAttentionScoreGrad";
    rs += r[kColType] == "hcom_reduceScatter_";
  }
  EXPECT_EQ(fa, 6);
  EXPECT_EQ(fag, 6);
  EXPECT_EQ(rs, 3) << "one async gradient bucket per layer in the last microbatch";
  profiler_steps = static_cast<int>(gt_u(g.gt.at("ranks").items[0], {"counts", "trace_by_table", "profiler_steps"}));
  EXPECT_EQ(profiler_steps, 1);
}

TEST(Synth, DeterministicForASeed) {
  testing::ScratchDir a("synth_det_a"), b("synth_det_b"), c("synth_det_c");
  SynthOptions o = options("dense_gqa", a.path(), 4, 2);
  o.faults = {"slow_rank:2"};
  const Generated ga = generate(o);
  o.out_dir = b.path();
  o.threads = 3;  // parallel writing must not change a byte
  const Generated gb = generate(o);
  o.out_dir = c.path();
  o.seed = 8;
  o.threads = 1;
  const Generated gc = generate(o);
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(a.path()))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), a.path()));
  EXPECT_EQ(files.size(), 4u * 8 + 1) << "8 files per rank (op_statistic.csv, api_statistic.csv included)";
  for (const auto& f : files) EXPECT_EQ(testutil::slurp(a / f.string()), testutil::slurp(b / f.string())) << f;
  EXPECT_NE(folder_of(ga, 0).filename(), folder_of(gc, 0).filename());
  EXPECT_NE(testutil::slurp(folder_of(ga, 0) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"),
            testutil::slurp(folder_of(gc, 0) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"));
}

TEST(Synth, ScaleMultipliesSteps) {
  testing::ScratchDir a("synth_s1"), b("synth_s2");
  SynthOptions o = options("moe_mla_decode", a.path(), 2, 2);
  const Generated g1 = generate(o);
  o.out_dir = b.path();
  o.scale = 2.5;
  const Generated g2 = generate(o);
  EXPECT_EQ(g2.gt.at("steps_per_rank").num, 5);
  EXPECT_EQ(g2.summary.ranks[0].kernel_rows * 2, g1.summary.ranks[0].kernel_rows * 5);
}

// ---- faults ----

double sum_dur(const std::vector<std::vector<std::string>>& rows, const std::string& type_part, bool comm = false) {
  double s = 0;
  for (const auto& r : rows)
    if ((r[kColCore] == "COMMUNICATION") == comm && r[kColType].find(type_part) != std::string::npos) s += col(r, kColDur);
  return s;
}

double max_gap_us(const std::vector<std::vector<std::string>>& rows, const std::string& step) {
  double prev_end = -1, gap = 0;
  for (const auto& r : rows) {
    if (r[kColStep] != step || r[kColCore] == "COMMUNICATION") continue;
    const double s = col(r, kColStart), d = col(r, kColDur);
    if (prev_end >= 0) gap = std::max(gap, s - prev_end);
    prev_end = s + d;
  }
  return gap;
}

const Json* fault_entry(const Generated& g, const std::string& name) {
  for (const Json& f : g.gt.at("faults").items)
    if (f.at("name").text == name) return &f;
  return nullptr;
}

TEST(SynthFaults, SlowRankStretchesItsKernels) {
  testing::ScratchDir dir("synth_slow");
  SynthOptions o = options("dense_gqa", dir.path());
  o.faults = {"slow_rank:1"};
  const Generated g = generate(o);
  const Json* f = fault_entry(g, "slow_rank");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->at("rank").num, 1);
  EXPECT_EQ(f->at("magnitude").num, 2.0);
  EXPECT_EQ(f->at("expected_findings").items[0].text, "slow_rank_suspected");
  const double r0 = sum_dur(kernel_rows(folder_of(g, 0)), "MatMul");
  const double r1 = sum_dur(kernel_rows(folder_of(g, 1)), "MatMul");
  EXPECT_GT(r1, 1.8 * r0);
  // its TP peer waits for it: the slow rank has the shorter communication time
  EXPECT_LT(sum_dur(kernel_rows(folder_of(g, 1)), "hcom", true), sum_dur(kernel_rows(folder_of(g, 0)), "hcom", true));
}

TEST(SynthFaults, EpImbalanceMakesPeersWaitInCombine) {
  testing::ScratchDir dir("synth_ep");
  SynthOptions o = options("moe_mla_decode", dir.path());
  o.faults = {"ep_imbalance:2:4"};
  const Generated g = generate(o);
  ASSERT_NE(fault_entry(g, "ep_imbalance"), nullptr);
  const auto hot = kernel_rows(folder_of(g, 2)), cold = kernel_rows(folder_of(g, 0));
  EXPECT_GT(sum_dur(hot, "GroupedMatmul"), 3.0 * sum_dur(cold, "GroupedMatmul"));
  EXPECT_GT(sum_dur(cold, "MoeDistributeCombine"), 3.0 * sum_dur(hot, "MoeDistributeCombine"));
}

TEST(SynthFaults, SlowCollectiveShowsOnTheRanksLink) {
  testing::ScratchDir dir("synth_slowcoll");
  SynthOptions o = options("dense_gqa", dir.path());
  o.faults = {"slow_collective:1"};
  const Generated g = generate(o);
  const Json* f = fault_entry(g, "slow_collective");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->at("op_count").num, 0);
  EXPECT_EQ(f->at("ops").items[0].text.rfind("hcom_", 0), 0u);
  auto transit = [&](int rank) {
    const Json cj = load_json(folder_of(g, rank) / "ASCEND_PROFILER_OUTPUT" / "communication.json");
    double t = 0;
    for (const auto& [s, kinds] : cj.members)
      for (const auto& [k, op] : kinds.at("collective").members)
        if (k != "Total Op Info") t += op.at("Communication Time Info").at("Transit Time(ms)").num;
    return t;
  };
  EXPECT_GT(transit(1), 5.0 * transit(0));
  EXPECT_GT(sum_dur(kernel_rows(folder_of(g, 1)), "hcom", true), sum_dur(kernel_rows(folder_of(g, 0)), "hcom", true));
}

TEST(SynthFaults, IdleBubbleLeavesTheDeviceIdle) {
  testing::ScratchDir dir("synth_bubble");
  SynthOptions o = options("moe_mla_decode", dir.path(), 4, 3);
  o.faults = {"idle_bubble:1:8000"};
  const Generated g = generate(o);
  const Json* f = fault_entry(g, "idle_bubble");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->at("steps").items.size(), 1u);
  EXPECT_EQ(f->at("steps").items[0].num, 2) << "the middle step";
  EXPECT_GE(max_gap_us(kernel_rows(folder_of(g, 1)), "2"), 8000);
  EXPECT_LT(max_gap_us(kernel_rows(folder_of(g, 1)), "1"), 1000);
  EXPECT_LT(max_gap_us(kernel_rows(folder_of(g, 0)), "2"), 1000) << "peers wait inside MC2 kernels, not idle";
}

TEST(SynthFaults, DefaultsAreVisibleInLongTrainingSteps) {
  testing::ScratchDir dir("synth_train_faults");
  SynthOptions o = options("training", dir.path(), 4, 3);
  o.faults = {"idle_bubble:1", "host_bound:3"};
  const Generated g = generate(o);
  const Json* bubble = fault_entry(g, "idle_bubble");
  ASSERT_NE(bubble, nullptr);
  EXPECT_GT(bubble->at("magnitude").num, 5000) << "30 % of a training step";
  EXPECT_GE(max_gap_us(kernel_rows(folder_of(g, 1)), "2"), bubble->at("magnitude").num);
  const Json* host = fault_entry(g, "host_bound");
  ASSERT_NE(host, nullptr);
  EXPECT_GT(host->at("magnitude").num, 8) << "scaled to exceed 3x the mean training kernel";
  EXPECT_GT(max_gap_us(kernel_rows(folder_of(g, 3)), "1"), 1000);
}

TEST(SynthFaults, ExposedAicpuOnlyOnTheTargetRank) {
  testing::ScratchDir dir("synth_aicpu");
  SynthOptions o = options("moe_mla_decode", dir.path(), 4, 2);
  o.faults = {"exposed_aicpu:0"};
  const Generated g = generate(o);
  const Json* f = fault_entry(g, "exposed_aicpu");
  ASSERT_NE(f, nullptr);
  auto count_aicpu = [&](int rank) {
    int n = 0;
    for (const auto& r : kernel_rows(folder_of(g, rank))) n += r[kColCore] == "AI_CPU";
    return n;
  };
  EXPECT_EQ(count_aicpu(0), 2 * 12) << "one per layer (10 main + 2 MTP) per step";
  EXPECT_EQ(f->at("op_count").num, 24);
  EXPECT_EQ(count_aicpu(1), 0);
}

TEST(SynthFaults, HostBoundWidensLaunchGaps) {
  testing::ScratchDir dir("synth_host");
  SynthOptions o = options("moe_mla_decode", dir.path(), 4, 2);
  o.faults = {"host_bound:2"};
  const Generated g = generate(o);
  auto mean_gap = [&](int rank) {
    const auto rows = kernel_rows(folder_of(g, rank));
    double prev = -1, sum = 0;
    int n = 0;
    for (const auto& r : rows) {
      if (r[kColCore] == "COMMUNICATION" || r[kColType].find("MoeDistribute") != std::string::npos) {
        prev = -1;
        continue;
      }
      if (prev >= 0 && r[kColStep] == "1") {
        sum += col(r, kColStart) - prev;
        ++n;
      }
      prev = col(r, kColStart) + col(r, kColDur);
    }
    return sum / std::max(1, n);
  };
  EXPECT_GT(mean_gap(2), 5.0 * mean_gap(0));
}

TEST(SynthFaults, ClockOffsetShiftsOneRank) {
  testing::ScratchDir dir("synth_clock");
  SynthOptions o = options("dense_gqa", dir.path(), 4, 1);
  o.faults = {"clock_offset:3:20000"};
  const Generated g = generate(o);
  const double s0 = col(kernel_rows(folder_of(g, 0))[0], kColStart);
  const double s3 = col(kernel_rows(folder_of(g, 3))[0], kColStart);
  EXPECT_NEAR(s3 - s0, 20000, 200);
  EXPECT_EQ(g.gt.at("ranks").items[3].at("clock_offset_us").num, 20000);
}

TEST(Synth, DummyRanksRunWithoutAttention) {
  testing::ScratchDir dir("synth_dummy");
  SynthOptions o = options("moe_mla_decode", dir.path(), 4, 1);
  o.dummy_ranks = {3};
  const Generated g = generate(o);
  const Json& r3 = g.gt.at("ranks").items[3];
  EXPECT_FALSE(r3.at("has_attention").b);
  EXPECT_EQ(g.gt.at("dummy_ranks").items.size(), 1u);
  int attn = 0, combine = 0;
  for (const auto& r : kernel_rows(folder_of(g, 3))) {
    attn += r[kColType] == "MlaPreprocess" || r[kColType] == "FusedInferAttentionScore";
    combine += r[kColType] == "MoeDistributeCombineV2";
  }
  EXPECT_EQ(attn, 0);
  EXPECT_EQ(combine, 10) << "8 MoE + 2 MTP layers still exchange tokens";
  EXPECT_EQ(r3.at("steps").items[0].at("layer_anchor_row").items[0].num, -1);
  check_capture(g, 4);
}

// ---- pipeline parallel training ----

TEST(SynthPipeline, OneFOneBWithP2PBetweenStages) {
  testing::ScratchDir dir("synth_pp");
  SynthOptions o = options("training", dir.path(), 4, 2);
  o.pp = 2;
  o.microbatches = 3;
  o.layers = 4;
  const Generated g = generate(o);
  check_capture(g, 4);
  EXPECT_EQ(g.gt.at("parallel").at("pp").num, 2);
  EXPECT_EQ(g.gt.at("parallel").at("tp").num, 2);
  std::vector<std::vector<int>> pp_groups;
  for (const Json& grp : g.gt.at("groups").items)
    if (grp.at("group_name").text == "pp") {
      pp_groups.emplace_back();
      for (const Json& r : grp.at("global_ranks").items) pp_groups.back().push_back(static_cast<int>(r.num));
    }
  EXPECT_EQ(pp_groups, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  const Json meta = load_json(folder_of(g, 0) / "profiler_metadata.json");
  EXPECT_EQ(meta.at("distributed_args").at("pipeline_model_parallel_size").num, 2);

  // 1F1B order per stage: stage 0 warms up with 1 forward, stage 1 (last) alternates from the start
  const std::vector<std::string> want0 = {"f0:0", "f0:1", "f1:0", "f1:1", "b0:1", "b0:0", "f2:0", "f2:1",
                                          "b1:1", "b1:0", "b2:1", "b2:0"};
  const std::vector<std::string> want1 = {"f0:2", "f0:3", "b0:3", "b0:2", "f1:2", "f1:3",
                                          "b1:3", "b1:2", "f2:2", "f2:3", "b2:3", "b2:2"};
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const Json& rg = g.gt.at("ranks").items[static_cast<size_t>(r)];
    EXPECT_EQ(rg.at("pp_stage").num, r / 2);
    std::vector<std::string> got;
    for (const Json& l : rg.at("layers").items)
      got.push_back(l.at("role").text.substr(0, 1) + std::to_string(static_cast<int>(l.at("microbatch").num)) + ":" +
                    std::to_string(static_cast<int>(l.at("model_layer").num)));
    EXPECT_EQ(got, r < 2 ? want0 : want1);
    const auto rows = kernel_rows(folder_of(g, r));
    const Json& st = rg.at("steps").items[0];
    double prev = -1;
    for (size_t l = 0; l < st.at("layer_first_row").items.size(); ++l) {
      const double row = st.at("layer_first_row").items[l].num;
      EXPECT_GT(row, prev) << "layers listed in row order";
      prev = row;
      const std::string& type = rows[static_cast<size_t>(row)][kColType];
      EXPECT_NE(type.find("RmsNorm"), std::string::npos) << type;
    }
    std::map<std::string, int> n;
    double recv_us = 0;
    for (const auto& row : rows) {
      if (row[kColStep] != "1") continue;
      ++n[row[kColType]];
      if (row[kColType] == "hcom_receive_") recv_us += col(row, kColDur);
    }
    EXPECT_EQ(n["FlashAttentionScore"], 6);
    EXPECT_EQ(n["FlashAttentionScoreGrad"], 6);
    EXPECT_EQ(n["hcom_send_"], 3);
    EXPECT_EQ(n["hcom_receive_"], 3);
    EXPECT_EQ(n["GatherV2"], r < 2 ? 3 : 0) << "stage 0 embeds";
    EXPECT_EQ(n["SoftmaxCrossEntropyWithLogits"], r < 2 ? 0 : 3) << "the last stage computes the loss";
    const auto st_rows = testutil::parse_csv(testutil::slurp(folder_of(g, r) / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"));
    EXPECT_NEAR(col(st_rows[1], 8), recv_us, 0.01) << "Bubble = receive time";
    EXPECT_NEAR(col(st_rows[1], 9), col(st_rows[1], 3) - recv_us, 0.01) << "receives do not overlap compute here";
    const Json cj = load_json(folder_of(g, r) / "ASCEND_PROFILER_OUTPUT" / "communication.json");
    int p2p = 0;
    for (const auto& [key, op] : cj.at("step1").at("p2p").members) {
      if (key == "Total Op Info") continue;
      EXPECT_TRUE(key.rfind("hcom_send__", 0) == 0 || key.rfind("hcom_receive__", 0) == 0) << key;
      ++p2p;
    }
    EXPECT_EQ(p2p, 6);
  }
  // a send and its receive finish together (rendezvous): rank 0's sends of activations = rank 2's receives
  auto ends = [&](int rank, const char* type) {
    std::vector<double> v;
    for (const auto& row : kernel_rows(folder_of(g, rank)))
      if (row[kColType] == type) v.push_back(col(row, kColStart) + col(row, kColDur));
    return v;
  };
  const auto send0 = ends(0, "hcom_send_"), recv2 = ends(2, "hcom_receive_");
  ASSERT_EQ(send0.size(), recv2.size());
  // start + dur as doubles near 1.7e15 us: 0.25 us apart is one ulp of the sum, not a real difference
  for (size_t i = 0; i < send0.size(); ++i) EXPECT_NEAR(send0[i], recv2[i], 0.3) << i;
}

TEST(SynthPipeline, RejectsBadShapes) {
  testing::ScratchDir dir("synth_pp_err");
  SynthOptions o = options("training", dir / "a", 4, 1);
  o.pp = 2;
  o.layers = 3;
  EXPECT_NE(generate_capture(o).status().message().find("multiple of pp"), std::string::npos);
  o = options("training", dir / "b", 6, 1);
  o.pp = 4;
  EXPECT_NE(generate_capture(o).status().message().find("does not divide ranks"), std::string::npos);
  o = options("dense_gqa", dir / "c", 4, 1);
  o.pp = 2;
  EXPECT_NE(generate_capture(o).status().message().find("applies to training only"), std::string::npos);
}

// ---- errors ----

TEST(SynthErrors, RejectsBadOptions) {
  testing::ScratchDir dir("synth_err");
  auto run = [&](SynthOptions o) { return generate_capture(o).status(); };
  SynthOptions o = options("nope", dir / "a");
  Status st = run(o);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("unknown scenario 'nope'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("moe_mla_decode"), std::string::npos);
  o = options("dense_gqa", dir / "b", 0);
  EXPECT_EQ(run(o).code(), ErrorCode::kInvalidArgument);
  o = options("dense_gqa", dir / "c");
  o.faults = {"bogus"};
  EXPECT_NE(run(o).message().find("unknown fault 'bogus'"), std::string::npos);
  o.faults = {"slow_rank:9"};
  EXPECT_NE(run(o).message().find("rank must be an integer in [0, 3]"), std::string::npos);
  o.faults = {"slow_rank:1:0.5"};
  EXPECT_NE(run(o).message().find(">= 1"), std::string::npos);
  o.faults = {"ep_imbalance"};
  EXPECT_NE(run(o).message().find("moe_mla_decode"), std::string::npos);
  o.faults = {};
  o.dummy_ranks = {4};
  EXPECT_NE(run(o).message().find("dummy rank 4 out of range"), std::string::npos);
  o.dummy_ranks = {};
  o.tp = 3;
  EXPECT_EQ(run(o).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "c" / "ground_truth.json"));
}

TEST(SynthErrors, NonEmptyOutputNeedsForce) {
  testing::ScratchDir dir("synth_force");
  SynthOptions o = options("dense_gqa", dir.path(), 2, 1);
  ASSERT_TRUE(generate_capture(o).ok());
  Status st = generate_capture(o).status();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not empty"), std::string::npos);
  o.force = true;
  o.seed = 99;  // different folder names: the old ones must be gone
  ASSERT_TRUE(generate_capture(o).ok());
  int folders = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) folders += e.is_directory();
  EXPECT_EQ(folders, 2);
  testing::write_text(dir / "notes.txt", "mine");
  st = generate_capture(o).status();
  EXPECT_NE(st.message().find("not a synthetic capture"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
}

}  // namespace
}  // namespace ascprof::synth
