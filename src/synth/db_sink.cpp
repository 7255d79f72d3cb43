#include "db_sink.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>

#include "ascprof/common/files.hpp"

namespace ascprof::synth {

namespace fs = std::filesystem;

// ---- DbStmt ----

DbStmt::~DbStmt() { finalize(); }

bool DbStmt::prepare(sqlite3* db, const std::string& sql) {
  finalize();
  return sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &st_, nullptr) == SQLITE_OK;
}

void DbStmt::finalize() {
  if (st_ != nullptr) sqlite3_finalize(st_);
  st_ = nullptr;
  col_ = 0;
}

DbStmt& DbStmt::i(int64_t v) {
  sqlite3_bind_int64(st_, ++col_, v);
  return *this;
}
DbStmt& DbStmt::d(double v) {
  sqlite3_bind_double(st_, ++col_, v);
  return *this;
}
DbStmt& DbStmt::t(std::string_view v) {
  sqlite3_bind_text(st_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
DbStmt& DbStmt::null() {
  sqlite3_bind_null(st_, ++col_);
  return *this;
}
int DbStmt::run() {
  col_ = 0;
  if (st_ == nullptr) return SQLITE_MISUSE;
  const int rc = sqlite3_step(st_);
  sqlite3_reset(st_);
  return rc;
}

// ---- enums ----

namespace db_enum {
int transport_type(std::string_view n) {
  if (n == "SDMA") return 0;
  if (n == "RDMA") return 1;
  if (n == "LOCAL") return 2;
  return kInvalid;
}
int link_type(std::string_view n) {
  static const char* const kNames[] = {"ON_CHIP", "HCCS", "PCIE", "ROCE", "SIO", "HCCS_SW", "STANDARD_ROCE", "RESERVED"};
  for (int i = 0; i < 8; ++i)
    if (n == kNames[i]) return i;
  if (n == "N/A") return 65534;
  return kInvalid;
}
int data_type(std::string_view n) {
  static const char* const kNames[] = {"INT8",  "INT16",  "INT32",  "FP16", "FP32", "INT64", "UINT64",
                                       "UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128"};
  if (n == "BF16") return kHcclDataBf16;
  for (int i = 0; i < 13; ++i)
    if (n == kNames[i]) return i;
  if (n == "N/A") return 65534;
  return kInvalid;
}
}  // namespace db_enum

namespace {

struct EnumRow {
  int id;
  const char* name;
};

const EnumRow kApiType[] = {{5000, "runtime"}, {5500, "hccl"},  {10000, "node"},  {15000, "model"}, {20000, "acl"},
                            {50001, "op"},     {50002, "queue"}, {50003, "trace"}, {50004, "mstx"}};
const EnumRow kHcclDataType[] = {{0, "INT8"},    {1, "INT16"},  {2, "INT32"},   {3, "FP16"},      {4, "FP32"},
                                 {5, "INT64"},   {6, "UINT64"}, {7, "UINT8"},   {8, "UINT16"},    {9, "UINT32"},
                                 {10, "FP64"},   {11, "BFP16"}, {12, "INT128"}, {65534, "N/A"}, {65535, "INVALID_TYPE"}};
const EnumRow kHcclLinkType[] = {{0, "ON_CHIP"}, {1, "HCCS"},          {2, "PCIE"},     {3, "ROCE"},  {4, "SIO"},
                                 {5, "HCCS_SW"}, {6, "STANDARD_ROCE"}, {7, "RESERVED"}, {65534, "N/A"},
                                 {65535, "INVALID_TYPE"}};
const EnumRow kHcclTransportType[] = {{0, "SDMA"}, {1, "RDMA"}, {2, "LOCAL"}, {65534, "N/A"}, {65535, "INVALID_TYPE"}};
const EnumRow kHcclRdmaType[] = {{0, "RDMA_SEND_NOTIFY"},    {1, "RDMA_SEND_PAYLOAD"}, {2, "RDMA_PAYLOAD_PREPARE"},
                                 {3, "RDMA_PAYLOAD_CHECK"},  {4, "RDMA_PAYLOAD_ACK"},  {5, "RDMA_SEND_OP"},
                                 {65534, "N/A"},             {65535, "INVALID_TYPE"}};
const EnumRow kMstxEventType[] = {{0, "marker"}, {1, "push/pop"}, {2, "start/end"}, {3, "marker_ex"}};
const char* const kModules[] = {
    "SLOG",      "IDEDD",      "IDEDH",     "HCCL",       "FMK",          "HIAIENGINE", "DVPP",    "RUNTIME",
    "CCE",       "HDC",        "DRV",       "MDCFUSION",  "MDCLOCATION",  "MDCPERCEPTION", "MDCFSM", "MDCCOMMON",
    "MDCMONITOR", "MDCBSWP",   "MDCDEFAULT", "MDCSC",     "MDCPNC",       "MLL",        "DEVMM",   "KERNEL",
    "LIBMEDIA",  "CCECPU",     "ASCENDDK",  "ROS",        "HCCP",         "ROCE",       "TEFUSION", "PROFILING",
    "DP",        "APP",        "TS",        "TSDUMP",     "AICPU",        "LP",         "TDT",     "FE",
    "MD",        "MB",         "ME",        "IMU",        "IMP",          "GE",         "MDCFUSA", "CAMERA",
    "ASCENDCL",  "TEEOS",      "ISP",       "SIS",        "HSM",          "DSS",        "PROCMGR", "BBOX",
    "AIVECTOR",  "TBE",        "FV",        "MDCMAP",     "TUNE",         "HSS",        "FFTS",    "OP",
    "UDF",       "HICAID",     "TSYNC",     "AUDIO",      "TPRT",         "ASCENDCKERNEL", "ASYS", "ATRACE",
    "RTC",       "SYSMONITOR", "AMP",       "ADETECT",    "MBUFF",        "CUSTOM"};

// The torch_npu / msprof schema (table and column names and order of a real ascend_pytorch_profiler_N.db;
// COMPUTE_TASK_INFO with the current blockNum/mixBlockNum/opState/hf32Eligible, COMMUNICATION_TASK_INFO
// with bandwidth).
const char* const kProfilerSchema =
    "CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER,endTimeNs INTEGER);"
    "CREATE TABLE NPU_INFO (id INTEGER,name TEXT);"
    "CREATE TABLE HOST_INFO (hostUid TEXT,hostName TEXT);"
    "CREATE TABLE ENUM_HCCL_RDMA_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockNum INTEGER,mixBlockNum INTEGER,"
    "taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,"
    "outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER,opState INTEGER,hf32Eligible INTEGER);"
    "CREATE TABLE ENUM_MSTX_EVENT_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE ENUM_HCCL_TRANSPORT_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER,globalTaskId INTEGER,taskType INTEGER,planeId INTEGER,"
    "groupName INTEGER,notifyId INTEGER,rdmaType INTEGER,srcRank INTEGER,dstRank INTEGER,transportType INTEGER,"
    "size INTEGER,dataType INTEGER,linkType INTEGER,opId INTEGER,bandwidth NUMERIC);"
    "CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,groupName INTEGER,"
    "opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER);"
    "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT);"
    "CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,"
    "globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER);"
    "CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,connectionId INTEGER PRIMARY KEY,"
    "name INTEGER);"
    "CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC);"
    "CREATE TABLE META_DATA (name TEXT,value TEXT);"
    "CREATE TABLE AICORE_FREQ (deviceId INTEGER,timestampNs NUMERIC,freq INTEGER);"
    "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);"
    "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);"
    "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);"
    "CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
    "sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, "
    "type INTEGER);"
    "CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);";

// analysis.db as torch_npu writes it (StepTraceTime with the deviceId column of current versions).
const char* const kAnalysisSchema =
    "CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, "
    "overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
    "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);"
    "CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, transport_type TEXT, transit_size NUMERIC, "
    "transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count NUMERIC, "
    "total_duration NUMERIC, step TEXT, type TEXT);"
    "CREATE TABLE CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank TEXT, dst_rank TEXT, "
    "transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, step TEXT, type TEXT, "
    "op_name TEXT);"
    "CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, "
    "transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, type TEXT);";

std::string insert_sql(const char* table, int columns, int rows = 1) {
  std::string s = "INSERT INTO ";
  s += table;
  s += " VALUES ";
  for (int r = 0; r < rows; ++r) {
    s += r ? ",(" : "(";
    for (int c = 0; c < columns; ++c) s += c ? ",?" : "?";
    s += ')';
  }
  return s;
}

}  // namespace

// ---- DbSink ----

DbSink::~DbSink() { abandon(); }

bool DbSink::check(int rc, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return true;
  if (error_.ok())
    error_ = file_error(ErrorCode::kIo, prof_tmp_.string(), what, std::string("SQLite: ") + sqlite3_errstr(rc));
  return false;
}

bool DbSink::exec(sqlite3* db, const char* sql) {
  if (!error_.ok()) return false;
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    error_ = file_error(ErrorCode::kIo, (db == ana_ ? ana_tmp_ : prof_tmp_).string(), "",
                        std::string("SQLite: ") + (msg != nullptr ? msg : sqlite3_errstr(rc)));
    sqlite3_free(msg);
    return false;
  }
  return true;
}

Status DbSink::open_file(const fs::path& path, sqlite3** db, fs::path* tmp) {
  *tmp = temp_sibling(path);
  std::error_code ec;
  fs::remove(*tmp, ec);  // a stale temporary of this very process id would otherwise be reopened
  const int rc = sqlite3_open_v2(tmp->c_str(), db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = *db != nullptr ? sqlite3_errmsg(*db) : sqlite3_errstr(rc);
    sqlite3_close(*db);
    *db = nullptr;
    fs::remove(*tmp, ec);
    return file_error(ErrorCode::kIo, tmp->string(), "", "cannot create SQLite file: " + msg);
  }
  if (!exec(*db,
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-8192; "
            "BEGIN"))
    return error_;
  return {};
}

int64_t DbSink::intern(std::unordered_map<std::string, int64_t>& map, int64_t& next, std::string_view v) {
  const auto [it, fresh] = map.try_emplace(std::string(v), next);
  if (fresh) {
    ++next;
    if (error_.ok()) check(s_string_.i(it->second).t(v).run(), "STRING_IDS");
  }
  return it->second;
}

int64_t DbSink::str(std::string_view v) { return intern(cann_strings_, next_cann_, v); }
int64_t DbSink::fwk(std::string_view v) { return intern(fwk_strings_, next_fwk_, v); }
int64_t DbSink::str_unique(std::string_view v) {
  const int64_t id = next_cann_++;
  if (error_.ok()) check(s_string_.i(id).t(v).run(), "STRING_IDS");
  return id;
}

Status DbSink::open(const fs::path& out_dir, const Identity& id) {
  abandon();
  error_ = Status();
  id_ = id;
  cann_strings_.clear();
  fwk_strings_.clear();
  next_cann_ = 0;
  next_fwk_ = int64_t{1} << 28;
  next_task_ = next_op_ = next_conn_ = 0;
  max_cann_conn_ = -1;
  fresh_.clear();
  last_ns_ = id.session_start_ns;
  global_tid_ = static_cast<int64_t>((static_cast<uint64_t>(id.host_pid) << 32) | static_cast<uint64_t>(id.host_pid));
  bytes_profiler_ = bytes_analysis_ = 0;
  prof_path_ = out_dir / ("ascend_pytorch_profiler_" + std::to_string(id.rank) + ".db");
  ana_path_ = out_dir / "analysis.db";
  if (Status st = open_file(prof_path_, &prof_, &prof_tmp_); !st.ok()) {
    error_ = st;
    return st;
  }
  if (Status st = open_file(ana_path_, &ana_, &ana_tmp_); !st.ok()) {
    error_ = st;
    return st;
  }
  if (!exec(prof_, kProfilerSchema) || !exec(ana_, kAnalysisSchema)) return error_;

  bool ok = s_string_.prepare(prof_, insert_sql("STRING_IDS", 2)) && s_meta_.prepare(prof_, insert_sql("META_DATA", 2)) &&
            s_task_.prepare(prof_, insert_sql("TASK", 11)) && s_compute_.prepare(prof_, insert_sql("COMPUTE_TASK_INFO", 15)) &&
            s_pmu_batch_.prepare(prof_, insert_sql("TASK_PMU_INFO", 3, kPmuBatch)) &&
            s_comm_op_.prepare(prof_, insert_sql("COMMUNICATION_OP", 12)) &&
            s_comm_task_.prepare(prof_, insert_sql("COMMUNICATION_TASK_INFO", 15)) &&
            s_cann_.prepare(prof_, insert_sql("CANN_API", 6)) && s_pytorch_.prepare(prof_, insert_sql("PYTORCH_API", 11)) &&
            s_conn_.prepare(prof_, insert_sql("CONNECTION_IDS", 2)) && s_step_.prepare(prof_, insert_sql("STEP_TIME", 3)) &&
            s_freq_.prepare(prof_, insert_sql("AICORE_FREQ", 3)) &&
            s_step_trace_.prepare(ana_, insert_sql("StepTraceTime", 11)) &&
            s_comm_time_.prepare(ana_, insert_sql("CommAnalyzerTime", 10)) &&
            s_comm_bw_.prepare(ana_, insert_sql("CommAnalyzerBandwidth", 12));
  if (!ok) {
    error_ = file_error(ErrorCode::kIo, prof_tmp_.string(), "", std::string("SQLite prepare: ") + sqlite3_errmsg(prof_));
    return error_;
  }

  // fixed rows
  DbStmt e;
  auto enum_rows = [&](const char* table, const EnumRow* rows, size_t n) {
    if (!e.prepare(prof_, insert_sql(table, 2))) return check(SQLITE_ERROR, table);
    for (size_t k = 0; k < n; ++k) check(e.i(rows[k].id).t(rows[k].name).run(), table);
    return error_.ok();
  };
  enum_rows("ENUM_API_TYPE", kApiType, std::size(kApiType));
  enum_rows("ENUM_HCCL_DATA_TYPE", kHcclDataType, std::size(kHcclDataType));
  enum_rows("ENUM_HCCL_LINK_TYPE", kHcclLinkType, std::size(kHcclLinkType));
  enum_rows("ENUM_HCCL_TRANSPORT_TYPE", kHcclTransportType, std::size(kHcclTransportType));
  enum_rows("ENUM_HCCL_RDMA_TYPE", kHcclRdmaType, std::size(kHcclRdmaType));
  enum_rows("ENUM_MSTX_EVENT_TYPE", kMstxEventType, std::size(kMstxEventType));
  if (e.prepare(prof_, insert_sql("ENUM_MODULE", 2))) {
    for (size_t k = 0; k < std::size(kModules); ++k) check(e.i(static_cast<int64_t>(k)).t(kModules[k]).run(), "ENUM_MODULE");
  } else {
    check(SQLITE_ERROR, "ENUM_MODULE");
  }
  meta("SCHEMA_VERSION", "1.2.0");
  meta("SCHEMA_VERSION_MAJOR", "1");
  meta("SCHEMA_VERSION_MINOR", "2");
  meta("SCHEMA_VERSION_MICRO", "0");
  if (e.prepare(prof_, insert_sql("RANK_DEVICE_MAP", 2))) check(e.i(id.rank).i(id.device).run(), "RANK_DEVICE_MAP");
  if (e.prepare(prof_, insert_sql("NPU_INFO", 2))) check(e.i(id.device).t(id.npu_name).run(), "NPU_INFO");
  if (e.prepare(prof_, insert_sql("HOST_INFO", 2))) {
    // a stable 64-bit host id from the host name (FNV-1a), like msprof's hostUid
    uint64_t h = 1469598103934665603ULL;
    for (const char c : id.host_name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    check(e.t(std::to_string(h)).t(id.host_name).run(), "HOST_INFO");
  }
  e.finalize();
  return error_;
}

void DbSink::meta(std::string_view name, std::string_view value) {
  if (error_.ok()) check(s_meta_.t(name).t(value).run(), "META_DATA");
}

int64_t DbSink::task(int64_t start_ns, int64_t end_ns, int64_t connection_id, int64_t task_type_id, int64_t context_id,
                     int64_t stream_id, int64_t task_id) {
  const int64_t g = next_task_++;
  see_time(end_ns);
  if (error_.ok()) {
    s_task_.i(start_ns).i(end_ns).i(id_.device);
    if (connection_id < 0) s_task_.null();  // a task no host call launched: no connection id
    else s_task_.i(connection_id);
    check(s_task_.i(g)
              .i(id_.host_pid)
              .i(task_type_id)
              .i(context_id)
              .i(stream_id)
              .i(task_id)
              .i(4294967295LL)
              .run(),
          "TASK");
  }
  return g;
}

void DbSink::compute_info(int64_t gtid, const ComputeInfo& c) {
  if (!error_.ok()) return;
  check(s_compute_.i(c.name)
            .i(gtid)
            .i(c.block_num)
            .i(c.mix_block_num)
            .i(c.task_type)
            .i(c.op_type)
            .i(c.input_formats)
            .i(c.input_data_types)
            .i(c.input_shapes)
            .i(c.output_formats)
            .i(c.output_data_types)
            .i(c.output_shapes)
            .i(c.attr_info)
            .i(c.op_state)
            .i(c.hf32_eligible)
            .run(),
        "COMPUTE_TASK_INFO");
}


int64_t DbSink::comm_op(int64_t name_id, int64_t start_ns, int64_t end_ns, int64_t connection_id, int64_t group_id,
                        int data_type, int64_t alg_type_id, int64_t count, int64_t op_type_id) {
  const int64_t op = next_op_++;
  see_time(end_ns);
  if (error_.ok())
    check(s_comm_op_.i(name_id)
              .i(start_ns)
              .i(end_ns)
              .i(connection_id)
              .i(group_id)
              .i(op)
              .i(0)
              .i(0)
              .i(data_type)
              .i(alg_type_id)
              .i(count)
              .i(op_type_id)
              .run(),
          "COMMUNICATION_OP");
  return op;
}

void DbSink::comm_task(const CommTask& c) {
  if (!error_.ok()) return;
  check(s_comm_task_.i(c.name)
            .i(c.global_task_id)
            .i(c.task_type)
            .i(c.plane_id)
            .i(c.group_name)
            .i(c.notify_id)
            .i(db_enum::kInvalid)
            .i(c.src_rank)
            .i(c.dst_rank)
            .i(c.transport_type)
            .i(c.size)
            .i(c.data_type)
            .i(c.link_type)
            .i(c.op_id)
            .d(c.bandwidth)
            .run(),
        "COMMUNICATION_TASK_INFO");
}

void DbSink::cann_api(int64_t start_ns, int64_t end_ns, int type, int64_t connection_id, int64_t name_id) {
  see_time(end_ns);
  if (connection_id > max_cann_conn_) max_cann_conn_ = connection_id;
  if (error_.ok()) check(s_cann_.i(start_ns).i(end_ns).i(type).i(global_tid_).i(connection_id).i(name_id).run(), "CANN_API");
}

void DbSink::cann_api_fresh(int64_t start_ns, int64_t end_ns, int type, int64_t name_id) {
  see_time(end_ns);
  fresh_.push_back({start_ns, end_ns, name_id, type});
}

void DbSink::pytorch_api(int64_t start_ns, int64_t end_ns, int64_t name_id, int64_t sequence_number,
                         int64_t fwd_thread_id, int64_t input_dtypes, int64_t input_shapes, int type, int64_t connection) {
  see_time(end_ns);
  if (!error_.ok()) return;
  char a[24], b[24];
  const auto la = static_cast<size_t>(std::snprintf(a, sizeof a, "%lld", static_cast<long long>(start_ns)));
  const auto lb = static_cast<size_t>(std::snprintf(b, sizeof b, "%lld", static_cast<long long>(end_ns)));
  s_pytorch_.t(std::string_view(a, la)).t(std::string_view(b, lb)).i(global_tid_);
  int64_t conn = -1;
  if (connection >= 0) {
    conn = next_conn_++;
    s_pytorch_.i(conn);
  } else {
    s_pytorch_.null();
  }
  s_pytorch_.i(name_id).i(sequence_number).i(fwd_thread_id);
  if (input_dtypes >= 0) s_pytorch_.i(input_dtypes);
  else s_pytorch_.null();
  if (input_shapes >= 0) s_pytorch_.i(input_shapes);
  else s_pytorch_.null();
  if (!check(s_pytorch_.null().i(type).run(), "PYTORCH_API")) return;
  if (conn >= 0) check(s_conn_.i(conn).i(connection).run(), "CONNECTION_IDS");
}

void DbSink::step_time(int64_t id, int64_t start_ns, int64_t end_ns) {
  see_time(end_ns);
  if (error_.ok()) check(s_step_.i(id).i(start_ns).i(end_ns).run(), "STEP_TIME");
}

void DbSink::aicore_freq(int64_t timestamp_ns, int64_t mhz) {
  if (error_.ok()) check(s_freq_.i(id_.device).i(timestamp_ns).i(mhz).run(), "AICORE_FREQ");
}

void DbSink::step_trace(const StepTrace& s) {
  if (!error_.ok()) return;
  s_step_trace_.i(id_.device)
      .t(s.step)
      .d(s.computing)
      .d(s.comm_not_overlapped)
      .d(s.overlapped)
      .d(s.communication)
      .d(s.free)
      .d(s.stage);
  if (s.bubble_is_int) s_step_trace_.i(0);
  else s_step_trace_.d(s.bubble);
  check(s_step_trace_.d(s.comm_not_overlapped_excl_receive).d(s.preparing).run(), "StepTraceTime");
}

void DbSink::comm_time(std::string_view op, std::string_view group, double start_us, const double* ms5,
                       std::string_view step, std::string_view type) {
  if (!error_.ok()) return;
  check(s_comm_time_.t(op).t(group).d(start_us).d(ms5[0]).d(ms5[1]).d(ms5[2]).d(ms5[3]).d(ms5[4]).t(step).t(type).run(),
        "CommAnalyzerTime");
}

void DbSink::comm_bandwidth(std::string_view op, std::string_view group, std::string_view transport, double size_mb,
                            double time_ms, double bandwidth, double large_packet_ratio, double package_size,
                            int64_t count, double total_duration, std::string_view step, std::string_view type) {
  if (!error_.ok()) return;
  check(s_comm_bw_.t(op)
            .t(group)
            .t(transport)
            .d(size_mb)
            .d(time_ms)
            .d(bandwidth)
            .d(large_packet_ratio)
            .d(package_size)
            .i(count)
            .d(total_duration)
            .t(step)
            .t(type)
            .run(),
        "CommAnalyzerBandwidth");
}

void DbSink::pmu_batch(int64_t gtid, const int64_t* name_ids, const int64_t* value, const bool* milli) {
  if (!error_.ok()) return;
  for (int i = 0; i < kPmuBatch; ++i) {
    s_pmu_batch_.i(gtid).i(name_ids[i]);
    if (milli[i]) s_pmu_batch_.d(static_cast<double>(value[i]) / 1000.0);
    else s_pmu_batch_.i(value[i]);
  }
  check(s_pmu_batch_.run(), "TASK_PMU_INFO");
}

Status DbSink::close() {
  if (prof_ == nullptr && ana_ == nullptr) return error_;
  if (error_.ok()) {
    int64_t next = max_cann_conn_ + 1;
    for (const Fresh& f : fresh_) {
      if (!check(s_cann_.i(f.start).i(f.end).i(f.type).i(global_tid_).i(next++).i(f.name).run(), "CANN_API")) break;
    }
    fresh_.clear();
    DbStmt e;
    if (e.prepare(prof_, insert_sql("SESSION_TIME_INFO", 2)))
      check(e.i(id_.session_start_ns).i(last_ns_).run(), "SESSION_TIME_INFO");
    else
      check(SQLITE_ERROR, "SESSION_TIME_INFO");
  }
  exec(prof_,
       "CREATE INDEX TaskIndex ON TASK (startNs,globalTaskId);"
       "CREATE INDEX CommunicationTaskIndex ON COMMUNICATION_TASK_INFO (globalTaskId);"
       "COMMIT");
  exec(ana_, "COMMIT");
  for (DbStmt* s : {&s_string_, &s_meta_, &s_task_, &s_compute_, &s_pmu_batch_, &s_comm_op_, &s_comm_task_, &s_cann_, &s_pytorch_,
                    &s_conn_, &s_step_, &s_freq_, &s_step_trace_, &s_comm_time_, &s_comm_bw_})
    s->finalize();
  for (auto [db, tmp] : {std::pair{&prof_, &prof_tmp_}, std::pair{&ana_, &ana_tmp_}}) {
    if (*db == nullptr) continue;
    const int rc = sqlite3_close(*db);
    *db = nullptr;
    if (rc != SQLITE_OK && error_.ok())
      error_ = file_error(ErrorCode::kIo, tmp->string(), "", std::string("SQLite close: ") + sqlite3_errstr(rc));
  }
  std::error_code ec;
  if (error_.ok()) {
    for (auto [tmp, path] : {std::pair{&prof_tmp_, &prof_path_}, std::pair{&ana_tmp_, &ana_path_}}) {
      fs::rename(*tmp, *path, ec);
      if (ec) {
        error_ = file_error(ErrorCode::kIo, path->string(), "", "rename failed: " + ec.message());
        break;
      }
      tmp->clear();
    }
  }
  if (error_.ok()) {
    bytes_profiler_ = fs::file_size(prof_path_, ec);
    bytes_analysis_ = fs::file_size(ana_path_, ec);
  }
  for (fs::path* tmp : {&prof_tmp_, &ana_tmp_}) {
    if (!tmp->empty()) fs::remove(*tmp, ec);
    tmp->clear();
  }
  cann_strings_.clear();
  fwk_strings_.clear();
  return error_;
}

void DbSink::abandon() {
  for (DbStmt* s : {&s_string_, &s_meta_, &s_task_, &s_compute_, &s_pmu_batch_, &s_comm_op_, &s_comm_task_, &s_cann_, &s_pytorch_,
                    &s_conn_, &s_step_, &s_freq_, &s_step_trace_, &s_comm_time_, &s_comm_bw_})
    s->finalize();
  for (sqlite3** db : {&prof_, &ana_}) {
    if (*db != nullptr) sqlite3_close(*db);
    *db = nullptr;
  }
  std::error_code ec;
  for (fs::path* tmp : {&prof_tmp_, &ana_tmp_}) {
    if (!tmp->empty()) fs::remove(*tmp, ec);
    tmp->clear();
  }
}

}  // namespace ascprof::synth
