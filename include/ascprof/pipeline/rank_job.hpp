#pragma once
/// One profiling rank through the rank-local stages, as a plain function (no MPI): read every file
/// of the rank folder, normalize, segment and classify, write `<root out>/ranks/<rank_id>.h5`
/// atomically, and return a compact outcome that the coordinator gathers. A rank that cannot be analysed comes back failed
/// with error class and message (file, place, reason); it never throws.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/class_summary.hpp"
#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/analysis/clock_offsets.hpp"
#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/analysis/host_bound.hpp"
#include "ascprof/analysis/module_breakdown.hpp"
#include "ascprof/analysis/moe_trace.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/stage.hpp"

namespace ascprof::store {
class PartPackWriter;
}

namespace ascprof::pipeline {


/// Size bounds on single input records: a field, raw CSV row or trace_view.json event above them
/// fails the rank with a kLimit error naming file and place, instead of exhausting memory.
struct InputLimits {
  uint64_t max_field_bytes = uint64_t{16} << 20;  ///< one CSV field and one raw CSV row
  uint64_t max_event_bytes = uint64_t{64} << 20;  ///< one trace_view.json event object

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & max_field_bytes & max_event_bytes;
  }
};

/// What a process needs to know to run one rank (serialisable; no pointers).
struct RankTask {
  std::string root;            ///< capture root path as given
  std::string root_out;        ///< OUT/<root-slug>
  std::string rank_id;         ///< "rank0", "rank13" (importers::rank_label), or the reference's dir-name id
  int64_t rank_number = -1;    ///< the profiler rank when the id is numeric, else -1
  std::string rank_dir;        ///< folder name
  std::string rank_path;       ///< folder path
  std::string rank_id_source;  ///< profiler_info_name | profiler_info_body | dirname | ordinal
  int32_t device_id = -1;
  std::string kernel_details, trace_view, communication, step_trace_time, profiler_info, profiler_metadata;
  std::string op_statistic, api_statistic;  ///< "" when the rank has none
  /// Where the rank's tables come from: "text" (kernel_details.csv, trace_view.json, communication.json,
  /// step_trace_time.csv) or "db" (ascend_pytorch_profiler_N.db and analysis.db). root_plan decides,
  /// with --source, and clears the paths of the other export so only what is read is fingerprinted.
  std::string source = "text";
  std::string profiler_db, analysis_db;  ///< "" when absent or not used
  /// In-kernel MoE traces of the rank (`<rank folder>/<moe_trace.rules folder>/*.json`, name order),
  /// each fingerprinted under kMoeTraceKind; empty when the rank has none.
  std::vector<std::string> moe_traces;
  uint64_t input_bytes = 0;
  int32_t root_index = 0;
  int32_t rank_index = 0;
  int32_t last_stage = kStageSummarize;  ///< the last rank-local stage to run (--to-stage)
  InputLimits limits;
  /// Deflate level of ranks/<id>.h5 (--h5-deflate): 1 by default; 0 stores the columns unfiltered:
  /// on an 8-rank 1.3 GB root the rank phase took 7.6-8.7 s instead of 12.9-13.7 s for 3.8x the
  /// HDF5 bytes (830 vs 218 MB). The content is the same at every level, so a checkpoint written at
  /// one level is reused at another.
  int32_t h5_deflate = 1;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root & root_out & rank_id & rank_number & rank_dir & rank_path & rank_id_source & device_id & kernel_details &
        trace_view & communication & step_trace_time & profiler_info & profiler_metadata & op_statistic &
        api_statistic & source & profiler_db & analysis_db & moe_traces & input_bytes &
        root_index & rank_index & last_stage & limits & h5_deflate;
  }
};

/// The input files of a rank, declared once: the rank job fingerprints each one it reads under its
/// kind, and a checkpoint stands for the rank only while every one of them is unchanged (a list kept
/// by hand in the checkpoint code once forgot the two statistics files, so a rerun reused a rank
/// whose op_statistic.csv had changed).
struct InputKind {
  const char* kind;                    ///< name in source_index.json and the rank's fingerprints
  std::string RankTask::*path;         ///< where the task keeps the file's path ("" when absent)
};
inline constexpr InputKind kInputKinds[] = {
    {"kernel_details_csv", &RankTask::kernel_details},     {"trace_view_json", &RankTask::trace_view},
    {"communication_json", &RankTask::communication},      {"step_trace_time_csv", &RankTask::step_trace_time},
    {"profiler_info_json", &RankTask::profiler_info},      {"profiler_metadata_json", &RankTask::profiler_metadata},
    {"op_statistic_csv", &RankTask::op_statistic},         {"api_statistic_csv", &RankTask::api_statistic},
    {"profiler_db", &RankTask::profiler_db},               {"analysis_db", &RankTask::analysis_db},
};

/// The kind of every in-kernel MoE trace file (RankTask::moe_traces: a list, not one path).
inline constexpr const char* kMoeTraceKind = "moe_trace_json";

/// The kind name of the task field `path` (one of kInputKinds).
const char* input_kind_name(std::string RankTask::*path);

/// One input file as registered in source_index.json.
struct SourceRef {
  std::string kind;  ///< kernel_details_csv, trace_view_json, communication_json, ...
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t prefix_hash = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & kind & path & size & mtime_ns & prefix_hash;
  }
};

/// One operator of a rank, as the coordinator needs it for operator_class_summary (no row lists).
struct OperatorBrief {
  std::string name, task_type, roles, op_type, categories;
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0, wait_sum_ns = 0;
  bool pipeline_signal = false;
  std::vector<double> pipeline_us;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & name & task_type & roles & op_type & categories & call_count & duration_sum_ns & wait_sum_ns & pipeline_signal &
        pipeline_us;
  }
};

/// Compact per-rank result gathered to the coordinator (kilobytes, never event tables).
struct RankOutcome {
  std::string rank_id, rank_dir, rank_path, rank_id_source;
  int32_t root_index = 0, rank_index = 0;
  bool ok = false;
  std::string error_class;  ///< io, parse, schema, limit, internal (when !ok)
  std::string error;        ///< "FILE:PLACE: reason" (when !ok)
  std::string h5_file;      ///< relative to root_out, e.g. "ranks/0.h5"
  uint64_t input_bytes = 0;
  // counts
  uint64_t kernel_rows = 0, pipeline_event_count = 0;
  uint64_t trace_events = 0, host_ops = 0, device_tasks = 0, comm_ops = 0, comm_plane_tasks = 0,
           overlap_intervals = 0, flows = 0, profiler_steps = 0, damaged_spans = 0;
  uint64_t comm_stat_rows = 0, step_trace_rows = 0, parallel_groups = 0;
  int64_t start_ns = 0, end_ns = 0;
  int32_t device_id = -1;
  std::string header_era, profiler_level;
  std::string source;  ///< "text" or "db": which export the rank's tables came from
  /// A rank with communication data but no kernel table (a trimmed capture: communication.json or
  /// analysis.db only): ok, with its communication and step-trace tables, but no kernel stages. It
  /// feeds the communication diagnostics only; manifests and the report mark it partial.
  bool partial = false;
  // data quality
  std::string stats_json;  ///< Stats::to_json() of this rank (counts with samples)
  std::vector<uint64_t> stat_counts;  ///< per counter of stats.def, for merging across ranks
  uint64_t data_loss_records = 0, warning_records = 0;
  std::vector<SourceRef> sources;
  // structure (segment + classify), compact: counts, inventories and hard errors only
  uint64_t segment_count = 0, step_count = 0, layer_count = 0, block_count = 0;
  uint64_t hard_error_count = 0, interior_island_count = 0;
  uint64_t declared_steps = 0, declared_steps_agreeing = 0;
  std::string step_source, anchor_family;
  std::vector<uint32_t> layer_inventory;   ///< sorted distinct main_layer_count of the steps
  std::vector<std::string> hard_errors;    ///< "<error_type> rows A-B: detail", first 16
  std::vector<std::string> step_class_ids; ///< distinct step classes of the rank...
  std::vector<uint32_t> step_class_members;  ///< ...and how many steps each has
  // timings (seconds), for stage_timings and the payload report
  double ingest_seconds = 0, normalize_seconds = 0, write_seconds = 0;
  double segment_seconds = 0, classify_seconds = 0, summarize_seconds = 0;
  std::string parts_file;  ///< relative to root_out: the rank's part pack of summary table rows ("" if not run)
  std::vector<OperatorBrief> operators;  ///< the rank's operators (tens of bytes each; folded away before the gather)
  std::vector<model::HcclOpRow> hccl;  ///< the rank's HCCL rows, for hccl_class_summary (folded away likewise)
  uint64_t operator_count = 0, operators_with_signal = 0;  ///< its operator rows, and those with pipeline signal
  int64_t expert_compute_ns = 0;  ///< device time of its MoE expert compute operators (ep_load_imbalance)
  analysis::CollectiveMarks collectives;               ///< sampled collective end times (clock offsets)
  std::vector<model::Finding> findings;               ///< rank-local findings (diagnostics)
  analysis::RankFacts facts;                          ///< what the cross-rank findings need
  analysis::StepWindows step_windows;                 ///< the rank's complete steps (alignment)
  std::vector<analysis::CollectiveTime> comm_times;   ///< sampled collective times (slow rank)
  analysis::HostBoundStats host_bound;                ///< device idle time split by late host launches
  analysis::ClassPartials class_partials;             ///< block/layer/step class statistics (class summaries)
  analysis::RankOperatorProfiles deep_dive;           ///< per-operator sums for the operator deep dive
  analysis::MoeRankSummary moe;                       ///< in-kernel MoE traces: per call, phases and attachment
  analysis::ModuleRankSummary modules;                ///< device time per nn.Module (empty without module ranges)
  analysis::RankPathSkeleton paths;                   ///< its first steps reduced for the critical-path walk
  int32_t process = 0;  ///< MPI process that ran it (reported, never written into HDF5)
  bool reused = false;  ///< loaded from a valid checkpoint of an earlier run instead of being redone
  /// The rank's operator-alignment candidates: process-local (not serialised), kept until the clock
  /// offsets are known and turned into `operator_buckets` (fold_operator_buckets).
  std::shared_ptr<const analysis::OperatorCandidates> candidates;
  /// Bucket partials on the corrected clock, until folded into the process's merge (not serialised).
  analysis::RankOperatorBuckets operator_buckets;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & rank_dir & rank_path & rank_id_source & root_index & rank_index & ok & error_class & error &
        h5_file & input_bytes & kernel_rows & pipeline_event_count & trace_events & host_ops & device_tasks &
        comm_ops & comm_plane_tasks & overlap_intervals & flows & profiler_steps & damaged_spans & comm_stat_rows &
        step_trace_rows & parallel_groups & start_ns & end_ns & device_id & header_era & profiler_level & source & partial &
        stats_json & stat_counts & data_loss_records & warning_records & sources & segment_count & step_count &
        layer_count & block_count & hard_error_count & interior_island_count & declared_steps &
        declared_steps_agreeing & step_source & anchor_family & layer_inventory & hard_errors & step_class_ids &
        step_class_members & ingest_seconds & normalize_seconds & write_seconds & segment_seconds &
        classify_seconds & summarize_seconds & parts_file & operators & hccl & operator_count & operators_with_signal &
        expert_compute_ns & collectives & findings & facts &
        step_windows & comm_times & host_bound & class_partials & deep_dive & moe & modules & paths & process & reused;
  }
};

/// True when `o` went through the kernel stages (ok and not a communication-only partial rank): what
/// the structure, summary, operator and compute findings read.
inline bool kernel_stages_ran(const RankOutcome& o) { return o.ok && !o.partial; }

/// Adds a finished rank's checkpoint record (parallel/checkpoint.hpp) to its part pack just before
/// the pack is committed: the pack's rename is the rank job's last write, so a pack holds a
/// checkpoint only when every output of the rank is in place, and a rank leaves two files (issue 22).
/// Called only for an ok outcome; it reports its own failures (the rank's result stands without).
using CheckpointSealer = std::function<void(const RankOutcome&, store::PartPackWriter&)>;

/// Runs ingest, normalize, segment and classify for one rank and writes its files: the HDF5 file and
/// the part pack (ranks/<id>.parts: the rank's rows of the root tables when it reached summarize, and
/// `seal`'s checkpoint record). Never throws.
RankOutcome run_rank_stages(const RankTask& task, const knowledge::Knowledge& kb, const CheckpointSealer& seal = {});

/// Folds a rank's candidates into operator buckets on its corrected clock (`offset_ns` subtracted)
/// and frees the candidates. No-op for a rank without candidates.
void fold_operator_buckets(RankOutcome& outcome, int64_t offset_ns, const knowledge::Knowledge& kb);

}  // namespace ascprof::pipeline
