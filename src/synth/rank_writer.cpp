#include "rank_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "db_sink.hpp"
#include "text_sink.hpp"

namespace ascprof::synth {

namespace fs = std::filesystem;

const char* const kKernelDetailsHeaderE3 =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
    "Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,"
    "aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),"
    "aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),"
    "aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)";

const char* const kStepTraceHeaderE3 =
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
    "Communication(Not Overlapped and Exclude Receive),Preparing";

namespace {

constexpr int kComputeStream = 2;
constexpr int kCommStream = 5;  ///< the stream of every HCCL plane task (Notify_Wait, Memcpy, ...)
constexpr int64_t kNodeLaunchDurNs = 2000;

// Proleptic Gregorian date from days since 1970-01-01 (H. Hinnant's civil_from_days).
void civil_from_days(int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0));
}

std::string stamp17(int64_t ms) {
  const int64_t day_ms = 86400000;
  int64_t days = ms / day_ms, rem = ms % day_ms;
  if (rem < 0) {
    rem += day_ms;
    --days;
  }
  int y;
  unsigned mo, d;
  civil_from_days(days, y, mo, d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02u%02u%02d%02d%02d%03d", y, mo, d, static_cast<int>(rem / 3600000),
                static_cast<int>(rem / 60000 % 60), static_cast<int>(rem / 1000 % 60), static_cast<int>(rem % 1000));
  return buf;
}

struct Interval {
  int64_t a, b;
};

void merge_sorted(std::vector<Interval>& v, std::vector<Interval>& out) {
  out.clear();
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.a < y.a || (x.a == y.a && x.b < y.b); });
  for (const Interval& i : v) {
    if (i.b <= i.a) continue;
    if (!out.empty() && i.a <= out.back().b) out.back().b = std::max(out.back().b, i.b);
    else out.push_back(i);
  }
}

// a minus b, both merged and sorted.
void subtract(const std::vector<Interval>& a, const std::vector<Interval>& b, std::vector<Interval>& out) {
  out.clear();
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t cur = x.a;
    while (j < b.size() && b[j].b <= cur) ++j;
    size_t k = j;
    while (k < b.size() && b[k].a < x.b) {
      if (b[k].a > cur) out.push_back({cur, b[k].a});
      cur = std::max(cur, b[k].b);
      ++k;
    }
    if (cur < x.b) out.push_back({cur, x.b});
  }
}

int64_t total(const std::vector<Interval>& v) {
  int64_t s = 0;
  for (const Interval& i : v) s += i.b - i.a;
  return s;
}

double round4(double x) { return std::round(x * 10000.0) / 10000.0; }

std::string dims_json(const std::string& shapes) {  // "a,b;c" -> "a,b;\r\nc" (JSON-escaped)
  std::string out;
  for (const char c : shapes) {
    out += c;
    if (c == ';') out += "\\r\\n";
  }
  return out;
}

std::string types_json(const std::string& dtypes) {
  std::string out;
  size_t pos = 0;
  while (pos <= dtypes.size()) {
    size_t c = dtypes.find(';', pos);
    if (c == std::string::npos) c = dtypes.size();
    const std::string t = dtypes.substr(pos, c - pos);
    if (!out.empty()) out += ";\\r\\n";
    if (t == "DT_BF16") out += "c10::BFloat16";
    else if (t == "INT64") out += "long int";
    else if (t == "INT32") out += "int";
    else if (t == "FLOAT") out += "float";
    else out += "Scalar";
    pos = c + 1;
  }
  return out;
}

/// Per-size packet distribution entry of communication.json.
struct SizeBin {
  double pkt_mb;
  int64_t count;
  double ms;
};

struct TransportAcc {
  double size_mb = 0, time_ms = 0;
  std::vector<SizeBin> bins;
  void add(double pkt_mb, int64_t count, double ms) {
    size_mb += pkt_mb * static_cast<double>(count);
    time_ms += ms;
    for (SizeBin& b : bins)
      if (b.pkt_mb == pkt_mb) {
        b.count += count;
        b.ms += ms;
        return;
      }
    bins.push_back({pkt_mb, count, ms});
  }
};

/// Count / total / min / max / sum of squares of durations (ns) for op_statistic and api_statistic.
struct TimeStats {
  uint64_t count = 0;
  int64_t total = 0, min = 0, max = 0;
  double sumsq_us = 0;  // sum of squared durations in us^2
  void add(int64_t ns) {
    min = count == 0 ? ns : std::min(min, ns);
    max = count == 0 ? ns : std::max(max, ns);
    ++count;
    total += ns;
    const double us = static_cast<double>(ns) / 1000.0;
    sumsq_us += us * us;
  }
  /// Population variance in us^2.
  double variance_us2() const {
    if (count == 0) return 0;
    const double mean = static_cast<double>(total) / 1000.0 / static_cast<double>(count);
    return std::max(0.0, sumsq_us / static_cast<double>(count) - mean * mean);
  }
};

int group_index(std::vector<std::string>& keys, const std::string& key) {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return static_cast<int>(i);
  keys.push_back(key);
  return static_cast<int>(keys.size() - 1);
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// profiler_metadata.json parts (also the META_DATA values of the db export, as compact JSON).
void write_env_variables(JsonWriter& w) {
  w.begin_object();
  for (const char* k : {"ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT", "HOST_CACHE_CAPACITY",
                        "ASCEND_ENHANCE_ENABLE", "PYTORCH_NPU_ALLOC_CONF", "ASCEND_LAUNCH_BLOCKING", "HCCL_ALGO"})
    w.kv(k, "");
  w.end_object();
}

void write_distributed_args(const Scenario& sc, const RankLayout& lay, JsonWriter& w) {
  w.begin_object();
  w.kv("tensor_model_parallel_size", sc.topo.tp);
  w.kv("pipeline_model_parallel_size", sc.topo.pp);
  w.kv("data_parallel_size", sc.topo.dp);
  w.kv("context_parallel_size", 1);
  w.kv("expert_model_parallel_size", sc.topo.ep);
  w.kv("sequence_parallel", false);
  w.kv("rank", lay.rank);
  w.kv("world_size", sc.topo.ranks);
  w.end_object();
}

void write_parallel_group_info(const Scenario& sc, const RankLayout& lay, JsonWriter& w) {
  w.begin_object();
  for (const CommGroup& g : sc.topo.groups) {
    const auto it = std::lower_bound(g.ranks.begin(), g.ranks.end(), lay.rank);
    if (it == g.ranks.end() || *it != lay.rank) continue;
    w.key(g.comm_name);
    w.begin_object();
    w.kv("group_name", g.group_name);
    w.kv("group_rank", static_cast<int64_t>(it - g.ranks.begin()));
    w.key("global_ranks");
    w.begin_array();
    for (const int r : g.ranks) w.value(r);
    w.end_array();
    w.end_object();
  }
  w.end_object();
}

class RankWriter {
 public:
  RankWriter(const Scenario& sc, const SyncTable& table, const RankLayout& layout, RankCounts* counts, ExportKinds exports)
      : sc_(sc), table_(table), lay_(layout), c_(*counts), pids_(trace_pids(layout.host_pid, layout.device)),
        toff_(layout.clock_offset_ns), text_(exports.text), dbw_(exports.db),
        stage_(sc.topo.stage[static_cast<size_t>(layout.rank)]) {
    for (const KernelSpec& k : sc.kernels) {
      dims_.push_back(dims_json(k.in_shapes));
      types_.push_back(types_json(k.in_dtypes));
    }
    // communicators this rank reports ops for, and their thread ids in the Communication process
    group_tid_.assign(sc.topo.groups.size(), -1);
    int n = 0;
    std::vector<uint8_t> used(sc.topo.groups.size(), 0);
    for (const StepProgram& p : sc.programs)
      for (const Segment& s : p.segments)
        if (s.sync.kind == SyncSpec::Kind::kCollective) {
          const int g = sc.topo.group_of[static_cast<size_t>(s.sync.group)][static_cast<size_t>(layout.rank)];
          if (g >= 0 && sc.topo.groups[static_cast<size_t>(g)].ranks.size() > 1) used[static_cast<size_t>(g)] = 1;
        }
    for (size_t g = 0; g < used.size(); ++g)
      if (used[g]) group_tid_[g] = 16 * n++;
    // hcom op names ("hcom_<kind>__<hash % 1000>_<seq>_1", seq per communicator) are unique on this rank
    // unless two of its communicators share hash % 1000
    std::vector<uint64_t> h3;
    for (size_t g = 0; g < used.size(); ++g)
      if (used[g]) h3.push_back(sc.topo.groups[g].hash % 1000);
    std::sort(h3.begin(), h3.end());
    comm_names_unique_ = std::adjacent_find(h3.begin(), h3.end()) == h3.end();
    for (const Fault& f : sc.faults)
      if (f.rank == layout.rank && f.kind == FaultKind::kSlowCollective) slow_link_ = true;
    // operator faults of this rank: per-KernelSpec flags
    for (const Fault& f : sc.faults) {
      if (f.rank != layout.rank) continue;
      uint8_t bit = 0;
      switch (f.kind) {
        case FaultKind::kVectorScalarHeavy: bit = kFlagScalarHeavy; break;
        case FaultKind::kCubeUnderused: bit = kFlagUnderused; break;
        case FaultKind::kBlockDimOne: bit = kFlagBlockDimOne; break;
        case FaultKind::kAicpuFallback: bit = kFlagCounted; break;
        case FaultKind::kHostSyncHeavy: host_sync_heavy_ = true; break;
        case FaultKind::kThrottledCores: aicore_mhz_ = static_cast<int64_t>(std::llround(f.magnitude)); break;
        default: break;
      }
      if (bit == 0) continue;
      fault_flag_.resize(sc.kernels.size(), 0);
      for (size_t k = 0; k < sc.kernels.size(); ++k)
        if (sc.kernels[k].name == f.target) fault_flag_[k] |= static_cast<uint8_t>(bit | kFlagCounted);
    }
    // op_statistic groups (Type, core) and api_statistic groups (aclnn API = kernel name up to the first '_')
    for (const KernelSpec& k : sc.kernels) {
      const std::string key = k.type + ',' + core_name(k.core);
      op_group_.push_back(group_index(op_keys_, key));
      api_group_.push_back(group_index(api_keys_, k.name.substr(0, k.name.find('_'))));
    }
    op_stats_.resize(op_keys_.size());
    api_stats_.resize(api_keys_.size());
  }

  Status run(const fs::path& dir) {
    const fs::path out = dir / "ASCEND_PROFILER_OUTPUT";
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return file_error(ErrorCode::kIo, out.string(), "", "cannot create folder: " + ec.message());
    // Without the text export the TextSinks stay closed: every append to them is a no-op.
    if (text_) {
      ASCPROF_RETURN_IF_ERROR(kd_.open(out / "kernel_details.csv", 4u << 20));
      ASCPROF_RETURN_IF_ERROR(tv_.open(out / "trace_view.json", 8u << 20));
      ASCPROF_RETURN_IF_ERROR(cm_.open(out / "communication.json", 1u << 20));
      ASCPROF_RETURN_IF_ERROR(st_.open(out / "step_trace_time.csv", 64u << 10));
      ASCPROF_RETURN_IF_ERROR(os_.open(out / "op_statistic.csv", 64u << 10));
      ASCPROF_RETURN_IF_ERROR(as_.open(out / "api_statistic.csv", 64u << 10));
    }
    if (dbw_) ASCPROF_RETURN_IF_ERROR(open_db(out));

    kd_.put(kKernelDetailsHeaderE3);
    kd_.put("\r\n");
    st_.put(kStepTraceHeaderE3);
    st_.put("\r\n");
    tv_.put('[');
    cm_.put('{');
    write_head_metadata();

    RankSim sim(sc_, lay_.rank);
    StepRec rec;
    for (int s = 0; s < sc_.steps; ++s) {
      sim.begin_step(s, &rec);
      const int prog = sim.program();
      const int nseg = static_cast<int>(sc_.programs[static_cast<size_t>(prog)].segments.size());
      for (int seg = 0; seg < nseg; ++seg) {
        const int64_t a = sim.run_segment(seg);
        if (a >= 0) sim.finish_segment(seg, table_.max_arrival[table_.index(s, prog, seg, sim.participating_slot(seg))]);
      }
      sim.end_step();
      write_step(rec, prog);
    }
    if (!sc_.moe_trace.empty() && moe_rows_ > 0)  // the last FusedDeepMoe call of the last step
      ASCPROF_RETURN_IF_ERROR(write_moe_trace(sc_, lay_.rank, moe_last_, dir, &c_.moe));

    write_tail_metadata();
    tv_.put(']');
    cm_.put('}');
    c_.bytes_kernel_details = kd_.bytes();
    c_.bytes_trace_view = tv_.bytes();
    c_.bytes_communication = cm_.bytes();
    c_.bytes_step_trace = st_.bytes();
    write_op_statistic();
    write_api_statistic();
    c_.bytes_op_statistic = os_.bytes();
    c_.bytes_api_statistic = as_.bytes();
    Status st = kd_.close();
    Status s2 = tv_.close();
    Status s3 = cm_.close();
    Status s4 = st_.close();
    Status s5 = os_.close();
    Status s6 = as_.close();
    Status s7;
    if (dbw_) {
      s7 = db_.close();
      c_.bytes_profiler_db = db_.bytes_profiler();
      c_.bytes_analysis_db = db_.bytes_analysis();
    }
    if (!st.ok()) return st;
    if (!s2.ok()) return s2;
    if (!s3.ok()) return s3;
    if (!s4.ok()) return s4;
    if (!s5.ok()) return s5;
    if (!s6.ok()) return s6;
    return s7;
  }

  void abandon() {
    kd_.abandon();
    tv_.abandon();
    cm_.abandon();
    st_.abandon();
    os_.abandon();
    as_.abandon();
    db_.abandon();
  }

 private:
  // ---- db export (db_sink.hpp) ----
  Status open_db(const fs::path& out) {
    DbSink::Identity id;
    id.rank = lay_.rank;
    id.device = lay_.device;
    id.host_pid = lay_.host_pid;
    id.host_name = lay_.folder_name.substr(0, lay_.folder_name.find('_'));
    id.session_start_ns = sc_.base_time_ns + toff_;
    ASCPROF_RETURN_IF_ERROR(db_.open(out, id));
    {
      JsonWriter w(false);
      write_env_variables(w);
      db_.meta("ENV_VARIABLES", w.take());
    }
    {
      JsonWriter w(false);
      write_distributed_args(sc_, lay_, w);
      db_.meta("distributed_args", w.take());
    }
    {
      JsonWriter w(false);
      write_parallel_group_info(sc_, lay_, w);
      db_.meta("parallel_group_info", w.take());
    }
    // TASK_PMU_INFO metric names: the kernel_details headers without "(us)" / "(%)"
    static const char* const kPmuNames[kPmuCount] = {
        "aic_total_time",   "aic_total_cycles", "aic_mac_time",     "aic_mac_ratio",        "aic_scalar_time",
        "aic_scalar_ratio", "aic_mte1_time",    "aic_mte1_ratio",   "aic_mte2_time",        "aic_mte2_ratio",
        "aic_fixpipe_time", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_total_time",  "aiv_total_cycles",
        "aiv_vec_time",     "aiv_vec_ratio",    "aiv_scalar_time",  "aiv_scalar_ratio",     "aiv_mte2_time",
        "aiv_mte2_ratio",   "aiv_mte3_time",    "aiv_mte3_ratio",   "aiv_icache_miss_rate", "cube_utilization"};
    for (int i = 0; i < kPmuCount; ++i) pmu_name_[i] = db_.str(kPmuNames[i]);
    id_launch_ = db_.str("launch");
    id_na_ = db_.str("N/A");
    id_dynamic_ = db_.str("dynamic");
    id_no_ = db_.str("NO");
    group_ids_.assign(sc_.topo.groups.size(), -1);
    spec_ids_.assign(sc_.kernels.size(), SpecIds{});
    return {};
  }

  /// STRING_IDS of a kernel's text fields, interned on first use.
  struct SpecIds {
    int64_t name = -1, type = -1, core = -1, in_formats = -1, in_dtypes = -1, in_shapes = -1, out_formats = -1,
            out_dtypes = -1, out_shapes = -1, acl = -1, aten = -1, fwk_dtypes = -1, fwk_shapes = -1;
  };
  static std::string unescape_crlf(const std::string& json_text) {  // "a;\\r\\nb" -> "a;\r\nb"
    std::string out;
    for (size_t i = 0; i < json_text.size(); ++i) {
      if (json_text.compare(i, 4, "\\r\\n") == 0) {
        out += "\r\n";
        i += 3;
      } else {
        out += json_text[i];
      }
    }
    return out;
  }
  const SpecIds& spec_ids(int spec) {
    SpecIds& s = spec_ids_[static_cast<size_t>(spec)];
    if (s.name >= 0) return s;
    const KernelSpec& k = sc_.kernels[static_cast<size_t>(spec)];
    s.name = db_.str(k.name);
    s.type = db_.str(k.type);
    s.core = db_.str(core_name(k.core));
    s.in_formats = db_.str(k.in_formats);
    s.in_dtypes = db_.str(k.in_dtypes);
    s.in_shapes = db_.str('"' + k.in_shapes + '"');
    s.out_formats = db_.str(k.out_formats);
    s.out_dtypes = db_.str(k.out_dtypes);
    s.out_shapes = db_.str('"' + k.out_shapes + '"');
    s.acl = db_.str(k.acl);
    s.aten = db_.fwk(k.aten);
    s.fwk_dtypes = db_.fwk(unescape_crlf(types_[static_cast<size_t>(spec)]));
    s.fwk_shapes = db_.fwk(unescape_crlf(dims_[static_cast<size_t>(spec)]));
    return s;
  }
  int64_t group_id(int group) {
    int64_t& id = group_ids_[static_cast<size_t>(group)];
    if (id < 0) id = db_.str(sc_.topo.groups[static_cast<size_t>(group)].comm_name);
    return id;
  }

  // ---- trace_view.json pieces ----
  void ev(int ph) {
    if (first_event_) first_event_ = false;
    else tv_.put(", ");
    ++c_.events;
    ++c_.by_ph[static_cast<size_t>(ph)];
  }
  enum { kX = 0, kM = 1, kS = 2, kF = 3, kC = 4 };

  void ts(int64_t ns) {
    tv_.put('"');
    tv_.us3(ns + toff_);
    tv_.put('"');
  }

  // torch_npu writes "ph" first in metadata events, msprof writes it last: both orders occur in real files.
  void meta_torch(const char* what, uint64_t pid, uint64_t tid, const char* key, std::string_view sval, int64_t ival,
                  bool is_string) {
    ev(kM);
    ++c_.metadata_events;
    if (!text_) return;
    tv_.put("{\"ph\": \"M\", ");
    meta_body(what, pid, tid, key, sval, ival, is_string);
    tv_.put("}");
  }
  void meta(const char* what, uint64_t pid, uint64_t tid, const char* key, std::string_view sval, int64_t ival,
            bool is_string) {
    ev(kM);
    ++c_.metadata_events;
    if (!text_) return;
    tv_.put("{");
    meta_body(what, pid, tid, key, sval, ival, is_string);
    tv_.put(", \"ph\": \"M\"}");
  }
  // "name": ..., "pid": ..., "tid": ..., "args": {key: value}
  void meta_body(const char* what, uint64_t pid, uint64_t tid, const char* key, std::string_view sval, int64_t ival,
                 bool is_string) {
    tv_.put("\"name\": \"");
    tv_.put(what);
    tv_.put("\", \"pid\": ");
    tv_.u64(pid);
    tv_.put(", \"tid\": ");
    tv_.u64(tid);
    tv_.put(", \"args\": {\"");
    tv_.put(key);
    tv_.put("\": ");
    if (is_string) {
      tv_.put('"');
      tv_.put(sval);
      tv_.put('"');
    } else {
      tv_.i64(ival);
    }
    tv_.put("}");
  }
  void process_meta(uint64_t pid, std::string_view name, std::string_view label, int sort) {
    meta("process_name", pid, 0, "name", name, 0, true);
    meta("process_labels", pid, 0, "labels", label, 0, true);
    meta("process_sort_index", pid, 0, "sort_index", {}, sort, false);
  }

  void write_head_metadata() {
    const uint64_t tid = static_cast<uint64_t>(lay_.host_pid);
    const std::string thread = "Thread " + std::to_string(lay_.host_pid);
    meta_torch("process_name", pids_.python, 0, "name", "Python", 0, true);
    meta_torch("process_labels", pids_.python, 0, "labels", "CPU", 0, true);
    meta_torch("process_sort_index", pids_.python, 0, "sort_index", {}, 0, false);
    meta_torch("thread_name", pids_.python, tid, "name", thread, 0, true);
    meta_torch("thread_sort_index", pids_.python, tid, "sort_index", {}, static_cast<int64_t>(tid), false);
    process_meta(pids_.cann, "CANN", "CPU", 7);
    meta("thread_name", pids_.cann, tid, "name", thread, 0, true);
    meta("thread_sort_index", pids_.cann, tid, "sort_index", {}, static_cast<int64_t>(tid), false);
    npu_label_ = "NPU " + std::to_string(lay_.device);
    process_meta(pids_.hardware, "Ascend Hardware", npu_label_, 14);
    meta("thread_name", pids_.hardware, kComputeStream, "name", "Stream " + std::to_string(kComputeStream), 0, true);
    meta("thread_sort_index", pids_.hardware, kComputeStream, "sort_index", {}, kComputeStream, false);
  }

  // Written after the X events on purpose: consumers must not assume metadata comes first.
  void write_tail_metadata() {
    if (c_.plane_tasks > 0) {  // the stream of the plane tasks' Ascend Hardware events
      meta("thread_name", pids_.hardware, kCommStream, "name", "Stream " + std::to_string(kCommStream), 0, true);
      meta("thread_sort_index", pids_.hardware, kCommStream, "sort_index", {}, kCommStream, false);
    }
    process_meta(pids_.comm, "Communication", npu_label_, 16);
    for (size_t g = 0; g < group_tid_.size(); ++g) {
      if (group_tid_[g] < 0) continue;
      const auto gt = static_cast<uint64_t>(group_tid_[g]);
      meta("thread_name", pids_.comm, gt, "name", "Group " + sc_.topo.groups[g].comm_name + " Communication", 0, true);
      meta("thread_sort_index", pids_.comm, gt, "sort_index", {}, static_cast<int64_t>(gt), false);
      for (int p = 0; p < planes(static_cast<int>(g)); ++p) {
        meta("thread_name", pids_.comm, gt + 1 + static_cast<uint64_t>(p), "name", "Plane " + std::to_string(p), 0, true);
        meta("thread_sort_index", pids_.comm, gt + 1 + static_cast<uint64_t>(p), "sort_index", {},
             static_cast<int64_t>(gt) + 1 + p, false);
      }
    }
    process_meta(pids_.overlap, "Overlap Analysis", npu_label_, 31);
    static const char* const kOverlapNames[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
    for (int i = 0; i < 4; ++i) meta("thread_name", pids_.overlap, static_cast<uint64_t>(i), "name", kOverlapNames[i], 0, true);
    process_meta(pids_.freq, "AI Core Freq", npu_label_, 15);
  }

  int planes(int group) const {
    const auto n = static_cast<int>(sc_.topo.groups[static_cast<size_t>(group)].ranks.size());
    return std::max(1, std::min(2, n - 1));
  }

  void python_op(std::string_view name, int64_t start, int64_t dur, int spec) {
    ev(kX);
    ++c_.python_ops;
    if (!text_) return;
    tv_.put("{\"ph\": \"X\", \"name\": \"");
    tv_.put(name);
    tv_.put("\", \"pid\": ");
    tv_.u64(pids_.python);
    tv_.put(", \"tid\": ");
    tv_.u64(static_cast<uint64_t>(lay_.host_pid));
    tv_.put(", \"ts\": ");
    ts(start);
    tv_.put(", \"dur\": ");
    tv_.us_trim(dur);
    tv_.put(", \"cat\": \"cpu_op\", \"args\": {\"Sequence number\": -1, \"Fwd thread id\": 0");
    if (spec >= 0) {
      tv_.put(", \"Input Dims\": \"");
      tv_.put(dims_[static_cast<size_t>(spec)]);
      tv_.put("\", \"Input type\": \"");
      tv_.put(types_[static_cast<size_t>(spec)]);
      tv_.put('"');
    }
    tv_.put("}}");
  }

  void cann_op(std::string_view name_prefix, std::string_view name, int64_t start, int64_t dur, const char* mode,
               const char* level, std::string_view id, std::string_view item_id, uint64_t cid) {
    ev(kX);
    ++c_.cann_ops;
    if (!text_) return;
    tv_.put("{\"name\": \"");
    tv_.put(name_prefix);
    tv_.put(name);
    tv_.put("\", \"pid\": ");
    tv_.u64(pids_.cann);
    tv_.put(", \"tid\": ");
    tv_.u64(static_cast<uint64_t>(lay_.host_pid));
    tv_.put(", \"ts\": ");
    ts(start);
    tv_.put(", \"dur\": ");
    tv_.us_trim(dur);
    tv_.put(", \"args\": {\"Thread Id\": ");
    tv_.u64(static_cast<uint64_t>(lay_.host_pid));
    tv_.put(", \"Mode\": \"");
    tv_.put(mode);
    tv_.put("\", \"level\": \"");
    tv_.put(level);
    tv_.put("\", \"id\": \"");
    tv_.put(id);
    tv_.put("\", \"item_id\": \"");
    tv_.put(item_id);
    tv_.put("\", \"connection_id\": ");
    tv_.u64(cid);
    tv_.put("}, \"ph\": \"X\"}");
  }

  void h2d_flow(bool start_side, uint64_t cid, int64_t t, uint64_t pid, uint64_t tid) {
    ev(start_side ? kS : kF);
    ++c_.flows_host_to_device;
    if (!text_) return;
    tv_.put("{\"name\": \"HostToDevice");
    tv_.u64(cid);
    if (start_side) {
      tv_.put("\", \"ph\": \"s\", \"cat\": \"HostToDevice\", \"id\": \"");
      tv_.u64(cid);
      tv_.put("\", \"pid\": ");
      tv_.u64(pid);
      tv_.put(", \"tid\": ");
      tv_.u64(tid);
      tv_.put(", \"ts\": ");
      ts(t);
      tv_.put('}');
    } else {
      tv_.put("\", \"ph\": \"f\", \"id\": \"");
      tv_.u64(cid);
      tv_.put("\", \"ts\": ");
      ts(t);
      tv_.put(", \"cat\": \"HostToDevice\", \"pid\": ");
      tv_.u64(pid);
      tv_.put(", \"tid\": ");
      tv_.u64(tid);
      tv_.put(", \"bp\": \"e\"}");
    }
  }

  void npu_flow(bool start_side, int64_t id_ns, int64_t t, uint64_t pid, uint64_t tid) {
    ev(start_side ? kS : kF);
    ++c_.flows_async_npu;
    if (!text_) return;
    tv_.put(start_side ? "{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": "
                       : "{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": ");
    tv_.i64(id_ns + toff_);
    tv_.put(", \"pid\": ");
    tv_.u64(pid);
    tv_.put(", \"tid\": ");
    tv_.u64(tid);
    tv_.put(", \"ts\": ");
    ts(t);
    tv_.put(", \"cat\": \"async_npu\"}");
  }

  void device_task(std::string_view name, std::string_view task_type, int64_t start, int64_t dur, uint32_t task_id,
                   int64_t cid) {
    hardware_task(kComputeStream, name, task_type, start, dur, task_id, cid);
  }

  /// An "Ascend Hardware" X event on the thread of `stream`; `cid` < 0 writes no connection_id.
  void hardware_task(int stream, std::string_view name, std::string_view task_type, int64_t start, int64_t dur,
                     uint32_t task_id, int64_t cid) {
    ev(kX);
    ++c_.device_tasks;
    if (!text_) return;
    tv_.put("{\"name\": \"");
    tv_.put(name);
    tv_.put("\", \"pid\": ");
    tv_.u64(pids_.hardware);
    tv_.put(", \"tid\": ");
    tv_.u64(static_cast<uint64_t>(stream));
    tv_.put(", \"ts\": ");
    ts(start);
    tv_.put(", \"dur\": ");
    tv_.us3(dur);
    tv_.put(", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"");
    tv_.put(task_type);
    tv_.put("\", \"Physic Stream Id\": ");
    tv_.u64(static_cast<uint64_t>(stream));
    tv_.put(", \"Task Id\": ");
    tv_.u64(task_id);
    tv_.put(", \"Batch Id\": 0, \"Subtask Id\": 4294967295");
    if (cid >= 0) {
      tv_.put(", \"connection_id\": ");
      tv_.i64(cid);
    }
    tv_.put("}, \"ph\": \"X\"}");
  }

  void overlap_event(int kind, int64_t a, int64_t b) {
    static const char* const kNames[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
    ev(kX);
    ++c_.overlap[static_cast<size_t>(kind)];
    if (!text_) return;
    tv_.put("{\"name\": \"");
    tv_.put(kNames[kind]);
    tv_.put("\", \"pid\": ");
    tv_.u64(pids_.overlap);
    tv_.put(", \"tid\": ");
    tv_.u64(static_cast<uint64_t>(kind));
    tv_.put(", \"ts\": ");
    ts(a);
    tv_.put(", \"dur\": ");
    tv_.us_trim(b - a);
    tv_.put(", \"ph\": \"X\"}");
  }

  // "hcom_allReduce__612_4_1" into name_buf_
  std::string_view comm_name(const OpRec& op, CommKind kind) {
    const CommGroup& g = sc_.topo.groups[static_cast<size_t>(op.group)];
    name_buf_.assign("hcom_");
    name_buf_ += comm_kind_name(kind);
    name_buf_ += "__";
    char h[8];
    std::snprintf(h, sizeof h, "%03u", static_cast<unsigned>(g.hash % 1000));
    name_buf_ += h;
    name_buf_ += '_';
    name_buf_ += std::to_string(op.seq);
    name_buf_ += "_1";
    return name_buf_;
  }
  std::string comm_type(CommKind kind) { return std::string("hcom_") + comm_kind_name(kind) + "_"; }

  const SyncSpec& sync_of(const OpRec& op, int prog) const {
    return sc_.programs[static_cast<size_t>(prog)].segments[static_cast<size_t>(op.seg)].sync;
  }
  /// The op's kind on this rank: a P2P transfer is a send on the sender and a receive on the receiver.
  CommKind op_kind(const OpRec& op, int prog) const {
    const SyncSpec& s = sync_of(op, prog);
    if (s.p2p_from < 0) return s.comm;
    return s.p2p_from == stage_ ? CommKind::kSend : CommKind::kReceive;
  }

  /// What the db export needs of a plane task beyond its trace fields.
  struct PlaneDb {
    int plane;
    int64_t group_id, op_id;
    uint64_t cid;  ///< the op's connection id
  };

  void plane_task(uint64_t tid, const char* name, const char* task_type, int64_t start, int64_t dur, int src, int dst,
                  const char* transport, int64_t bytes, const char* link, double bw, uint32_t task_id, const PlaneDb& pd) {
    ev(kX);
    ++c_.plane_tasks;
    if (dbw_) {
      const int64_t tt = db_.str(task_type);
      const int64_t g = db_.task(start + toff_, start + dur + toff_, static_cast<int64_t>(pd.cid), tt, 4294967295LL,
                                 kCommStream, task_id);
      db_.comm_task({db_.str(name), g, tt, pd.plane, pd.group_id, static_cast<int64_t>(task_id % 64), src, dst,
                     db_enum::transport_type(transport), bytes, db_enum::data_type("BF16"), db_enum::link_type(link),
                     pd.op_id, bw});
    }
    if (text_) plane_event(tid, name, task_type, start, dur, src, dst, transport, bytes, link, bw, task_id);
    // torch_npu also writes the task on its stream in Ascend Hardware, as the TASK row above: named by its
    // task type (the database has no name for it), Subtask Id = the row's contextId, the op's connection id
    hardware_task(kCommStream, task_type, task_type, start, dur, task_id, static_cast<int64_t>(pd.cid));
  }
  void plane_event(uint64_t tid, const char* name, const char* task_type, int64_t start, int64_t dur, int src, int dst,
                   const char* transport, int64_t bytes, const char* link, double bw, uint32_t task_id) {
    tv_.put("{\"name\": \"");
    tv_.put(name);
    tv_.put("\", \"pid\": ");
    tv_.u64(pids_.comm);
    tv_.put(", \"tid\": ");
    tv_.u64(tid);
    tv_.put(", \"ts\": ");
    ts(start);
    tv_.put(", \"dur\": ");
    tv_.us_trim(dur);
    tv_.put(", \"args\": {\"notify_id\": \"");
    tv_.u64(task_id % 64);
    tv_.put("\", \"duration estimated(us)\": ");
    tv_.us_trim(dur);
    tv_.put(", \"stream id\": ");
    tv_.i64(kCommStream);
    tv_.put(", \"task id\": ");
    tv_.u64(task_id);
    tv_.put(", \"context id\": 4294967295, \"task type\": \"");
    tv_.put(task_type);
    tv_.put("\", \"src rank\": ");
    tv_.i64(src);
    tv_.put(", \"dst rank\": ");
    tv_.i64(dst);
    tv_.put(", \"transport type\": \"");
    tv_.put(transport);
    tv_.put("\", \"size(Byte)\": ");
    tv_.i64(bytes);
    tv_.put(", \"data type\": \"BF16\", \"link type\": \"");
    tv_.put(link);
    tv_.put("\", \"bandwidth(GB/s)\": ");
    tv_.dbl(bw);
    tv_.put(", \"model id\": 4294967295}, \"ph\": \"X\"}");
  }

  bool cross_node(int group) const {
    const auto& rs = sc_.topo.groups[static_cast<size_t>(group)].ranks;
    const int rpn = sc_.topo.ranks >= 8 ? 8 : sc_.topo.ranks;
    return rs.front() / rpn != rs.back() / rpn;
  }

  // ---- kernel_details.csv ----
  void kd_zero_aic() { kd_.put(",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"); }
  void kd_zero_aiv() { kd_.put(",0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"); }

  int16_t jitter_ratio(int16_t r, uint64_t h) const {
    const int v = r + static_cast<int>(h % 61) - 30;
    return static_cast<int16_t>(std::clamp(v, 0, 1000));
  }

  // The 25 metric cells of a compute row as the text prints them: pmu_v_[i] is the integer the cell was
  // formatted from (ns for the "(us)" columns, cycles, or thousandths with pmu_milli_[i]); pmu_n_ = 0 when
  // every cell is N/A (AI_CPU).
  void pmu_set(int i, int64_t v, bool milli) {
    pmu_v_[i] = v;
    pmu_milli_[i] = milli;
  }

  void kd_metrics(const KernelSpec& k, int64_t dur, uint64_t h, uint8_t flags) {
    pmu_n_ = 0;
    if (k.core == Core::kAiCpu) {
      for (int i = 0; i < 25; ++i) kd_.put(",N/A");
      return;
    }
    pmu_n_ = kPmuCount;
    const bool aic = k.core == Core::kAiCore || k.core == Core::kMixAic || k.core == Core::kMixAiv;
    const bool aiv = k.core == Core::kAiVectorCore || k.core == Core::kMixAic || k.core == Core::kMixAiv;
    const int64_t busy = dur * 96 / 100;
    int16_t mac = 0;
    if (aic) {
      const int blocks = (flags & kFlagBlockDimOne) ? 1 : std::max(1, k.block_dim);
      const int64_t cycles = busy * 18 / 10 * blocks;  // 1.8 GHz x cores
      kd_.put(',');
      kd_.us3(busy);
      kd_.put(',');
      kd_.i64(cycles);
      pmu_set(0, busy, false);
      pmu_set(1, cycles, false);
      for (size_t i = 0; i < 5; ++i) {
        int16_t r = jitter_ratio(k.aic_ratio[i], mix64(h + i));
        if ((flags & kFlagUnderused) && i == 0) r = kUnderusedMac;
        if ((flags & kFlagUnderused) && i == 3) r = kUnderusedMte2;
        if (i == 0) mac = r;
        const int64_t t = busy * r / 1000;
        kd_.put(',');
        kd_.us3(t);
        kd_.put(',');
        kd_.milli3(r);
        pmu_set(2 + 2 * static_cast<int>(i), t, false);
        pmu_set(3 + 2 * static_cast<int>(i), r, true);
      }
      const auto miss = static_cast<int64_t>(10 + mix64(h + 9) % 50);
      kd_.put(',');
      kd_.milli3(miss);
      pmu_set(12, miss, true);
    } else {
      kd_zero_aic();
      for (int i = 0; i < 13; ++i) pmu_set(i, 0, false);
    }
    if (aiv) {
      const int blocks = (flags & kFlagBlockDimOne) ? 1
                         : k.core == Core::kAiVectorCore ? std::max(1, k.block_dim)
                                                         : std::max(1, k.mix_block_dim);
      const int64_t cycles = busy * 18 / 10 * blocks;
      kd_.put(',');
      kd_.us3(busy);
      kd_.put(',');
      kd_.i64(cycles);
      pmu_set(13, busy, false);
      pmu_set(14, cycles, false);
      for (size_t i = 0; i < 4; ++i) {
        int16_t r = jitter_ratio(k.aiv_ratio[i], mix64(h + 16 + i));
        if ((flags & kFlagScalarHeavy) && i == 0) r = kScalarHeavyVec;
        if ((flags & kFlagScalarHeavy) && i == 1) r = kScalarHeavyScalar;
        const int64_t t = busy * r / 1000;
        kd_.put(',');
        kd_.us3(t);
        kd_.put(',');
        kd_.milli3(r);
        pmu_set(15 + 2 * static_cast<int>(i), t, false);
        pmu_set(16 + 2 * static_cast<int>(i), r, true);
      }
      const auto miss = static_cast<int64_t>(10 + mix64(h + 29) % 50);
      kd_.put(',');
      kd_.milli3(miss);
      pmu_set(23, miss, true);
    } else {
      kd_zero_aiv();
      for (int i = 13; i < 24; ++i) pmu_set(i, 0, false);
    }
    kd_.put(',');
    if (!aic) {
      kd_.put('0');
      pmu_set(24, 0, false);
    } else if (flags & kFlagUnderused) {
      kd_.milli3(kUnderusedCubeUtilMilli);
      pmu_set(24, kUnderusedCubeUtilMilli, true);
    } else {
      kd_.milli3(static_cast<int64_t>(mac) * 100);  // the mac ratio in %
      pmu_set(24, static_cast<int64_t>(mac) * 100, true);
    }
  }

  void kd_common(int64_t start, int64_t dur) {
    if (!span_seen_) span_first_ = start;
    span_seen_ = true;
    span_last_ = std::max(span_last_, start + dur);
    kd_.put(',');
    kd_.us3(start + toff_);
    kd_.put("\t,");
    kd_.us3(dur);
    kd_.put(',');
    if (c_.kernel_rows == 0) kd_.put('0');
    else kd_.us6(std::max<int64_t>(0, start - prev_end_));
    prev_end_ = start + dur;
  }

  void kd_kernel_row(int step, const OpRec& op) {
    const KernelSpec& k = sc_.kernels[static_cast<size_t>(op.spec)];
    const uint8_t flags = fault_flag_.empty() ? 0 : fault_flag_[static_cast<size_t>(op.spec)];
    kd_.i64(step);
    kd_.put(',');
    kd_.i64(lay_.device);
    kd_.put(",4294967295,");
    kd_.u64(op.task_id);
    kd_.put(',');
    kd_.i64(kComputeStream);
    kd_.put(',');
    kd_.put(k.name);
    kd_.put(',');
    kd_.put(k.type);
    kd_.put(",dynamic,");
    kd_.put(core_name(k.core));
    kd_common(op.start, op.dur);
    kd_.put(',');
    kd_.i64((flags & kFlagBlockDimOne) ? 1 : k.block_dim);
    kd_.put(',');
    kd_.i64(k.mix_block_dim);
    kd_.put(",NO,\"\"\"");
    kd_.put(k.in_shapes);
    kd_.put("\"\"\",");
    kd_.put(k.in_dtypes);
    kd_.put(',');
    kd_.put(k.in_formats);
    kd_.put(",\"\"\"");
    kd_.put(k.out_shapes);
    kd_.put("\"\"\",");
    kd_.put(k.out_dtypes);
    kd_.put(',');
    kd_.put(k.out_formats);
    kd_.put(",N/A");
    kd_metrics(k, op.dur,
               hash_of(sc_.seed ^ 0x3e7, static_cast<uint64_t>(lay_.rank), static_cast<uint64_t>(step), op.jkey), flags);
    kd_.put("\r\n");
    if (dbw_) {
      // TASK + COMPUTE_TASK_INFO + TASK_PMU_INFO, globalTaskId in kernel_details row order
      const SpecIds& ids = spec_ids(op.spec);
      const int64_t g = db_.task(op.start + toff_, op.start + toff_ + op.dur, static_cast<int64_t>(op.cid) + 1, ids.core,
                                 4294967295LL, kComputeStream, op.task_id);
      db_.compute_info(g, {ids.name, (flags & kFlagBlockDimOne) ? 1 : k.block_dim, k.mix_block_dim, ids.core, ids.type,
                           ids.in_formats, ids.in_dtypes, ids.in_shapes, ids.out_formats, ids.out_dtypes, ids.out_shapes,
                           id_na_, id_dynamic_, id_no_});
      static_assert(kPmuCount == DbSink::kPmuBatch);
      if (pmu_n_ == kPmuCount) db_.pmu_batch(g, pmu_name_, pmu_v_, pmu_milli_);
    }
    if (flags & kFlagCounted) ++c_.fault_kernel_calls[k.name];
    op_stats_[static_cast<size_t>(op_group_[static_cast<size_t>(op.spec)])].add(op.dur);
    // the AscendCL@ host API duration written to trace_view.json
    api_stats_[static_cast<size_t>(api_group_[static_cast<size_t>(op.spec)])].add(op.launch + 2500 -
                                                                                 (op.host_start + op.host_dur / 5));
    launch_stats_.add(1200 + static_cast<int64_t>(hash_of(sc_.seed ^ 0x1a, static_cast<uint64_t>(lay_.rank),
                                                          static_cast<uint64_t>(step), op.jkey) %
                                                  1800));
    ++c_.kernel_rows;
    ++c_.kernel_rows_compute;
    if (k.core == Core::kAiCpu) ++c_.kernel_rows_aicpu;
  }

  void kd_comm_row(int step, const OpRec& op, std::string_view name, std::string_view type) {
    kd_.i64(step);
    kd_.put(',');
    kd_.i64(lay_.device);
    kd_.put(",4294967295,N/A,N/A,");
    kd_.put(name);
    kd_.put(',');
    kd_.put(type);
    kd_.put(",N/A,COMMUNICATION");
    kd_common(op.start, op.dur);
    kd_.put(",0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A");
    for (int i = 0; i < 25; ++i) kd_.put(",N/A");
    kd_.put("\r\n");
    ++c_.kernel_rows;
    ++c_.kernel_rows_comm;
  }

  // ---- communication.json ----
  void cm_transport_zero() {
    cm_.put("{\"Transit Size(MB)\": 0, \"Transit Time(ms)\": 0, \"Bandwidth(GB/s)\": 0, \"Large Packet Ratio\": 0, "
            "\"Size Distribution\": {}}");
  }
  void cm_bins(const std::vector<SizeBin>& bins) {
    cm_.put('{');
    for (size_t i = 0; i < bins.size(); ++i) {
      if (i) cm_.put(", ");
      cm_.put('"');
      cm_.dbl(bins[i].pkt_mb);
      cm_.put("\": [");
      cm_.i64(bins[i].count);
      cm_.put(", ");
      cm_.dbl(bins[i].ms);
      cm_.put(']');
    }
    cm_.put('}');
  }
  void cm_time_info(const double* v, bool with_start, double start_us) {
    // v: elapse, transit, wait, sync, idle (ms)
    cm_.put("{\"Communication Time Info\": {");
    if (with_start) {
      cm_.put("\"Start Timestamp(us)\": ");
      cm_.dbl(start_us);
      cm_.put(", ");
    }
    cm_.put("\"Elapse Time(ms)\": ");
    cm_.dbl(v[0]);
    cm_.put(", \"Transit Time(ms)\": ");
    cm_.dbl(v[1]);
    cm_.put(", \"Wait Time(ms)\": ");
    cm_.dbl(v[2]);
    cm_.put(", \"Synchronization Time(ms)\": ");
    cm_.dbl(v[3]);
    cm_.put(", \"Idle Time(ms)\": ");
    cm_.dbl(v[4]);
    cm_.put(", \"Wait Time Ratio\": ");
    cm_.dbl(v[1] + v[2] > 0 ? round4(v[2] / (v[2] + v[1])) : 0.0);
    cm_.put(", \"Synchronization Time Ratio\": ");
    cm_.dbl(v[1] + v[3] > 0 ? round4(v[3] / (v[3] + v[1])) : 0.0);
    cm_.put("}, \"Communication Bandwidth Info\": {");
  }

  void write_comm_json(int step_number, int prog, const std::vector<size_t>& comm_ops, const StepRec& rec) {
    if (comm_ops.empty()) return;
    if (comm_steps_++) cm_.put(", ");
    cm_.put("\"step");
    cm_.i64(step_number);
    p2p_ops_.clear();
    coll_ops_.clear();
    for (const size_t i : comm_ops) (sync_of(rec.ops[i], prog).p2p_from >= 0 ? p2p_ops_ : coll_ops_).push_back(i);
    cm_.put("\": {\"p2p\": ");
    write_comm_section(prog, p2p_ops_, rec, step_number, "p2p");
    cm_.put(", \"collective\": ");
    write_comm_section(prog, coll_ops_, rec, step_number, "collective");
    cm_.put('}');
  }

  // {"<op>@<hash>": {...}, ..., "Total Op Info": {...}} or {} when there are no ops
  // With the db export every op is also a CommAnalyzerTime row and one CommAnalyzerBandwidth row per
  // (transport with traffic, size bin) of analysis.db (a transport without a size distribution: one row
  // with package_size 0, count 0); the "Total Op Info" entry has no row.
  void write_comm_section(int prog, const std::vector<size_t>& comm_ops, const StepRec& rec, int step_number,
                          const char* section) {
    cm_.put('{');
    if (comm_ops.empty()) {
      cm_.put('}');
      return;
    }
    double tot[5] = {0, 0, 0, 0, 0};
    TransportAcc acc[5];  // RDMA, HCCS, PCIE, SDMA, SIO
    for (size_t n = 0; n < comm_ops.size(); ++n) {
      const OpRec& op = rec.ops[comm_ops[n]];
      const SyncSpec& s = sync_of(op, prog);
      const CommGroup& g = sc_.topo.groups[static_cast<size_t>(op.group)];
      if (n) cm_.put(", ");
      cm_.put('"');
      cm_.put(comm_name(op, op_kind(op, prog)));
      cm_.put('@');
      cm_.u64(g.hash);
      cm_.put("\": ");
      const int64_t tr_ns = op.transit * 85 / 100;
      const int64_t sync_ns = op.wait * 9 / 10;
      double v[5];
      v[0] = static_cast<double>(op.dur) / 1e6;
      v[1] = static_cast<double>(tr_ns) / 1e6;
      v[2] = static_cast<double>(op.wait) / 1e6;
      v[3] = static_cast<double>(sync_ns) / 1e6;
      v[4] = std::max(0.0, v[0] - v[1] - v[2]);
      for (int i = 0; i < 5; ++i) tot[i] += v[i];
      cm_time_info(v, true, static_cast<double>(op.start + toff_) / 1000.0);
      if (dbw_) {
        db_op_name_ = name_buf_;
        db_group_hash_ = std::to_string(g.hash);
        db_step_ = "step" + std::to_string(step_number);
        db_.comm_time(db_op_name_, db_group_hash_, static_cast<double>(op.start + toff_) / 1000.0, v, db_step_, section);
      }
      const bool rdma = cross_node(op.group);
      const double size_mb = static_cast<double>(s.bytes) / 1e6;
      const int64_t npk = std::clamp<int64_t>(s.bytes / (int64_t{2} << 20), 1, 64);
      const double pkt_mb = size_mb / static_cast<double>(npk);
      const double bw = v[1] > 0 ? round4(size_mb / v[1]) : 0.0;
      static const char* const kTransports[] = {"RDMA", "HCCS", "PCIE", "SDMA", "SIO"};
      for (int t = 0; t < 5; ++t) {
        if (t) cm_.put(", ");
        cm_.put('"');
        cm_.put(kTransports[t]);
        cm_.put("\": ");
        const bool active = rdma ? t == 0 : (t == 1 || t == 3);
        if (!active) {
          cm_transport_zero();
          continue;
        }
        cm_.put("{\"Transit Size(MB)\": ");
        cm_.dbl(size_mb);
        cm_.put(", \"Transit Time(ms)\": ");
        cm_.dbl(v[1]);
        cm_.put(", \"Bandwidth(GB/s)\": ");
        cm_.dbl(bw);
        cm_.put(", \"Large Packet Ratio\": ");
        cm_.dbl(t == 0 && pkt_mb >= 1.0 ? 1.0 : 0.0);
        cm_.put(", \"Size Distribution\": ");
        std::vector<SizeBin> bins;
        if (t != 3) bins.push_back({pkt_mb, npk, v[1]});  // SDMA aggregates without a distribution
        cm_bins(bins);
        if (dbw_) {
          const double lpr = t == 0 && pkt_mb >= 1.0 ? 1.0 : 0.0;
          if (bins.empty())
            db_.comm_bandwidth(db_op_name_, db_group_hash_, kTransports[t], size_mb, v[1], bw, lpr, 0.0, 0, 0.0, db_step_,
                               section);
          for (const SizeBin& b : bins)
            db_.comm_bandwidth(db_op_name_, db_group_hash_, kTransports[t], size_mb, v[1], bw, lpr, b.pkt_mb, b.count, b.ms,
                               db_step_, section);
        }
        cm_.put('}');
        if (t != 3) {
          acc[t].add(pkt_mb, npk, v[1]);
        } else {
          acc[t].size_mb += size_mb;
          acc[t].time_ms += v[1];
        }
      }
      cm_.put("}}");
      ++c_.comm_json_ops;
    }
    cm_.put(", \"Total Op Info\": ");
    tot[4] = std::max(0.0, tot[0] - tot[1] - tot[2]);
    cm_time_info(tot, false, 0);
    static const char* const kTransports[] = {"RDMA", "HCCS", "PCIE", "SDMA", "SIO"};
    for (int t = 0; t < 5; ++t) {
      if (t) cm_.put(", ");
      cm_.put('"');
      cm_.put(kTransports[t]);
      cm_.put("\": {\"Transit Time(ms)\": ");
      if (acc[t].time_ms > 0) cm_.dbl(acc[t].time_ms);
      else cm_.put('0');
      cm_.put(", \"Transit Size(MB)\": ");
      if (acc[t].size_mb > 0) cm_.dbl(acc[t].size_mb);
      else cm_.put('0');
      cm_.put(", \"Size Distribution\": ");
      cm_bins(acc[t].bins);
      cm_.put('}');
    }
    cm_.put("}}}");
  }

  // ---- op_statistic.csv / api_statistic.csv (E3: leading Device_id) ----
  void write_op_statistic() {
    os_.put("Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\r\n");
    std::vector<size_t> order;
    int64_t sum = 0;
    for (size_t i = 0; i < op_stats_.size(); ++i)
      if (op_stats_[i].count > 0) {
        order.push_back(i);
        sum += op_stats_[i].total;
      }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (op_stats_[a].total != op_stats_[b].total) return op_stats_[a].total > op_stats_[b].total;
      return op_keys_[a] < op_keys_[b];
    });
    for (const size_t i : order) {
      const TimeStats& t = op_stats_[i];
      os_.i64(lay_.device);
      os_.put(',');
      os_.put(op_keys_[i]);  // "Type,CORE"
      os_.put(',');
      os_.u64(t.count);
      os_.put(',');
      os_.us3(t.total);
      os_.put(',');
      os_.us3(t.min);
      os_.put(',');
      os_.us3(std::llround(static_cast<double>(t.total) / static_cast<double>(t.count)));
      os_.put(',');
      os_.us3(t.max);
      os_.put(',');
      os_.milli3(sum > 0 ? std::llround(static_cast<double>(t.total) * 100000.0 / static_cast<double>(sum)) : 0);
      os_.put("\r\n");
    }
  }

  void api_row(std::string_view level, std::string_view name, const TimeStats& t) {
    as_.put("host,");
    as_.put(level);
    as_.put(',');
    as_.put(name);
    as_.put(',');
    as_.dbl(round3(static_cast<double>(t.total) / 1000.0));
    as_.put(',');
    as_.u64(t.count);
    as_.put(',');
    as_.dbl(t.count ? round3(static_cast<double>(t.total) / 1000.0 / static_cast<double>(t.count)) : 0.0);
    as_.put(',');
    as_.dbl(round3(static_cast<double>(t.min) / 1000.0));
    as_.put(',');
    as_.dbl(round3(static_cast<double>(t.max) / 1000.0));
    as_.put(',');
    as_.dbl(round3(t.variance_us2()));
    as_.put("\r\n");
  }

  void write_api_statistic() {
    const int64_t span = span_seen_ ? span_last_ - span_first_ : 0;
    c_.kernel_span_ns = span;
    if (host_sync_heavy_) {
      // StreamSynchronize takes kHostSyncShare of the kernel span, spread evenly over the steps
      sync_stats_ = TimeStats{};
      const auto steps = static_cast<int64_t>(sc_.steps);
      const int64_t total = std::llround(static_cast<double>(span) * kHostSyncShare);
      for (int64_t s = 0; s < steps; ++s) sync_stats_.add(total / steps + (s + 1 == steps ? total % steps : 0));
    }
    c_.stream_sync_ns = sync_stats_.total;
    c_.kernel_launch_ns = launch_stats_.total;
    as_.put("Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\r\n");
    struct Row {
      std::string_view level, name;
      const TimeStats* t;
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < api_stats_.size(); ++i)
      if (api_stats_[i].count > 0) rows.push_back({"acl", api_keys_[i], &api_stats_[i]});
    if (launch_stats_.count > 0) rows.push_back({"runtime", "KernelLaunch", &launch_stats_});
    if (sync_stats_.count > 0) rows.push_back({"runtime", "StreamSynchronize", &sync_stats_});
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
    for (const Row& r : rows) api_row(r.level, r.name, *r.t);
  }

  // nn.Module ranges of the step (with_modules): python_function X events on the Python thread, as
  // torch_npu's with_modules=True writes them (database: PYTORCH_API rows of type trace)
  void write_modules(const StepRec& rec, int prog) {
    step_modules(sc_, prog, rec, op_device_, module_id_, module_ranges_, c_.modules);
    for (const ModuleRange& m : module_ranges_) {
      ev(kX);
      ++c_.python_ops;
      if (text_) {
        tv_.put("{\"ph\": \"X\", \"name\": \"nn.Module: ");
        tv_.put(m.name);
        tv_.put("\", \"pid\": ");
        tv_.u64(pids_.python);
        tv_.put(", \"tid\": ");
        tv_.u64(static_cast<uint64_t>(lay_.host_pid));
        tv_.put(", \"ts\": ");
        ts(m.start);
        tv_.put(", \"dur\": ");
        tv_.us_trim(m.end - m.start);
        tv_.put(", \"cat\": \"python_function\", \"args\": {\"Python id\": ");
        tv_.i64(m.python_id);
        tv_.put(", \"Python parent id\": ");
        tv_.i64(m.parent_id);
        tv_.put(", \"Python module id\": 0}}");
      }
      if (dbw_)
        db_.pytorch_api(m.start + toff_, m.end + toff_, db_.fwk("nn.Module: " + m.name), -1, 0, -1, -1, db_enum::kApiTrace, -1);
    }
  }

  // ---- one step ----
  void write_step(const StepRec& rec, int prog) {
    const int step_number = sc_.first_step + rec.index;
    // the host's stream synchronisation at the step end (api_statistic): short, the host launches ahead
    sync_stats_.add(15000 + static_cast<int64_t>(hash_of(sc_.seed ^ 0x5c, static_cast<uint64_t>(lay_.rank),
                                                         static_cast<uint64_t>(rec.index)) %
                                                 30000));
    const StepProgram& program = sc_.programs[static_cast<size_t>(prog)];
    StepCounts cnt;
    cnt.step = step_number;
    cnt.start_ns = rec.host_start + toff_;
    cnt.end_ns = rec.host_end + toff_;
    const bool layer_rows = rec.index < kLayerRowSteps;
    if (layer_rows) {
      cnt.layer_first_row.assign(program.layers.size(), -1);
      cnt.layer_anchor_row.assign(program.layers.size(), -1);
    }

    // kernel_details rows: device work sorted by start
    order_.clear();
    comm_ops_.clear();
    if (dbw_) op_ids_.assign(rec.ops.size(), -1);
    for (size_t i = 0; i < rec.ops.size(); ++i)
      if (rec.ops[i].kind != OpRec::Kind::kAux) order_.push_back(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return rec.ops[a].start < rec.ops[b].start; });
    for (const size_t i : order_) {
      const OpRec& op = rec.ops[i];
      const auto row = static_cast<int64_t>(c_.kernel_rows);
      if (op.kind == OpRec::Kind::kComm) {
        const CommKind kind = op_kind(op, prog);
        const std::string type = comm_type(kind);
        kd_comm_row(step_number, op, comm_name(op, kind), type);
        if (dbw_) {  // COMMUNICATION_OP, opId in kernel_details row order
          const int64_t name_id = comm_names_unique_ ? db_.str_unique(name_buf_) : db_.str(name_buf_);
          op_ids_[i] = db_.comm_op(name_id, op.start + toff_, op.start + toff_ + op.dur, static_cast<int64_t>(op.cid) + 1,
                                   group_id(op.group), db_enum::data_type("BF16"),
                                   db_.str(cross_node(op.group) ? "HD" : "MESH"), sync_of(op, prog).bytes / 2, db_.str(type));
        }
        comm_ops_.push_back(i);
        if (slow_link_) {
          if (c_.slow_ops.size() < 16) c_.slow_ops.emplace_back(name_buf_);
          ++c_.slow_op_count;
        }
      } else {
        kd_kernel_row(step_number, op);
        if (op.moe_call >= 0) {  // FusedDeepMoe: K counts the rank's rows of it in kernel_details order
          if (rec.index + 1 == sc_.steps)
            moe_last_ = {rec.index, op.moe_call, static_cast<int64_t>(moe_rows_), op.start, op.dur};
          ++moe_rows_;
        }
        if (op.island) {
          if (cnt.island_first_row < 0) cnt.island_first_row = row;
          cnt.island_last_row = row;
          if (sc_.kernels[static_cast<size_t>(op.spec)].core == Core::kAiCpu) ++c_.island_aicpu_rows;
        }
        if (layer_rows && op.layer >= 0) {
          auto& first = cnt.layer_first_row[static_cast<size_t>(op.layer)];
          if (first < 0) first = row;
          auto& anchor = cnt.layer_anchor_row[static_cast<size_t>(op.layer)];
          if (anchor < 0 && sc_.kernels[static_cast<size_t>(op.spec)].anchor) anchor = row;
        }
      }
      ++cnt.kernel_rows;
    }
    cnt.comm_ops = comm_ops_.size();

    // trace_view.json
    ev(kX);
    ++c_.python_ops;
    ++c_.profiler_steps;
    if (text_) {
      tv_.put("{\"ph\": \"X\", \"name\": \"ProfilerStep#");
      tv_.i64(step_number);
      tv_.put("\", \"pid\": ");
      tv_.u64(pids_.python);
      tv_.put(", \"tid\": ");
      tv_.u64(static_cast<uint64_t>(lay_.host_pid));
      tv_.put(", \"ts\": ");
      ts(rec.host_start);
      tv_.put(", \"dur\": ");
      tv_.us_trim(rec.host_end - rec.host_start);
      tv_.put(", \"cat\": \"cpu_op\", \"args\": {\"Sequence number\": -1, \"Fwd thread id\": 0}}");
    }
    if (dbw_) {
      db_.pytorch_api(rec.host_start + toff_, rec.host_end + toff_, db_.fwk("ProfilerStep#" + std::to_string(step_number)),
                      -1, 0, -1, -1, db_enum::kApiOp, -1);
      db_.step_time(step_number, rec.host_start + toff_, rec.host_end + toff_);
    }

    ev(kC);
    ++c_.counter_events;
    if (text_) {
      tv_.put("{\"name\": \"AI Core Freq\", \"ts\": ");
      ts(rec.host_start);
      tv_.put(", \"pid\": ");
      tv_.u64(pids_.freq);
      tv_.put(", \"tid\": 0, \"args\": {\"MHz\": ");
      tv_.u64(static_cast<uint64_t>(aicore_mhz_));
      tv_.put("}, \"ph\": \"C\"}");
    }
    if (dbw_) db_.aicore_freq(rec.host_start + toff_, aicore_mhz_);

    const uint64_t htid = static_cast<uint64_t>(lay_.host_pid);
    if (sc_.with_modules) op_device_.assign(rec.ops.size(), OpDevice{});
    for (size_t oi = 0; oi < rec.ops.size(); ++oi) {
      const OpRec& op = rec.ops[oi];
      if (sc_.with_modules && op.kind != OpRec::Kind::kComm) op_device_[oi] = {1, op.dur, 0};  // its one device task
      if (op.kind == OpRec::Kind::kAux) {
        // No connection_id: 0 is also what the step's aclrtSynchronizeStream carries, and a task that
        // shares a connection_id with a CANN call counts as launched by it (host-bound analysis).
        device_task("EVENT_RECORD", "EVENT_RECORD_SQE", op.start, op.dur, op.task_id, -1);
        if (dbw_)
          db_.task(op.start + toff_, op.start + toff_ + op.dur, -1, db_.str("EVENT_RECORD_SQE"), 4294967295LL,
                   kComputeStream, op.task_id);
        continue;
      }
      const int64_t acl_start = op.host_start + op.host_dur / 5;
      const uint64_t dev_cid = op.cid + 1;
      if (op.kind == OpRec::Kind::kKernel) {
        const KernelSpec& k = sc_.kernels[static_cast<size_t>(op.spec)];
        if (dbw_) {
          // the torch op (its torch_to_npu flow: CONNECTION_IDS -> the device task's connection id), the
          // AscendCL call and the node launch that owns the device task (replaces the HostToDevice flow);
          // the device task itself was written with its kernel_details row
          const SpecIds& ids = spec_ids(op.spec);
          db_.pytorch_api(op.host_start + toff_, op.host_start + op.host_dur + toff_, ids.aten, -1, 0, ids.fwk_dtypes,
                          ids.fwk_shapes, db_enum::kApiOp, static_cast<int64_t>(dev_cid));
          db_.cann_api(acl_start + toff_, op.launch + 2500 + toff_, db_enum::kApiAcl, op.cid, ids.acl);
          db_.cann_api(op.launch + toff_, op.launch + kNodeLaunchDurNs + toff_, db_enum::kApiNode,
                       static_cast<int64_t>(dev_cid), id_launch_);
        }
        python_op(k.aten, op.host_start, op.host_dur, op.spec);
        cann_op("AscendCL@", k.acl, acl_start, op.launch + 2500 - acl_start, "ACL_OP", "acl", k.acl, "0", op.cid);
        cann_op("Node@launch", "", op.launch, kNodeLaunchDurNs, "launch", "node", "0", k.name, dev_cid);
        h2d_flow(true, dev_cid, op.launch, pids_.cann, htid);
        npu_flow(true, op.start, op.host_start, pids_.python, htid);
        device_task(k.name, core_name(k.core), op.start, op.dur, op.task_id, static_cast<int64_t>(dev_cid));
        ++c_.device_tasks_kernels;
        h2d_flow(false, dev_cid, op.start, pids_.hardware, kComputeStream);
        npu_flow(false, op.start, op.start, pids_.hardware, kComputeStream);
      } else {
        const SyncSpec& s = sync_of(op, prog);
        const CommKind kind = op_kind(op, prog);
        const std::string type = comm_type(kind);
        python_op(comm_torch_op(kind), op.host_start, op.host_dur, -1);
        if (dbw_) {
          db_.pytorch_api(op.host_start + toff_, op.host_start + op.host_dur + toff_, db_.fwk(comm_torch_op(kind)), -1, 0,
                          -1, -1, db_enum::kApiOp, static_cast<int64_t>(dev_cid));
          db_.cann_api(acl_start + toff_, op.launch + 2500 + toff_, db_enum::kApiAcl, op.cid, db_.str(type));
          db_.cann_api(acl_start + toff_, op.launch + 2500 + toff_, db_enum::kApiNode, static_cast<int64_t>(dev_cid),
                       id_launch_);
        }
        // As torch_npu writes an HCCL op: the AscendCL call (cid) and a Node@launch over the same span that
        // owns the op's device tasks (cid + 1: the group op and its plane tasks), where its HostToDevice
        // flow starts.
        cann_op("AscendCL@", type, acl_start, op.launch + 2500 - acl_start, "ACL_OP", "acl", type, "0", op.cid);
        cann_op("Node@launch", "", acl_start, op.launch + 2500 - acl_start, "launch", "node", "0", type, dev_cid);
        h2d_flow(true, dev_cid, acl_start, pids_.cann, htid);
        npu_flow(true, op.start, op.host_start, pids_.python, htid);
        const auto gtid = static_cast<uint64_t>(group_tid_[static_cast<size_t>(op.group)]);
        // Group thread op (the db export wrote it as COMMUNICATION_OP with its kernel_details row)
        ev(kX);
        ++c_.comm_ops;
        if (text_) {
          tv_.put("{\"name\": \"");
          tv_.put(comm_name(op, kind));
          tv_.put("\", \"pid\": ");
          tv_.u64(pids_.comm);
          tv_.put(", \"tid\": ");
          tv_.u64(gtid);
          tv_.put(", \"ts\": ");
          ts(op.start);
          tv_.put(", \"dur\": ");
          tv_.us3(op.dur);
          tv_.put(", \"args\": {\"connection_id\": ");
          tv_.u64(dev_cid);
          tv_.put(", \"model id\": 4294967295, \"data_type\": \"BF16\", \"alg_type\": \"");
          tv_.put(cross_node(op.group) ? "HD" : "MESH");
          tv_.put("\", \"count\": ");
          tv_.i64(s.bytes / 2);
          tv_.put("}, \"ph\": \"X\"}");
        }
        h2d_flow(false, dev_cid, op.start, pids_.comm, gtid);
        npu_flow(false, op.start, op.start, pids_.comm, gtid);
        // per-link tasks
        const CommGroup& g = sc_.topo.groups[static_cast<size_t>(op.group)];
        const int n = static_cast<int>(g.ranks.size());
        const int me = static_cast<int>(std::lower_bound(g.ranks.begin(), g.ranks.end(), lay_.rank) - g.ranks.begin());
        const int np = planes(op.group);
        const bool rdma = cross_node(op.group);
        const int64_t move = std::max<int64_t>(20, op.transit * 85 / 100);
        const int64_t per_plane = s.bytes / np;
        const double bw = static_cast<double>(per_plane) / static_cast<double>(move);  // bytes/ns = GB/s
        const bool reduce = kind == CommKind::kAllReduce || kind == CommKind::kReduceScatter;
        const int64_t gid = dbw_ ? group_id(op.group) : -1;
        const int64_t op_id = dbw_ ? op_ids_[oi] : -1;
        for (int p = 0; p < np; ++p) {
          const uint64_t ptid = gtid + 1 + static_cast<uint64_t>(p);
          const int peer = (me + 1 + p) % n;
          const auto tid = static_cast<uint32_t>(op.cid * 4 + static_cast<uint32_t>(p) * 3);
          const PlaneDb pd{p, gid, op_id, dev_cid};
          plane_task(ptid, "Notify_Wait", "Notify_Wait", op.start, std::max<int64_t>(20, op.wait), peer, me, "LOCAL", 0,
                     "INVALID_TYPE", 0.0, tid, pd);
          plane_task(ptid, reduce ? "Reduce_Inline" : "Memcpy", reduce ? "Reduce_Inline" : "Memcpy", op.start + op.wait,
                     move, me, peer, rdma ? "RDMA" : "SDMA", per_plane, rdma ? "ROCE" : "HCCS", round4(bw), tid + 1, pd);
          plane_task(ptid, "Notify_Record", "Notify_Record", op.start + op.wait + move, 20, me, peer, "LOCAL", 4,
                     "INVALID_TYPE", 0.0, tid + 2, pd);
        }
        // the op's device tasks are its plane tasks (the three above per plane, on stream 5)
        if (sc_.with_modules)
          op_device_[oi] = {3 * static_cast<uint64_t>(np), np * (std::max<int64_t>(20, op.wait) + move + 20),
                            np * std::max<int64_t>(20, op.wait)};
      }
    }
    if (sc_.with_modules) write_modules(rec, prog);
    cann_op("AscendCL@", "aclrtSynchronizeStream", rec.sync_start, rec.host_end - 10000 - rec.sync_start, "ACL_RTS",
            "acl", "aclrtSynchronizeStream", "0", 0);
    if (dbw_)  // connection_id 0 on every step: a fresh CANN_API id
      db_.cann_api_fresh(rec.sync_start + toff_, rec.host_end - 10000 + toff_, db_enum::kApiAcl,
                         db_.str("aclrtSynchronizeStream"));

    // Overlap Analysis + step_trace_time.csv
    comp_.clear();
    comm_.clear();
    for (const size_t i : order_) {
      const OpRec& op = rec.ops[i];
      (op.kind == OpRec::Kind::kComm ? comm_ : comp_).push_back({op.start, op.start + op.dur});
    }
    merge_sorted(comp_, comp_m_);
    merge_sorted(comm_, comm_m_);
    subtract(comm_m_, comp_m_, comm_no_);
    all_ = comp_m_;
    all_.insert(all_.end(), comm_m_.begin(), comm_m_.end());
    merge_sorted(all_, all_m_);
    free_.clear();
    for (size_t i = 1; i < all_m_.size(); ++i) free_.push_back({all_m_[i - 1].b, all_m_[i].a});
    for (const Interval& i : comp_m_) overlap_event(0, i.a, i.b);
    for (const Interval& i : comm_m_) overlap_event(1, i.a, i.b);
    for (const Interval& i : comm_no_) overlap_event(2, i.a, i.b);
    for (const Interval& i : free_) overlap_event(3, i.a, i.b);
    const int64_t computing = total(comp_m_), comm = total(comm_m_), comm_no = total(comm_no_), fr = total(free_);
    const int64_t w0 = all_m_.empty() ? rec.host_start : all_m_.front().a;
    const int64_t w1 = all_m_.empty() ? rec.host_start : all_m_.back().b;
    st_.i64(lay_.device);
    st_.put(',');
    st_.i64(step_number);
    // pipeline receives: Bubble = their time, Stage = span - Bubble, and they leave the last column
    recv_.clear();
    int64_t bubble = 0;
    for (const size_t i : comm_ops_)
      if (op_kind(rec.ops[i], prog) == CommKind::kReceive) {
        recv_.push_back({rec.ops[i].start, rec.ops[i].start + rec.ops[i].dur});
        bubble += rec.ops[i].dur;
      }
    int64_t comm_no_excl = comm_no;
    if (!recv_.empty()) {
      merge_sorted(recv_, recv_m_);
      subtract(comm_no_, recv_m_, all_);
      comm_no_excl = total(all_);
    }
    for (const int64_t v : {computing, comm_no, comm - comm_no, comm, fr, w1 - w0 - bubble}) {
      st_.put(',');
      st_.dbl(static_cast<double>(v) / 1000.0);
    }
    if (recv_.empty()) {
      st_.put(",0,");
    } else {
      st_.put(',');
      st_.dbl(static_cast<double>(bubble) / 1000.0);
      st_.put(',');
    }
    st_.dbl(static_cast<double>(comm_no_excl) / 1000.0);
    st_.put(',');
    st_.dbl(static_cast<double>(w0 - rec.host_start) / 1000.0);
    st_.put("\r\n");
    ++c_.step_trace_rows;
    if (dbw_) {  // analysis.db StepTraceTime: the same numbers, us
      DbSink::StepTrace t;
      t.step = std::to_string(step_number);
      t.computing = static_cast<double>(computing) / 1000.0;
      t.comm_not_overlapped = static_cast<double>(comm_no) / 1000.0;
      t.overlapped = static_cast<double>(comm - comm_no) / 1000.0;
      t.communication = static_cast<double>(comm) / 1000.0;
      t.free = static_cast<double>(fr) / 1000.0;
      t.stage = static_cast<double>(w1 - w0 - bubble) / 1000.0;
      t.bubble_is_int = recv_.empty();
      t.bubble = static_cast<double>(bubble) / 1000.0;
      t.comm_not_overlapped_excl_receive = static_cast<double>(comm_no_excl) / 1000.0;
      t.preparing = static_cast<double>(w0 - rec.host_start) / 1000.0;
      db_.step_trace(t);
    }

    write_comm_json(step_number, prog, comm_ops_, rec);
    c_.steps.push_back(std::move(cnt));
  }

  const Scenario& sc_;
  const SyncTable& table_;
  const RankLayout& lay_;
  RankCounts& c_;
  TracePids pids_;
  int64_t toff_;
  TextSink kd_, tv_, cm_, st_, os_, as_;
  bool text_ = true, dbw_ = false;  // exports written
  DbSink db_;
  static constexpr int kPmuCount = 25;
  int64_t pmu_v_[kPmuCount] = {};
  bool pmu_milli_[kPmuCount] = {};
  int pmu_n_ = 0;
  int64_t pmu_name_[kPmuCount] = {};
  int64_t id_launch_ = -1, id_na_ = -1, id_dynamic_ = -1, id_no_ = -1;
  std::vector<SpecIds> spec_ids_;
  std::vector<int64_t> group_ids_;
  std::vector<int64_t> op_ids_;       // per op of the step: its COMMUNICATION_OP opId
  bool comm_names_unique_ = true;
  std::string db_op_name_, db_group_hash_, db_step_;
  // operator faults
  enum : uint8_t { kFlagScalarHeavy = 1, kFlagUnderused = 2, kFlagBlockDimOne = 4, kFlagCounted = 8 };
  std::vector<uint8_t> fault_flag_;  // per KernelSpec (empty = no operator fault on this rank)
  bool host_sync_heavy_ = false;
  int64_t aicore_mhz_ = static_cast<int64_t>(kNominalAicoreMhz);  ///< the AI Core Freq counter's value
  // op_statistic / api_statistic accumulators
  std::vector<std::string> op_keys_, api_keys_;
  std::vector<int> op_group_, api_group_;  // per KernelSpec
  std::vector<TimeStats> op_stats_, api_stats_;
  TimeStats launch_stats_, sync_stats_;
  int64_t span_first_ = 0, span_last_ = 0;
  bool span_seen_ = false;
  bool first_event_ = true;
  bool slow_link_ = false;
  int comm_steps_ = 0;
  int64_t prev_end_ = 0;
  std::string npu_label_;
  std::string name_buf_;
  std::vector<std::string> dims_, types_;
  std::vector<int> group_tid_;
  std::vector<size_t> order_, comm_ops_, p2p_ops_, coll_ops_;
  std::vector<OpDevice> op_device_;         // with_modules: the device tasks of each op of the step
  std::vector<ModuleRange> module_ranges_;  // with_modules: the step's module ranges
  int64_t module_id_ = 1000;                // with_modules: the next "Python id"
  int stage_ = 0;
  uint64_t moe_rows_ = 0;    // FusedDeepMoe rows written so far (moe_trace)
  MoeTracedCall moe_last_;   // the last of them in the last step
  std::vector<Interval> comp_, comm_, comp_m_, comm_m_, comm_no_, all_, all_m_, free_, recv_, recv_m_;
};

void write_profiler_info(const Scenario& sc, const RankLayout& lay, bool text_export, JsonWriter& w) {
  w.begin_object();
  w.key("config");
  w.begin_object();
  w.key("common_config");
  w.begin_object();
  w.key("activities");
  w.begin_array();
  w.value("ProfilerActivity.CPU");
  w.value("ProfilerActivity.NPU");
  w.end_array();
  w.key("schedule");
  w.begin_object();
  w.kv("wait", 0);
  w.kv("active", sc.steps);
  w.kv("warmup", 1);
  w.kv("repeat", 1);
  w.kv("skip_first", 10);
  w.end_object();
  w.kv("record_shapes", true);
  w.kv("profile_memory", false);
  w.kv("with_stack", false);
  w.kv("with_flops", false);
  w.kv("with_modules", sc.with_modules);
  w.end_object();
  w.key("experimental_config");
  w.begin_object();
  w.kv("_profiler_level", "Level1");
  w.kv("_aic_metrics", "ACL_AICORE_PIPE_UTILIZATION");
  w.kv("_l2_cache", false);
  w.kv("_msprof_tx", false);
  w.kv("_mstx", false);
  w.kv("_data_simplification", true);
  w.kv("record_op_args", false);
  w.key("_export_type");
  w.begin_array();
  w.value(text_export ? "text" : "db");  // "both" keeps the text capture's profiler_info byte for byte
  w.end_array();
  w.key("_host_sys");
  w.begin_array();
  w.end_array();
  w.kv("_op_attr", false);
  w.key("_gc_detect_threshold");
  w.null();
  w.key("_mstx_domain_include");
  w.begin_array();
  w.end_array();
  w.key("_mstx_domain_exclude");
  w.begin_array();
  w.end_array();
  w.kv("_sys_io", false);
  w.kv("_sys_interconnection", false);
  w.end_object();
  w.end_object();
  const int64_t mono = 172163581670080LL + static_cast<int64_t>(mix64(sc.seed) % 1000000000000ULL);
  w.key("start_info");
  w.begin_object();
  w.kv("syscnt_enable", true);
  w.kv("freq", 100);
  w.kv("start_cnt", static_cast<int64_t>(mono / 10));
  w.kv("start_monotonic", mono);
  w.end_object();
  w.key("end_info");
  w.begin_object();
  w.kv("collectionTimeEnd", sc.base_time_ns + lay.clock_offset_ns + static_cast<int64_t>(sc.steps) * 50000000LL);
  w.kv("MonotonicTimeEnd", mono + static_cast<int64_t>(sc.steps) * 50000000LL + 1500000000LL);
  w.end_object();
  w.kv("torch_npu_version", "2.7.1");
  w.kv("cann_version", "8.3.RC1");
  w.kv("rank_id", std::to_string(lay.rank));
  w.end_object();
}

void write_metadata(const Scenario& sc, const RankLayout& lay, JsonWriter& w) {
  w.begin_object();
  w.key("ENV_VARIABLES");
  write_env_variables(w);
  w.key("distributed_args");
  write_distributed_args(sc, lay, w);
  w.key("parallel_group_info");
  write_parallel_group_info(sc, lay, w);
  w.end_object();
}

}  // namespace

TracePids trace_pids(int host_pid, int device) {
  const auto enc = [&](uint64_t sort) {
    return ((static_cast<uint64_t>(host_pid) << 10) | (sort << 5) | static_cast<uint64_t>(device)) & 0xFFFFFFFFULL;
  };
  TracePids p;
  p.python = static_cast<uint64_t>(host_pid);
  p.cann = enc(7);
  p.hardware = enc(14);
  p.freq = enc(15);
  p.comm = enc(16);
  p.overlap = enc(31);
  return p;
}

RankLayout rank_layout(const Scenario& sc, int rank) {
  RankLayout l;
  l.rank = rank;
  const int r = sc.topo.ranks;
  const int rpn = r >= 8 ? 8 : r;
  l.device = r >= 8 ? rank % 8 : rank % rpn + (8 - rpn);
  const int node = rank / 8;
  l.host_pid = sc.host_pid_base + rank * 11;
  const int64_t ms = sc.base_time_ns / 1000000 - 2000 +
                     static_cast<int64_t>(hash_of(sc.seed, 0xf01d, static_cast<uint64_t>(rank)) % 300);
  char worker[32];
  std::snprintf(worker, sizeof worker, "synth-node%02d", node);
  l.folder_name = std::string(worker) + "_" + std::to_string(l.host_pid) + "_" + stamp17(ms) + "_ascend_pt";
  for (const Fault& f : sc.faults)
    if (f.kind == FaultKind::kClockOffset && f.rank == rank) l.clock_offset_ns += std::llround(f.magnitude * 1000.0);
  return l;
}

Status write_rank(const Scenario& sc, const SyncTable& table, const RankLayout& layout, const fs::path& root,
                  RankCounts* counts, ExportKinds exports) {
  const fs::path dir = root / layout.folder_name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return file_error(ErrorCode::kIo, dir.string(), "", "cannot create folder: " + ec.message());
  {
    JsonWriter w(true);
    write_profiler_info(sc, layout, exports.text, w);
    const std::string body = w.take() + "\n";
    ASCPROF_RETURN_IF_ERROR(write_file_atomic(dir / ("profiler_info_" + std::to_string(layout.rank) + ".json"), body));
    counts->bytes_profiler_info = body.size();
  }
  if (exports.text) {  // db only: parallel_group_info / distributed_args go into META_DATA
    JsonWriter w(false);
    write_metadata(sc, layout, w);
    const std::string body = w.take();
    ASCPROF_RETURN_IF_ERROR(write_file_atomic(dir / "profiler_metadata.json", body));
    counts->bytes_metadata = body.size();
  }
  RankWriter writer(sc, table, layout, counts, exports);
  Status st = writer.run(dir);
  if (!st.ok()) writer.abandon();
  return st;
}

}  // namespace ascprof::synth
