// Kernel rows of a profiler database: the kernel_details.csv equivalent (see profiler_db.hpp).
#include <algorithm>
#include <array>
#include <deque>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "btree_scan.hpp"
#include "db_columns.hpp"
#include "sqlite_file.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;

namespace {

using model::kAbsentI32;
using model::kAbsentI64;

// The metric columns of kernel_details.csv in the order the text export writes them; pivoted PMU
// metrics are put in this order, others follow in the order the database first names them.
constexpr std::string_view kMetricOrder[] = {
    "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
    "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
    "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
    "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
    "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)"};

// TASK_PMU_INFO metric name -> kernel_details header, and whether the value is ns to be read as µs.
std::pair<std::string, bool> metric_header(std::string_view pmu) {
  if (pmu == "aic_total_time") return {"aicore_time(us)", true};
  if (pmu == "aiv_total_time") return {"aiv_time(us)", true};
  if (pmu == "cube_utilization") return {"cube_utilization(%)", false};
  if (pmu.size() > 5 && pmu.substr(pmu.size() - 5) == "_time") return {std::string(pmu) + "(us)", true};
  return {std::string(pmu), false};
}

int32_t narrow(int64_t v) {
  return v == kAbsentI64 || v < INT32_MIN || v > INT32_MAX ? kAbsentI32 : static_cast<int32_t>(v);
}

// One kernel row before the rows are put in start order.
struct Row {
  int64_t start, end, key, model_id, task_id;
  int32_t device, stream, context, block, mix;
  StrId name, type, core, op_state, hf32, ishape, itype, iformat, oshape, otype, oformat;
  uint8_t source;  // model::KernelSource
};

class KernelReader {
 public:
  KernelReader(const db::SqliteFile& f, StringPool& pool, const model::StepMarkerTable& steps, model::KernelTable& out,
               Stats& stats)
      : f_(f), pool_(pool), steps_(steps), out_(out), stats_(stats), ids_(f, pool, stats) {}

  Status run() {
    ASCPROF_RETURN_IF_ERROR(ids_.init());
    version_ = f_.meta("SCHEMA_VERSION");
    if (version_.empty()) version_ = "1.0.0";
    device_ = rank_device();
    ASCPROF_RETURN_IF_ERROR(compute_rows());
    ASCPROF_RETURN_IF_ERROR(communication_rows());
    ASCPROF_RETURN_IF_ERROR(ids_.status());
    order_and_fill();
    ASCPROF_RETURN_IF_ERROR(pmu());
    return ids_.status();
  }

 private:
  int32_t rank_device() const {
    if (!f_.has_table("RANK_DEVICE_MAP")) return kAbsentI32;
    auto q = f_.prepare("SELECT deviceId FROM RANK_DEVICE_MAP", "RANK_DEVICE_MAP");
    if (!q.ok() || !q->step()) return kAbsentI32;
    return narrow(q->i64(0, kAbsentI64));
  }

  // Shapes keep one pair of double quotes in the database ("32,3,224,224"), as the CSV cell does
  // before the text importer removes it.
  StrId unquoted(StrId s) {
    if (s == 0) return 0;
    auto it = unquoted_.find(s);
    if (it != unquoted_.end()) return it->second;
    std::string_view v = pool_.view(s);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return unquoted_.emplace(s, pool_.intern(v)).first->second;
  }

  void bad_row(const char* table, int64_t key, const char* what, Stats* stats = nullptr) {
    (stats != nullptr ? *stats : stats_)
        .note(Stat::db_bad_row, f_.path() + ":table " + table + ": key " + std::to_string(key) + ": " + what);
  }

  Status compute_rows() {
    cols_ = f_.columns("COMPUTE_TASK_INFO");
    if (cols_.empty()) {
      stats_.note(Stat::db_table_absent, f_.path() + ":table COMPUTE_TASK_INFO: absent");
      return {};
    }
    for (const char* need : {"name", "globalTaskId", "opType", "taskType"})
      if (!db::has_column(cols_, need))
        return f_.error("COMPUTE_TASK_INFO", std::string("missing column '") + need + "'");
    // Block dims: blockNum/mixBlockNum since 2025; older exports blockDim/mixBlockDim. On Ascend 950
    // blockDim is a SIMT string next to gridDim, so it counts only when blockNum is absent and gridDim too.
    const bool block_num = db::has_column(cols_, "blockNum");
    const bool old_block = !block_num && !db::has_column(cols_, "gridDim") && db::has_column(cols_, "blockDim");
    block_column_ = block_num ? "Block Num" : old_block ? "Block Dim" : "";
    const std::string block = block_num ? "c.blockNum" : old_block ? "c.blockDim" : "NULL";
    const std::string mix = block_num ? db::column_or_null(cols_, "mixBlockNum", "c.")
                                      : old_block ? db::column_or_null(cols_, "mixBlockDim", "c.") : "NULL";
    rows_.reserve(f_.row_count("COMPUTE_TASK_INFO") + f_.row_count("COMMUNICATION_OP"));
    if (compute_rows_scanned(old_block ? "blockDim" : block_num ? "blockNum" : "", old_block ? "mixBlockDim" : "mixBlockNum"))
      return {};
    const std::string sql =
        "SELECT t.startNs, t.endNs, t.globalTaskId, t.deviceId, t.streamId, t.taskId, t.modelId, t.contextId, c.name, "
        "c.opType, c.taskType, " + block + ", " + mix + ", " + db::column_or_null(cols_, "opState", "c.") + ", " +
        db::column_or_null(cols_, "hf32Eligible", "c.") + ", " + db::column_or_null(cols_, "inputShapes", "c.") + ", " +
        db::column_or_null(cols_, "inputDataTypes", "c.") + ", " + db::column_or_null(cols_, "inputFormats", "c.") + ", " +
        db::column_or_null(cols_, "outputShapes", "c.") + ", " + db::column_or_null(cols_, "outputDataTypes", "c.") + ", " +
        db::column_or_null(cols_, "outputFormats", "c.") +
        " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId";
    auto q = f_.prepare(sql, "COMPUTE_TASK_INFO");
    if (!q.ok()) return q.status();
    uint64_t n = 0;
    std::array<db::DbValue, 21> v;
    while (q->step()) {
      if (++n % db::kInterruptCheckRows == 0 && interrupted()) return interrupted_status(f_.path());
      for (size_t c = 0; c < v.size(); ++c) v[c] = q->value(static_cast<int>(c));
      compute_row(v.data(), v.data() + 8, stats_);
    }
    return q->status();
  }

  // One joined row: `t` the TASK values (startNs, endNs, globalTaskId, deviceId, streamId, taskId,
  // modelId, contextId), `c` the COMPUTE_TASK_INFO ones (name, opType, taskType, block, mix block,
  // opState, hf32Eligible, input shapes / types / formats, output shapes / types / formats).
  void compute_row(const db::DbValue* t, const db::DbValue* c, Stats& stats) {
    auto id = [this](const db::DbValue& x) { return x.type == SQLITE_NULL ? StrId{0} : ids_.get_id(db::value_i64(x, -1)); };
    Row r{};
    r.start = db::value_i64(t[0], -1);
    r.end = db::value_i64(t[1], -1);
    r.key = db::value_i64(t[2], -1);
    if (r.start < 0 || r.end < r.start) {
      bad_row("TASK", r.key, "startNs/endNs missing or end before start; kernel row skipped", &stats);
      return;
    }
    const int32_t dev = narrow(db::value_i64(t[3], kAbsentI64));
    r.device = dev != kAbsentI32 ? dev : device_;
    r.stream = narrow(db::value_i64(t[4], kAbsentI64));
    r.task_id = db::value_i64(t[5], kAbsentI64);
    r.model_id = db::value_i64(t[6], kAbsentI64);
    const int64_t ctx = db::value_i64(t[7], kAbsentI64);
    r.context = ctx == 4294967295LL ? kAbsentI32 : narrow(ctx);  // the DB's "invalid" is the CSV's N/A
    r.name = id(c[0]);
    r.type = id(c[1]);
    r.core = id(c[2]);
    r.block = narrow(db::value_i64(c[3], kAbsentI64));
    r.mix = narrow(db::value_i64(c[4], kAbsentI64));
    r.op_state = id(c[5]);
    r.hf32 = id(c[6]);
    r.ishape = unquoted(id(c[7]));
    r.itype = id(c[8]);
    r.iformat = id(c[9]);
    r.oshape = unquoted(id(c[10]));
    r.otype = id(c[11]);
    r.oformat = id(c[12]);
    r.source = static_cast<uint8_t>(model::KernelSource::kComputeTask);
    rows_.push_back(r);
  }

  // The join of the SQL above, as SQLite runs it (every TASK row in rowid order, its
  // COMPUTE_TASK_INFO row looked up by rowid), over the tables' pages read directly (btree_scan.hpp).
  // False, with nothing kept, when a scan refuses a table or a page does not parse: the caller then
  // runs the SQL, whose answer (rows or error) is the reference.
  bool compute_rows_scanned(const std::string& block, const std::string& mix) {
    std::vector<std::string> ccols = {"globalTaskId"};
    for (const char* name : {"name", "opType", "taskType"}) ccols.emplace_back(name);
    for (const std::string& name : {block, mix, std::string("opState"), std::string("hf32Eligible"),
                                    std::string("inputShapes"), std::string("inputDataTypes"),
                                    std::string("inputFormats"), std::string("outputShapes"),
                                    std::string("outputDataTypes"), std::string("outputFormats")})
      ccols.push_back(!name.empty() && db::has_column(cols_, name) ? name : std::string());
    std::vector<std::string> wanted;  // the present ones; absent ones read NULL
    std::vector<int> at(ccols.size(), -1);
    for (size_t i = 0; i < ccols.size(); ++i)
      if (!ccols[i].empty()) {
        at[i] = static_cast<int>(wanted.size());
        wanted.push_back(ccols[i]);
      }
    auto compute = db::TableScan::open(f_, "COMPUTE_TASK_INFO", wanted);
    if (!compute.ok()) return false;
    // COMPUTE_TASK_INFO in rowid (= globalTaskId) order, so the keys ascend: the 13 values
    // compute_row takes per row, packed (a value and its type; a REAL's bits, a TEXT's index)
    constexpr size_t kValues = 13;
    std::vector<int64_t> keys, packed;
    std::vector<uint8_t> types;
    std::deque<std::string> texts;  // TEXT values (string ids are integers; text is rare)
    keys.reserve(rows_.capacity());
    packed.reserve(rows_.capacity() * kValues);
    types.reserve(rows_.capacity() * kValues);
    uint64_t n = 0;
    while (compute->next()) {
      if (++n % db::kInterruptCheckRows == 0 && interrupted()) return false;
      const db::DbValue& key = compute->value(0);
      if (key.type != SQLITE_INTEGER || (!keys.empty() && key.i <= keys.back())) return false;  // damage
      keys.push_back(key.i);
      for (size_t i = 1; i < ccols.size(); ++i) {
        const db::DbValue x = at[i] < 0 ? db::DbValue{} : compute->value(static_cast<size_t>(at[i]));
        int64_t bits = x.i;
        if (x.type == SQLITE_FLOAT) std::memcpy(&bits, &x.d, sizeof bits);
        if (x.type == SQLITE_TEXT || x.type == SQLITE_BLOB) {
          bits = static_cast<int64_t>(texts.size());
          texts.emplace_back(x.text);
        }
        packed.push_back(bits);
        types.push_back(static_cast<uint8_t>(x.type));
      }
    }
    if (!compute->status().ok()) return false;
    auto unpack = [&](size_t row, std::array<db::DbValue, kValues>& c) {
      for (size_t i = 0; i < kValues; ++i) {
        const int64_t bits = packed[row * kValues + i];
        db::DbValue& x = c[i];
        x = db::DbValue{};
        x.type = types[row * kValues + i];
        if (x.type == SQLITE_INTEGER) x.i = bits;
        else if (x.type == SQLITE_FLOAT) std::memcpy(&x.d, &bits, sizeof bits);
        else if (x.type == SQLITE_TEXT || x.type == SQLITE_BLOB) x.text = texts[static_cast<size_t>(bits)];
      }
    };
    auto task = db::TableScan::open(
        f_, "TASK", {"startNs", "endNs", "globalTaskId", "deviceId", "streamId", "taskId", "modelId", "contextId"});
    if (!task.ok()) return false;
    Stats local;
    const size_t rows_before = rows_.size();
    std::array<db::DbValue, 8> t;
    std::array<db::DbValue, kValues> c;
    n = 0;
    bool stopped = false;  // interrupted: SQLite's pass below reports it
    while (task->next()) {
      if (++n % db::kInterruptCheckRows == 0 && interrupted()) {
        stopped = true;
        break;
      }
      int64_t k = 0;
      if (!db::as_rowid(task->value(2), k)) continue;
      const auto it = std::lower_bound(keys.begin(), keys.end(), k);
      if (it == keys.end() || *it != k) continue;
      for (size_t i = 0; i < t.size(); ++i) t[i] = task->value(i);
      unpack(static_cast<size_t>(it - keys.begin()), c);
      compute_row(t.data(), c.data(), local);
    }
    if (stopped || !task->status().ok()) {
      rows_.resize(rows_before);
      return false;
    }
    stats_.merge(local);
    return true;
  }

  Status communication_rows() {
    compute_count_ = rows_.size();
    const std::vector<std::string> cols = f_.columns("COMMUNICATION_OP");
    if (cols.empty()) return {};  // no collectives (TP1, single card): normal
    auto q = f_.prepare("SELECT startNs, endNs, opId, opName, opType, " + db::column_or_null(cols, "deviceId") +
                            " FROM COMMUNICATION_OP",
                        "COMMUNICATION_OP");
    if (!q.ok()) return q.status();
    // The text exports of schema 1.0's era name the core of these rows HCCL; later ones COMMUNICATION.
    // Their other text cells (state, shapes, types, formats) are N/A there, so here too.
    const StrId core = pool_.intern(version_.rfind("1.0", 0) == 0 ? "HCCL" : "COMMUNICATION");
    const StrId na = pool_.intern("N/A");
    while (q->step()) {
      Row r{};
      r.start = q->i64(0, -1);
      r.end = q->i64(1, -1);
      r.key = q->i64(2, -1);
      if (r.start < 0 || r.end < r.start) {
        bad_row("COMMUNICATION_OP", r.key, "startNs/endNs missing or end before start; kernel row skipped");
        continue;
      }
      const int32_t dev = narrow(q->i64(5, kAbsentI64));
      r.device = dev != kAbsentI32 ? dev : device_;
      r.stream = r.context = r.mix = kAbsentI32;
      r.task_id = kAbsentI64;
      r.model_id = 4294967295LL;
      r.block = 0;
      r.name = ids_.get(*q, 3);
      r.type = ids_.get(*q, 4);
      r.core = core;
      r.op_state = r.hf32 = r.ishape = r.itype = r.iformat = r.oshape = r.otype = r.oformat = na;
      r.source = static_cast<uint8_t>(model::KernelSource::kCommunicationOp);
      rows_.push_back(r);
    }
    return q->status();
  }

  void order_and_fill() {
    // Compute rows come in start order (TASK's index on startNs is what SQLite scans), communication
    // rows after them: each part is sorted only if it is not already, then the two are merged.
    auto before = [](const Row& a, const Row& b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.source != b.source) return a.source < b.source;
      return a.key < b.key;
    };
    const auto mid = rows_.begin() + static_cast<std::ptrdiff_t>(compute_count_);
    if (!std::is_sorted(rows_.begin(), mid, before)) std::stable_sort(rows_.begin(), mid, before);
    if (!std::is_sorted(mid, rows_.end(), before)) std::stable_sort(mid, rows_.end(), before);
    std::inplace_merge(rows_.begin(), mid, rows_.end(), before);
    auto& k = out_;
    const size_t n = rows_.size();
    auto reserve = [n](auto&... v) { (v.reserve(n), ...); };
    reserve(k.source_line, k.source_table, k.step_id, k.device_id, k.model_id, k.task_id, k.stream_id, k.name, k.type,
            k.op_state, k.accelerator_core, k.start_ns, k.dur_ns, k.wait_ns, k.block_dim, k.mix_block_dim,
            k.hf32_eligible, k.input_shapes, k.input_dtypes, k.input_formats, k.output_shapes, k.output_dtypes,
            k.output_formats, k.context_id);
    // Steps in start order; rows are in start order too, so one forward walk assigns them.
    std::vector<size_t> order(steps_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [this](size_t a, size_t b) { return steps_.start_ns[a] < steps_.start_ns[b]; });
    size_t s = 0;
    int64_t prev_end = 0;
    for (size_t i = 0; i < n; ++i) {
      const Row& r = rows_[i];
      while (s < order.size() && steps_.end_ns[order[s]] < r.start) ++s;
      const bool in_step = s < order.size() && steps_.start_ns[order[s]] <= r.start;
      k.source_line.push_back(static_cast<uint64_t>(r.key));
      k.source_table.push_back(r.source);
      k.step_id.push_back(in_step ? narrow(steps_.step[order[s]]) : kAbsentI32);
      k.device_id.push_back(r.device);
      k.model_id.push_back(r.model_id);
      k.task_id.push_back(r.task_id);
      k.stream_id.push_back(r.stream);
      k.name.push_back(r.name);
      k.type.push_back(r.type);
      k.op_state.push_back(r.op_state);
      k.accelerator_core.push_back(r.core);
      k.start_ns.push_back(r.start);
      k.dur_ns.push_back(r.end - r.start);
      k.wait_ns.push_back(i == 0 ? 0 : std::max<int64_t>(0, r.start - prev_end));  // torch_npu's Wait Time
      prev_end = r.end;
      k.block_dim.push_back(r.block);
      k.mix_block_dim.push_back(r.mix);
      k.hf32_eligible.push_back(r.hf32);
      k.input_shapes.push_back(r.ishape);
      k.input_dtypes.push_back(r.itype);
      k.input_formats.push_back(r.iformat);
      k.output_shapes.push_back(r.oshape);
      k.output_dtypes.push_back(r.otype);
      k.output_formats.push_back(r.oformat);
      k.context_id.push_back(r.context);
      if (r.source == static_cast<uint8_t>(model::KernelSource::kComputeTask)) row_of_task_.emplace(r.key, static_cast<uint32_t>(i));
    }
    rows_ = {};
    header();
  }

  void header() {
    auto& h = out_.header;
    h.has_step_id = steps_.size() > 0;
    h.has_device_id = true;
    h.has_op_state = db::has_column(cols_, "opState");
    h.has_hf32 = db::has_column(cols_, "hf32Eligible");
    h.has_stream_id = true;  // TASK.streamId: every database has it
    h.block_column = block_column_;
    h.era = "DB-" + version_;
    h.columns = {"Step Id", "Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type"};
    if (h.has_op_state) h.columns.emplace_back("OP State");
    for (const char* c : {"Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)"}) h.columns.emplace_back(c);
    if (!block_column_.empty()) {
      h.columns.push_back(block_column_);
      h.columns.push_back("Mix " + block_column_);
    }
    if (h.has_hf32) h.columns.emplace_back("HF32 Eligible");
    for (const char* c : {"Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                          "Output Formats", "Context ID"})
      h.columns.emplace_back(c);
  }

  // TASK_PMU_INFO (globalTaskId, metric name id, value), one row per metric of a task: pivoted into
  // one column per metric. Rows of one task are usually adjacent, so the last lookup is reused.
  // Read straight from the table's pages (btree_scan.hpp: ~25 rows per kernel) when the scan can;
  // through SQLite otherwise, or again after a page the scan could not parse: SQLite's answer,
  // rows or error, is the reference, and nothing of the abandoned scan is kept.
  Status pmu() {
    if (!f_.has_table("TASK_PMU_INFO")) {
      stats_.note(Stat::db_table_absent, f_.path() + ":table TASK_PMU_INFO: absent (captured without aic_metrics)");
      return {};
    }
    if (auto scan = db::TableScan::open(f_, "TASK_PMU_INFO", {"globalTaskId", "name", "value"}); scan.ok()) {
      Stats local;
      uint64_t seen = 0;
      while (scan->next()) {
        if (++seen % db::kInterruptCheckRows == 0 && interrupted()) return interrupted_status(f_.path());
        pmu_row(scan->value(0), scan->value(1), scan->value(2), local);
      }
      if (scan->status().ok()) {
        stats_.merge(local);
        return order_metrics();
      }
      out_.metrics.clear();
      metrics_ns_.clear();
      column_of_id_.clear();
      column_of_sparse_id_.clear();
      last_task_ = std::numeric_limits<int64_t>::min();
    }
    auto q = f_.prepare("SELECT globalTaskId, name, value FROM TASK_PMU_INFO", "TASK_PMU_INFO");
    if (!q.ok()) return q.status();
    uint64_t seen = 0;
    while (q->step()) {
      if (++seen % db::kInterruptCheckRows == 0 && interrupted()) return interrupted_status(f_.path());
      pmu_row(q->value(0), q->value(1), q->value(2), stats_);
    }
    ASCPROF_RETURN_IF_ERROR(q->status());
    return order_metrics();
  }

  // One TASK_PMU_INFO row into its metric column (a column per metric name, made on first sight).
  void pmu_row(const db::DbValue& task_v, const db::DbValue& name_v, const db::DbValue& value_v, Stats& stats) {
    const int64_t task = db::value_i64(task_v, -1);
    if (task != last_task_) {
      last_task_ = task;
      const auto it = row_of_task_.find(task);
      last_row_ = it == row_of_task_.end() ? int64_t{-1} : static_cast<int64_t>(it->second);  // (not -1 as uint32)
    }
    if (last_row_ < 0) {
      stats.note(Stat::db_pmu_orphan,
                 f_.path() + ":table TASK_PMU_INFO: globalTaskId " + std::to_string(task) + " is not a kernel row");
      return;
    }
    // metric name id (dense CANN string ids) -> column; -1 unseen. Names are resolved once per id.
    const int64_t name_id = name_v.type == SQLITE_NULL ? -1 : db::value_i64(name_v, -1);
    int32_t* slot = nullptr;
    if (name_id >= 0 && name_id < (int64_t{1} << 20)) {
      if (static_cast<size_t>(name_id) >= column_of_id_.size()) column_of_id_.resize(static_cast<size_t>(name_id) + 1, -2);
      slot = &column_of_id_[static_cast<size_t>(name_id)];
    } else {
      slot = &column_of_sparse_id_.try_emplace(name_id, -2).first->second;
    }
    if (*slot == -2) {  // first row of this metric name: its column (-1: no usable name)
      const StrId name = name_id < 0 ? 0 : ids_.get_id(name_id);
      *slot = -1;
      if (name != 0) {
        auto [header, ns] = metric_header(pool_.view(name));
        model::MetricColumn col;
        col.name = std::move(header);
        col.values.assign(out_.size(), std::numeric_limits<double>::quiet_NaN());
        out_.metrics.push_back(std::move(col));
        metrics_ns_.push_back(ns);
        *slot = static_cast<int32_t>(out_.metrics.size() - 1);
      }
    }
    if (*slot < 0) {
      stats.note(Stat::db_pmu_orphan, f_.path() + ":table TASK_PMU_INFO: globalTaskId " + std::to_string(task) +
                                          " has a metric without a name");
      return;
    }
    const double v = db::value_f64(value_v);
    out_.metrics[static_cast<size_t>(*slot)].values[static_cast<size_t>(last_row_)] =
        metrics_ns_[static_cast<size_t>(*slot)] ? v / 1000.0 : v;
  }

  // The metric columns in the text export's order, then the others in first-seen order.
  Status order_metrics() {
    auto rank = [](const std::string& name) {
      for (size_t i = 0; i < std::size(kMetricOrder); ++i)
        if (kMetricOrder[i] == name) return i;
      return std::size(kMetricOrder);
    };
    std::stable_sort(out_.metrics.begin(), out_.metrics.end(),
                     [&rank](const model::MetricColumn& a, const model::MetricColumn& b) { return rank(a.name) < rank(b.name); });
    for (const auto& m : out_.metrics) out_.header.columns.push_back(m.name);
    return {};
  }

  const db::SqliteFile& f_;
  StringPool& pool_;
  const model::StepMarkerTable& steps_;
  model::KernelTable& out_;
  Stats& stats_;
  db::StringIds ids_;
  std::string version_, block_column_;
  std::vector<std::string> cols_;
  int32_t device_ = kAbsentI32;
  std::vector<Row> rows_;
  size_t compute_count_ = 0;  // rows_[0, compute_count_) are compute rows, the rest communication
  std::unordered_map<StrId, StrId> unquoted_;
  std::unordered_map<int64_t, uint32_t> row_of_task_;
  std::vector<bool> metrics_ns_;  // per metric column: stored in ns, read in µs
  // the PMU pivot's state
  std::vector<int32_t> column_of_id_;
  std::unordered_map<int64_t, int32_t> column_of_sparse_id_;
  int64_t last_task_ = std::numeric_limits<int64_t>::min();
  int64_t last_row_ = -1;
};

}  // namespace

Status import_db_kernels(const fs::path& path, StringPool& pool, const model::StepMarkerTable& steps,
                         model::KernelTable& out, Stats& stats) {
  out = model::KernelTable{};
  auto opened = db::SqliteFile::open(path);
  if (!opened.ok()) return opened.status();
  Stats local;
  KernelReader reader(*opened, pool, steps, out, local);
  const Status st = reader.run();
  if (!st.ok()) {
    out = model::KernelTable{};
    return st;
  }
  stats.merge(local);
  return {};
}

}  // namespace ascprof::importers
