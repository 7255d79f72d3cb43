#pragma once
/// DbSink: writes one rank's SQLite exports of a synthetic capture (internal to the synth module):
/// ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db (the torch_npu / msprof tables) and
/// ASCEND_PROFILER_OUTPUT/analysis.db (CommAnalyzer*, StepTraceTime), with the same data as the text
/// exports (docs: shared spec db-format.md; mapping in the RankWriter calls).
///
/// Rows are inserted while the rank's steps stream (prepared statements, one transaction per file,
/// journal_mode=OFF, synchronous=OFF), so memory stays bounded by SQLite's page cache plus the interned
/// strings (bounded: kernel names, shapes, ... and one "ProfilerStep#N" per step). Both files are built
/// under a temporary sibling name and renamed into place by close(); abandon() removes them. The file
/// bytes are a pure function of the inserted rows (no wall-clock values are stored). The first SQLite
/// error is kept; later calls become no-ops and close() returns it.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/status.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace ascprof::synth {

/// A prepared INSERT; bind values in column order with the fluent setters, then run().
class DbStmt {
 public:
  DbStmt() = default;
  ~DbStmt();
  DbStmt(const DbStmt&) = delete;
  DbStmt& operator=(const DbStmt&) = delete;
  bool prepare(sqlite3* db, const std::string& sql);
  void finalize();
  DbStmt& i(int64_t v);
  DbStmt& d(double v);
  DbStmt& t(std::string_view v);
  DbStmt& null();
  /// Steps and resets; returns the SQLite result code (SQLITE_DONE on success).
  int run();

 private:
  sqlite3_stmt* st_ = nullptr;
  int col_ = 0;
};

/// ENUM_* ids as the real tables define them.
namespace db_enum {
inline constexpr int kApiAcl = 20000, kApiModel = 15000, kApiNode = 10000, kApiHccl = 5500, kApiRuntime = 5000;
inline constexpr int kApiOp = 50001, kApiQueue = 50002, kApiTrace = 50003;
inline constexpr int kHcclDataBf16 = 11;
inline constexpr int kInvalid = 65535;
int transport_type(std::string_view name);  ///< SDMA 0, RDMA 1, LOCAL 2, else 65535
int link_type(std::string_view name);       ///< HCCS 1, ROCE 3, ..., INVALID_TYPE 65535
int data_type(std::string_view name);       ///< BF16/BFP16 11, FP16 3, FP32 4, ..., else 65535
}  // namespace db_enum

class DbSink {
 public:
  /// Identity of the rank written into the fixed tables.
  struct Identity {
    int rank = 0;
    int device = 0;
    int host_pid = 0;
    std::string host_name;
    std::string npu_name = "Ascend910B";
    int64_t session_start_ns = 0;  ///< SESSION_TIME_INFO start (the end is the last time seen)
  };

  DbSink() = default;
  ~DbSink();
  DbSink(const DbSink&) = delete;
  DbSink& operator=(const DbSink&) = delete;

  /// Creates both files (temporary names) in `out_dir`, their tables and the fixed rows, and begins
  /// one transaction per file.
  Status open(const std::filesystem::path& out_dir, const Identity& id);
  /// Writes the deferred rows and indexes, commits, closes and renames both files into place.
  Status close();
  /// Closes and removes the temporary files (after an error elsewhere).
  void abandon();
  bool ok() const { return error_.ok(); }
  /// File sizes after a successful close().
  uint64_t bytes_profiler() const { return bytes_profiler_; }
  uint64_t bytes_analysis() const { return bytes_analysis_; }

  // ---- STRING_IDS ----
  /// CANN string id (range from 0), interned once.
  int64_t str(std::string_view v);
  /// A CANN string the caller knows occurs once in the file and differs from every interned one: stored
  /// without a dictionary entry (keeps memory bounded for per-op names such as hcom_allReduce__123_45_1).
  int64_t str_unique(std::string_view v);
  /// torch framework string id (range from 268435456), interned once.
  int64_t fwk(std::string_view v);

  // ---- ascend_pytorch_profiler_{rank}.db ----
  void meta(std::string_view name, std::string_view value);
  /// TASK row (connection_id < 0: NULL, a task no host call launched); returns its globalTaskId
  /// (assigned in call order from 0).
  int64_t task(int64_t start_ns, int64_t end_ns, int64_t connection_id, int64_t task_type_id, int64_t context_id,
               int64_t stream_id, int64_t task_id);
  struct ComputeInfo {
    int64_t name, block_num, mix_block_num, task_type, op_type, input_formats, input_data_types, input_shapes,
        output_formats, output_data_types, output_shapes, attr_info, op_state, hf32_eligible;
  };
  void compute_info(int64_t global_task_id, const ComputeInfo& c);
  /// TASK_PMU_INFO: kPmuBatch rows of one task in one statement: value[i] as an integer, or value[i] / 1000.0 when milli[i].
  static constexpr int kPmuBatch = 25;
  void pmu_batch(int64_t global_task_id, const int64_t* name_ids, const int64_t* value, const bool* milli);
  /// COMMUNICATION_OP row; returns its opId (assigned in call order from 0).
  int64_t comm_op(int64_t name_id, int64_t start_ns, int64_t end_ns, int64_t connection_id, int64_t group_id,
                  int data_type, int64_t alg_type_id, int64_t count, int64_t op_type_id);
  struct CommTask {
    int64_t name, global_task_id, task_type, plane_id, group_name, notify_id, src_rank, dst_rank;
    int transport_type;
    int64_t size;
    int data_type, link_type;
    int64_t op_id;
    double bandwidth;
  };
  void comm_task(const CommTask& c);
  /// CANN_API row with the event's own connection id.
  void cann_api(int64_t start_ns, int64_t end_ns, int type, int64_t connection_id, int64_t name_id);
  /// CANN_API row of an event without a connection id: written by close() with a fresh id above the
  /// largest one seen.
  void cann_api_fresh(int64_t start_ns, int64_t end_ns, int type, int64_t name_id);
  /// PYTORCH_API row. `input_dtypes` / `input_shapes` < 0 store NULL. With `connection` >= 0 the row
  /// gets the next CONNECTION_IDS id and a CONNECTION_IDS(id, connection) row (one torch_to_npu flow).
  void pytorch_api(int64_t start_ns, int64_t end_ns, int64_t name_id, int64_t sequence_number, int64_t fwd_thread_id,
                   int64_t input_dtypes, int64_t input_shapes, int type, int64_t connection);
  void step_time(int64_t id, int64_t start_ns, int64_t end_ns);
  void aicore_freq(int64_t timestamp_ns, int64_t mhz);

  // ---- analysis.db ----
  struct StepTrace {
    std::string step;
    double computing, comm_not_overlapped, overlapped, communication, free, stage;
    bool bubble_is_int;
    double bubble;
    double comm_not_overlapped_excl_receive, preparing;
  };
  void step_trace(const StepTrace& s);
  void comm_time(std::string_view op, std::string_view group, double start_us, const double* ms5, std::string_view step,
                 std::string_view type);
  void comm_bandwidth(std::string_view op, std::string_view group, std::string_view transport, double size_mb,
                      double time_ms, double bandwidth, double large_packet_ratio, double package_size, int64_t count,
                      double total_duration, std::string_view step, std::string_view type);

  /// globalTid of the rank's host thread ((pid << 32) | tid).
  int64_t global_tid() const { return global_tid_; }

 private:
  bool check(int rc, const char* what);
  bool exec(sqlite3* db, const char* sql);
  Status open_file(const std::filesystem::path& path, sqlite3** db, std::filesystem::path* tmp);
  void see_time(int64_t ns) {
    if (ns > last_ns_) last_ns_ = ns;
  }
  int64_t intern(std::unordered_map<std::string, int64_t>& map, int64_t& next, std::string_view v);

  Identity id_;
  sqlite3* prof_ = nullptr;
  sqlite3* ana_ = nullptr;
  std::filesystem::path prof_path_, ana_path_, prof_tmp_, ana_tmp_;
  Status error_;
  uint64_t bytes_profiler_ = 0, bytes_analysis_ = 0;

  std::unordered_map<std::string, int64_t> cann_strings_, fwk_strings_;
  int64_t next_cann_ = 0, next_fwk_ = int64_t{1} << 28;
  int64_t next_task_ = 0, next_op_ = 0, next_conn_ = 0;
  int64_t max_cann_conn_ = -1;
  int64_t global_tid_ = 0;
  int64_t last_ns_ = 0;
  struct Fresh {
    int64_t start, end, name;
    int type;
  };
  std::vector<Fresh> fresh_;

  DbStmt s_string_, s_meta_, s_task_, s_compute_, s_pmu_batch_, s_comm_op_, s_comm_task_, s_cann_, s_pytorch_, s_conn_,
      s_step_, s_freq_;
  DbStmt s_step_trace_, s_comm_time_, s_comm_bw_;
};

}  // namespace ascprof::synth
