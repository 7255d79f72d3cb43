// Trace tables of a profiler database (the trace_view.json equivalent): host ops, steps, device
// tasks, communication ops and plane tasks, launch flows.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ascprof/importers/profiler_db.hpp"
#include "btree_scan.hpp"
#include "db_columns.hpp"
#include "sqlite_file.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;

namespace {

// ENUM_API_TYPE name -> the level prefix trace_view.json gives CANN events.
std::string_view api_level(std::string_view enum_name) {
  if (enum_name == "acl") return "AscendCL";
  if (enum_name == "node") return "Node";
  if (enum_name == "runtime") return "Runtime";
  if (enum_name == "hccl" || enum_name == "communication") return "HCCL";
  if (enum_name == "model") return "Model";
  return enum_name;
}

constexpr int64_t kApiNode = 10000;
constexpr int64_t kApiOp = 50001, kApiQueue = 50002, kApiTrace = 50003, kApiMstx = 50004;

class TraceReader {
 public:
  TraceReader(const db::SqliteFile& f, StringPool& pool, model::TraceTables& out, Stats& stats, bool allow_scan)
      : f_(f), pool_(pool), out_(out), stats_(stats), ids_(f, pool, stats), allow_scan_(allow_scan) {}

  /// A page scan (db::TableRows) stopped on a page it could not parse: redo the import through SQLite.
  bool scan_failed() const { return scan_failed_; }

  Status run() {
    ASCPROF_RETURN_IF_ERROR(ids_.init());
    ASCPROF_RETURN_IF_ERROR(read_enum("ENUM_API_TYPE", api_types_));
    ASCPROF_RETURN_IF_ERROR(read_enum("ENUM_HCCL_TRANSPORT_TYPE", transports_));
    ASCPROF_RETURN_IF_ERROR(read_enum("ENUM_HCCL_LINK_TYPE", links_));
    ASCPROF_RETURN_IF_ERROR(read_enum("ENUM_HCCL_DATA_TYPE", data_types_));
    ASCPROF_RETURN_IF_ERROR(steps());
    ASCPROF_RETURN_IF_ERROR(torch_ops());
    ASCPROF_RETURN_IF_ERROR(cann_apis());
    ASCPROF_RETURN_IF_ERROR(device_tasks());
    ASCPROF_RETURN_IF_ERROR(comm_ops());
    ASCPROF_RETURN_IF_ERROR(plane_tasks());
    ASCPROF_RETURN_IF_ERROR(aicore_freq());
    ASCPROF_RETURN_IF_ERROR(ids_.status());
    processes();
    sort();
    return {};
  }

 private:
  using EnumMap = std::unordered_map<int64_t, StrId>;

  Status read_enum(const char* table, EnumMap& out) {
    if (!f_.has_table(table)) return {};
    auto q = f_.prepare(std::string("SELECT id, name FROM ") + table, table);
    if (!q.ok()) return q.status();
    while (q->step()) out.emplace(q->i64(0, -1), pool_.intern(q->text(1)));
    return q->status();
  }
  StrId enum_name(const EnumMap& m, const db::Query& q, int c) const {
    if (q.null(c)) return 0;
    const auto it = m.find(q.i64(c, -1));
    return it == m.end() ? 0 : it->second;
  }

  bool optional_table(const char* table) const {
    if (f_.has_table(table)) return true;
    stats_.note(Stat::db_table_absent, f_.path() + ":table " + table + ": absent");
    return false;
  }

  // The big tables' rows: through the page scan when it reads them (btree_scan.hpp).
  Result<db::TableRows> rows(std::string_view table, const std::vector<std::string>& columns) const {
    return db::TableRows::open(f_, table, columns, allow_scan_);
  }
  // A table read to its end: its status, noting a scan that stopped on a page.
  Status done(const db::TableRows& q) {
    scan_failed_ = scan_failed_ || q.scan_failed();
    return q.status();
  }

  Status check_interrupt(uint64_t rows) const {
    if (rows % db::kInterruptCheckRows == 0 && interrupted()) return interrupted_status(f_.path());
    return {};
  }

  void bad_row(const char* table, int64_t rowid, const char* what) {
    stats_.note(Stat::db_bad_row, f_.path() + ":table " + table + ": rowid " + std::to_string(rowid) + ": " + what);
  }
  // A row's [start, end] in ns is usable; a row without one is counted and skipped.
  bool usable_span(const char* table, int64_t rowid, int64_t start, int64_t end) {
    if (start >= 0 && end >= start) return true;
    bad_row(table, rowid, "startNs/endNs missing or end before start");
    return false;
  }

  void add_host(StrId name, StrId cat, uint8_t is_cann, int64_t tid, int64_t start, int64_t end, uint64_t rowid,
                int64_t connection_id = -1) {
    auto& h = out_.host_ops;
    h.name.push_back(name);
    h.cat.push_back(cat);
    h.is_cann.push_back(is_cann);
    h.pid.push_back(is_cann ? kDbPidCann : kDbPidPython);
    h.tid.push_back(tid);
    h.start_ns.push_back(start);
    h.dur_ns.push_back(end - start);
    h.source_offset.push_back(rowid);
    h.connection_id.push_back(connection_id);
    threads_.emplace(((is_cann ? kDbPidCann : kDbPidPython) << 40) ^ tid);
  }

  Status steps() {
    if (!optional_table("STEP_TIME")) return {};
    auto q = f_.prepare("SELECT rowid, id, startNs, endNs FROM STEP_TIME", "STEP_TIME");
    if (!q.ok()) return q.status();
    auto& s = out_.steps;
    while (q->step()) {
      const int64_t rowid = q->i64(0, -1), step = q->i64(1, -1), a = q->i64(2, -1), b = q->i64(3, -1);
      if (step < 0 || a < 0 || b < a) {
        bad_row("STEP_TIME", rowid, "step id or time missing or negative");
        continue;
      }
      s.step.push_back(step);
      s.start_ns.push_back(a);
      s.end_ns.push_back(b);
      s.source_offset.push_back(static_cast<uint64_t>(rowid));
    }
    return q->status();
  }

  // AICORE_FREQ (deviceId, timestampNs, freq MHz; dieId since 950): the AI Core Freq counter.
  Status aicore_freq() {
    if (!optional_table("AICORE_FREQ")) return {};
    auto q = f_.prepare("SELECT rowid, timestampNs, freq FROM AICORE_FREQ", "AICORE_FREQ");
    if (!q.ok()) return q.status();
    auto& t = out_.aicore_freq;
    while (q->step()) {
      const int64_t rowid = q->i64(0, -1), ts = q->i64(1, -1), mhz = q->i64(2, -1);
      if (ts < 0 || mhz < 0 || mhz >= 1'000'000) {
        bad_row("AICORE_FREQ", rowid, "timestamp or frequency missing or out of range");
        continue;
      }
      t.ts_ns.push_back(ts);
      t.mhz.push_back(static_cast<uint32_t>(mhz));
    }
    ASCPROF_RETURN_IF_ERROR(q->status());
    model::sort_aicore_freq(t);
    return {};
  }

  Status torch_ops() {
    if (!optional_table("PYTORCH_API")) return steps_as_host_ops();
    auto q = rows("PYTORCH_API", {"rowid", "startNs", "endNs", "globalTid", "name", "type", "connectionId"});
    if (!q.ok()) return q.status();
    const StrId cpu_op = pool_.intern("cpu_op"), enqueue = pool_.intern("enqueue"), dequeue = pool_.intern("dequeue"),
                python = pool_.intern("python_function"), mstx = pool_.intern("mstx");
    bool saw_step = false;
    uint64_t n = 0;
    while (q->step()) {
      ASCPROF_RETURN_IF_ERROR(check_interrupt(++n));
      const int64_t rowid = q->i64(0, -1), a = q->i64(1, -1), b = q->i64(2, -1);
      if (!usable_span("PYTORCH_API", rowid, a, b)) continue;
      const StrId name = ids_.get(q->value(4));
      const int64_t type = q->i64(5, -1);
      const std::string_view nv = pool_.view(name);
      StrId cat = 0;
      if (type == kApiOp) cat = cpu_op;
      else if (type == kApiQueue) cat = nv.substr(0, 7) == "Dequeue" ? dequeue : enqueue;
      else if (type == kApiTrace) cat = python;
      else if (type == kApiMstx) cat = mstx;
      saw_step = saw_step || nv.substr(0, 13) == "ProfilerStep#";
      const int64_t tid = q->i64(3, 0) & 0xffffffffLL;
      add_host(name, cat, 0, tid, a, b, static_cast<uint64_t>(rowid));
      if (!q->null(6)) torch_conn_.emplace(q->i64(6, -1), HostEnd{a, tid});
      python_tid_ = tid;
    }
    ASCPROF_RETURN_IF_ERROR(done(*q));
    return saw_step ? Status{} : steps_as_host_ops();
  }

  // torch_npu keeps ProfilerStep#N in STEP_TIME only; trace_view.json has them as Python X events.
  Status steps_as_host_ops() {
    const StrId cpu_op = pool_.intern("cpu_op");
    const auto& s = out_.steps;
    for (size_t i = 0; i < s.size(); ++i)
      add_host(pool_.intern("ProfilerStep#" + std::to_string(s.step[i])), cpu_op, 0, python_tid_, s.start_ns[i],
               s.end_ns[i], s.source_offset[i]);
    return {};
  }

  Status cann_apis() {
    if (!optional_table("CANN_API")) return {};
    auto q = rows("CANN_API", {"rowid", "startNs", "endNs", "type", "globalTid", "connectionId", "name"});
    if (!q.ok()) return q.status();
    std::unordered_map<uint64_t, StrId> names;  // (type, name id) -> "Level@name"
    uint64_t n = 0;
    while (q->step()) {
      ASCPROF_RETURN_IF_ERROR(check_interrupt(++n));
      const int64_t rowid = q->i64(0, -1), a = q->i64(1, -1), b = q->i64(2, -1), type = q->i64(3, -1);
      if (!usable_span("CANN_API", rowid, a, b)) continue;
      const StrId raw = ids_.get(q->value(6));
      const uint64_t key = (static_cast<uint64_t>(type) << 32) ^ raw;
      auto it = names.find(key);
      if (it == names.end()) {
        std::string full;
        const auto level = api_types_.find(type);
        full = level == api_types_.end() ? std::to_string(type) : std::string(api_level(pool_.view(level->second)));
        full += '@';
        full += pool_.view(raw);
        it = names.emplace(key, pool_.intern(full)).first;
      }
      const int64_t tid = q->i64(4, 0) & 0xffffffffLL;
      add_host(it->second, 0, 1, tid, a, b, static_cast<uint64_t>(rowid), q->i64(5, -1));
      if (type == kApiNode && pool_.view(raw) == "launch" && !q->null(5)) {
        const int64_t conn = q->i64(5, -1);
        launches_.emplace(conn, HostEnd{a, tid});
      }
    }
    return done(*q);
  }

  Status device_tasks() {
    // A compute task is named by its kernel; any other task (event record, notify wait, memcpy) by its
    // task type. COMMUNICATION_TASK_INFO is not joined: several of its rows may share one task.
    // `TASK t LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId`, as SQLite runs it:
    // TASK in rowid order, each row's kernel name looked up by c's rowid (names resolved in that order).
    std::vector<int64_t> kernel_keys;
    std::vector<db::DbValue> kernel_names;  // their name's string id, or NULL
    if (f_.has_table("COMPUTE_TASK_INFO")) {
      auto c = rows("COMPUTE_TASK_INFO", {"globalTaskId", "name"});
      if (!c.ok()) return c.status();
      while (c->step()) {
        const db::DbValue key = c->value(0);
        if (key.type != SQLITE_INTEGER || (!kernel_keys.empty() && key.i <= kernel_keys.back())) {
          // not a rowid table read in rowid order (cannot be, but then the SQL decides)
          return file_error(ErrorCode::kParse, f_.path(), "table COMPUTE_TASK_INFO", "globalTaskId out of order");
        }
        kernel_keys.push_back(key.i);
        const db::DbValue name = c->value(1);  // kept as the id it reads as (the row's bytes go)
        kernel_names.push_back(name.type == SQLITE_NULL ? name : db::DbValue{SQLITE_INTEGER, db::value_i64(name, -1), 0, {}});
      }
      ASCPROF_RETURN_IF_ERROR(done(*c));
    }
    auto q = rows("TASK", {"rowid", "startNs", "endNs", "streamId", "taskId", "connectionId", "taskType", "globalTaskId"});
    if (!q.ok()) return q.status();
    // (trace_view.json names these flows by their category too: "HostToDevice", "torch_to_npu")
    const StrId h2d = pool_.intern("HostToDevice"), async = pool_.intern("async_npu");
    const StrId torch_to_npu = pool_.intern("torch_to_npu");
    std::unordered_set<int64_t> async_ids;
    ASCPROF_RETURN_IF_ERROR(torch_flows(async_ids));
    auto& d = out_.device_tasks;
    uint64_t n = 0;
    while (q->step()) {
      ASCPROF_RETURN_IF_ERROR(check_interrupt(++n));
      const int64_t rowid = q->i64(0, -1), a = q->i64(1, -1), b = q->i64(2, -1);
      if (!usable_span("TASK", rowid, a, b)) continue;
      const StrId type = ids_.get(q->value(6));
      StrId name = 0;
      if (int64_t k = 0; db::as_rowid(q->value(7), k))
        if (const auto it = std::lower_bound(kernel_keys.begin(), kernel_keys.end(), k); it != kernel_keys.end() && *it == k)
          name = ids_.get(kernel_names[static_cast<size_t>(it - kernel_keys.begin())]);
      if (name == 0) name = type;
      const int64_t stream = q->i64(3, -1), conn = q->i64(5, -1);
      d.name.push_back(name);
      d.task_type.push_back(type);
      d.stream_id.push_back(stream >= 0 && stream <= INT32_MAX ? static_cast<int32_t>(stream) : -1);
      d.task_id.push_back(q->i64(4, -1));
      d.connection_id.push_back(conn);
      d.start_ns.push_back(a);
      d.dur_ns.push_back(b - a);
      d.source_offset.push_back(static_cast<uint64_t>(rowid));
      if (stream >= 0 && stream < (int64_t{1} << 40)) threads_.emplace((kDbPidHardware << 40) ^ stream);
      if (conn < 0) continue;
      if (const auto it = launches_.find(conn); it != launches_.end()) {
        if (launched_.insert(conn).second)  // one 's' per launch, as trace_view.json writes it
          flow(h2d, h2d, conn, 's', kDbPidCann, it->second.tid, it->second.ts, 0);
        flow(h2d, h2d, conn, 'f', kDbPidHardware, stream, a, static_cast<uint64_t>(rowid));
      }
      if (async_ids.count(conn) != 0) flow(async, torch_to_npu, conn, 'f', kDbPidHardware, stream, a, static_cast<uint64_t>(rowid));
    }
    return done(*q);
  }

  // async_npu flows: a torch op (PYTORCH_API.connectionId -> CONNECTION_IDS.id) to the device tasks
  // sharing one of its connection ids. The 's' ends are written here; the 'f' ends with the tasks.
  Status torch_flows(std::unordered_set<int64_t>& ids) {
    if (torch_conn_.empty() || !f_.has_table("CONNECTION_IDS")) return {};
    auto q = rows("CONNECTION_IDS", {"id", "connectionId"});
    if (!q.ok()) return q.status();
    const StrId async = pool_.intern("async_npu"), torch_to_npu = pool_.intern("torch_to_npu");
    while (q->step()) {
      const auto it = torch_conn_.find(q->i64(0, -1));
      if (it == torch_conn_.end() || q->null(1)) continue;
      const int64_t conn = q->i64(1, -1);
      if (!ids.insert(conn).second) continue;
      flow(async, torch_to_npu, conn, 's', kDbPidPython, it->second.tid, it->second.ts, 0);
    }
    return done(*q);
  }

  void flow(StrId cat, StrId name, int64_t id, char phase, int64_t pid, int64_t tid, int64_t ts, uint64_t rowid) {
    auto& f = out_.flows;
    f.cat.push_back(cat);
    f.name.push_back(name);
    f.id.push_back(id);
    f.phase.push_back(static_cast<uint8_t>(phase));
    f.pid.push_back(pid);
    f.tid.push_back(tid);
    f.ts_ns.push_back(ts);
    f.source_offset.push_back(rowid);
  }

  Status comm_ops() {
    const std::vector<std::string> cols = f_.columns("COMMUNICATION_OP");
    if (cols.empty()) {
      stats_.note(Stat::db_table_absent, f_.path() + ":table COMMUNICATION_OP: absent");
      return {};
    }
    auto q = f_.prepare("SELECT rowid, opName, startNs, endNs, groupName, dataType, algType, count, connectionId FROM "
                        "COMMUNICATION_OP",
                        "COMMUNICATION_OP");
    if (!q.ok()) return q.status();
    auto& c = out_.comm_ops;
    while (q->step()) {
      const int64_t rowid = q->i64(0, -1), a = q->i64(2, -1), b = q->i64(3, -1);
      if (!usable_span("COMMUNICATION_OP", rowid, a, b)) continue;
      c.name.push_back(ids_.get(*q, 1));
      c.group.push_back(ids_.get(*q, 4));
      c.data_type.push_back(enum_name(data_types_, *q, 5));
      c.alg_type.push_back(ids_.get(*q, 6));
      c.count.push_back(q->i64(7, -1));
      c.connection_id.push_back(q->i64(8, -1));
      c.start_ns.push_back(a);
      c.dur_ns.push_back(b - a);
      c.source_offset.push_back(static_cast<uint64_t>(rowid));
    }
    return q->status();
  }

  Status plane_tasks() {
    const std::vector<std::string> cols = f_.columns("COMMUNICATION_TASK_INFO");
    if (cols.empty()) {
      stats_.note(Stat::db_table_absent, f_.path() + ":table COMMUNICATION_TASK_INFO: absent (level0 capture)");
      return {};
    }
    auto q = f_.prepare("SELECT m.rowid, t.startNs, t.endNs, m.name, m.planeId, m.taskType, m.transportType, m.linkType, "
                        "m.srcRank, m.dstRank, m.size, " +
                            db::column_or_null(cols, "bandwidth", "m.") +
                            " FROM COMMUNICATION_TASK_INFO m JOIN TASK t ON t.globalTaskId = m.globalTaskId",
                        "COMMUNICATION_TASK_INFO");
    if (!q.ok()) return q.status();
    auto& p = out_.comm_plane_tasks;
    uint64_t n = 0;
    while (q->step()) {
      ASCPROF_RETURN_IF_ERROR(check_interrupt(++n));
      const int64_t rowid = q->i64(0, -1), a = q->i64(1, -1), b = q->i64(2, -1);
      if (!usable_span("COMMUNICATION_TASK_INFO", rowid, a, b)) continue;  // (its TASK row's times)
      const int64_t plane = q->i64(4, -1);
      p.name.push_back(ids_.get(*q, 3));
      p.plane.push_back(plane >= 0 && plane <= INT32_MAX ? static_cast<int32_t>(plane) : -1);
      p.task_type.push_back(ids_.get(*q, 5));
      p.transport.push_back(enum_name(transports_, *q, 6));
      p.link_type.push_back(enum_name(links_, *q, 7));
      p.src_rank.push_back(q->i64(8, -1));
      p.dst_rank.push_back(q->i64(9, -1));
      p.size_bytes.push_back(q->i64(10, -1));
      p.bandwidth_gbps.push_back(q->f64(11));
      p.start_ns.push_back(a);
      p.dur_ns.push_back(b - a);
      p.source_offset.push_back(static_cast<uint64_t>(rowid));
    }
    return q->status();
  }

  void processes() {
    struct P {
      int64_t pid;
      const char* name;
      model::ProcessKind kind;
    };
    static constexpr P kProcs[] = {{kDbPidPython, "Python", model::ProcessKind::kPython},
                                   {kDbPidCann, "CANN", model::ProcessKind::kCann},
                                   {kDbPidHardware, "Ascend Hardware", model::ProcessKind::kAscendHardware},
                                   {kDbPidCommunication, "Communication", model::ProcessKind::kCommunication}};
    for (const P& p : kProcs) {
      model::ProcessInfo info;
      info.pid = p.pid;
      info.name = pool_.intern(p.name);
      info.kind = p.kind;
      out_.processes.push_back(info);
    }
    std::vector<int64_t> keys(threads_.begin(), threads_.end());
    std::sort(keys.begin(), keys.end());
    for (const int64_t k : keys) out_.threads.push_back({k >> 40, k & ((int64_t{1} << 40) - 1), 0, -1});
  }

  void sort() {
    auto& h = out_.host_ops;
    db::sort_columns_by(h.start_ns, h.name, h.cat, h.is_cann, h.pid, h.tid, h.dur_ns, h.source_offset, h.connection_id);
    auto& s = out_.steps;
    db::sort_columns_by(s.start_ns, s.step, s.end_ns, s.source_offset);
    auto& d = out_.device_tasks;
    db::sort_columns_by(d.start_ns, d.name, d.task_type, d.stream_id, d.task_id, d.connection_id, d.dur_ns,
                        d.source_offset);
    auto& c = out_.comm_ops;
    db::sort_columns_by(c.start_ns, c.name, c.group, c.data_type, c.alg_type, c.count, c.connection_id, c.dur_ns,
                        c.source_offset);
    auto& p = out_.comm_plane_tasks;
    db::sort_columns_by(p.start_ns, p.name, p.plane, p.task_type, p.transport, p.link_type, p.src_rank, p.dst_rank,
                        p.size_bytes, p.bandwidth_gbps, p.dur_ns, p.source_offset);
    auto& f = out_.flows;
    db::sort_columns_by(f.ts_ns, f.cat, f.name, f.id, f.phase, f.pid, f.tid, f.source_offset);
  }

  struct HostEnd {
    int64_t ts;
    int64_t tid;
  };
  const db::SqliteFile& f_;
  StringPool& pool_;
  model::TraceTables& out_;
  Stats& stats_;
  db::StringIds ids_;
  const bool allow_scan_;
  bool scan_failed_ = false;
  EnumMap api_types_, transports_, links_, data_types_;
  std::unordered_map<int64_t, HostEnd> launches_;    // node launch connectionId -> its host end
  std::unordered_set<int64_t> launched_;             // launches whose 's' end is written
  std::unordered_map<int64_t, HostEnd> torch_conn_;  // PYTORCH_API.connectionId -> the torch op
  std::unordered_set<int64_t> threads_;              // (pid << 40) ^ tid seen
  int64_t python_tid_ = 0;
};

}  // namespace

Status import_db_trace(const fs::path& path, StringPool& pool, model::TraceTables& out, Stats& stats) {
  out = model::TraceTables{};
  auto opened = db::SqliteFile::open(path);
  if (!opened.ok()) return opened.status();
  Stats local;
  Status st;
  {
    TraceReader reader(*opened, pool, out, local, /*allow_scan=*/true);
    st = reader.run();
    if (reader.scan_failed()) {  // a page the scan could not parse: SQLite's answer, from the start
      out = model::TraceTables{};
      local = Stats{};
      TraceReader again(*opened, pool, out, local, /*allow_scan=*/false);
      st = again.run();
    }
  }
  if (!st.ok()) {
    out = model::TraceTables{};
    return st;
  }
  std::error_code ec;
  out.file_bytes = fs::file_size(path, ec);
  out.events_total = out.host_ops.size() + out.device_tasks.size() + out.comm_ops.size() + out.comm_plane_tasks.size() +
                     out.flows.size();
  stats.merge(local);
  return {};
}

}  // namespace ascprof::importers
