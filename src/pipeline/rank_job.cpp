#include "ascprof/pipeline/rank_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/analysis/aicore_freq.hpp"
#include "ascprof/analysis/classify.hpp"
#include "ascprof/analysis/segment.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "ascprof/pipeline/structure_outputs.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "ascprof/importers/capture_info.hpp"
#include "ascprof/importers/communication.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/moe_trace.hpp"
#include "ascprof/importers/op_statistics.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "ascprof/importers/step_trace_time.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "ascprof/store/fingerprint.hpp"
#include "ascprof/store/stats_table.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "rank_store.hpp"
#include "structure_store.hpp"
#include "summary_store.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

using Clock = SteadyClock;

// Whether the comma-joined category list `joined` holds one of `wanted` (whole names only).
bool has_any_category(std::string_view joined, const std::vector<std::string>& wanted) {
  while (!joined.empty()) {
    const size_t comma = joined.find(',');
    const std::string_view name = joined.substr(0, comma);
    for (const auto& w : wanted)
      if (name == w) return true;
    if (comma == std::string_view::npos) break;
    joined.remove_prefix(comma + 1);
  }
  return false;
}

// Accumulates wall time into one of the outcome's timers.
class Timer {
 public:
  explicit Timer(double* sink) : sink_(sink), t0_(Clock::now()) {}
  ~Timer() { *sink_ += seconds_since(t0_); }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  double* sink_;
  Clock::time_point t0_;
};

// ASCPROF_DEBUG_MEMORY=1: one stderr line per stage boundary with VmRSS, VmHWM (the peak so far) and,
// on glibc, the heap bytes in use, to see which stage sets a rank's peak memory.
void memory_probe(const char* stage) {
  static const bool on = [] {
    const char* v = std::getenv("ASCPROF_DEBUG_MEMORY");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
  }();
  if (!on) return;
  double rss_mb = 0, hwm_mb = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "VmRSS:", 6) == 0) rss_mb = std::strtod(line + 6, nullptr) / 1024.0;
      if (std::strncmp(line, "VmHWM:", 6) == 0) hwm_mb = std::strtod(line + 6, nullptr) / 1024.0;
    }
    std::fclose(f);
  }
  double heap_mb = -1;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = mallinfo2();
  heap_mb = static_cast<double>(mi.uordblks + mi.hblkhd) / 1048576.0;
#endif
  // and the seconds since the previous probe of this process: what the step before it cost
  static Clock::time_point previous = Clock::now();
  const double step_s = seconds_since(previous);
  previous = Clock::now();
  std::fprintf(stderr, "ascprof memory: %-26s VmRSS %8.1f MiB  VmHWM %8.1f MiB  malloc in use %8.1f MiB  %7.3f s\n", stage,
               rss_mb, hwm_mb, heap_mb, step_s);
}

// One rank, read and written section by section: each file's tables are written to the rank's
// HDF5 file as soon as they are read and then freed, so peak memory is the largest section.
class RankJob {
 public:
  RankJob(const RankTask& task, const knowledge::Knowledge& kb, RankOutcome& out) : task_(task), kb_(kb), out_(out) {}

  Status run() {
    if (!from_db() && task_.kernel_details.empty() && (!task_.communication.empty() || !task_.analysis_db.empty()))
      return communication_only();
    if (!from_db() && task_.kernel_details.empty())
      return file_error(ErrorCode::kSchema, task_.rank_path, "",
                        !task_.profiler_db.empty()
                            ? "no kernel_details.csv in this rank folder, only its database (--source text)"
                            : "no kernel_details.csv or ascend_pytorch_profiler_N.db in this rank folder");
    if (from_db() && task_.profiler_db.empty())
      return file_error(ErrorCode::kSchema, task_.rank_path, "",
                        "no ascend_pytorch_profiler_N.db in this rank folder (--source db)");
    out_.source = task_.source;
    ASCPROF_RETURN_IF_ERROR(open_rank_file());
    // Between sections a SIGTERM abandons the rank: the writer's temporary file goes with it.
    ASCPROF_RETURN_IF_ERROR(capture_info());
    ASCPROF_RETURN_IF_ERROR(keep_going());
    ASCPROF_RETURN_IF_ERROR(trace());  // first: segmentation needs its ProfilerStep ranges
    memory_probe("trace done");
    ASCPROF_RETURN_IF_ERROR(keep_going());
    ASCPROF_RETURN_IF_ERROR(kernels());
    memory_probe("kernel stages done");
    ASCPROF_RETURN_IF_ERROR(keep_going());
    ASCPROF_RETURN_IF_ERROR(communication());
    ASCPROF_RETURN_IF_ERROR(step_trace());
    ASCPROF_RETURN_IF_ERROR(statistics());
    memory_probe("comm + step trace done");
    ASCPROF_RETURN_IF_ERROR(moe_traces());
    ASCPROF_RETURN_IF_ERROR(keep_going());
    return close_rank_file(static_cast<Stage>(std::clamp(task_.last_stage, kStageNormalize, kStageSummarize)));
  }

  // ranks/<id>.h5, written under a temporary name until close_rank_file commits it.
  Status open_rank_file() {
    out_.h5_file = layout::rank_h5(task_.rank_id);
    store::WriterOptions wo;
    wo.create_parent_dirs = true;
    wo.deflate_level = task_.h5_deflate;
    auto created = store::H5Writer::create(fs::path(task_.root_out) / out_.h5_file, wo);
    if (!created.ok()) return created.status();
    writer_.emplace(std::move(created).value());
    return {};
  }

  // The rank's attributes, input fingerprints, strings and counters, then the commit (rename).
  Status close_rank_file(Stage stage) {
    Timer t(&out_.write_seconds);
    if (out_.device_id < 0) out_.device_id = task_.device_id;
    ASCPROF_RETURN_IF_ERROR(write_rank_attributes(*writer_, task_, out_.device_id, out_.profiler_level, out_.header_era));
    if (out_.partial)
      ASCPROF_RETURN_IF_ERROR(writer_->set_string_attr("/", "partial", "communication only: no kernel table"));
    ASCPROF_RETURN_IF_ERROR(writer_->write_fingerprints("/", fingerprints_));
    ASCPROF_RETURN_IF_ERROR(writer_->write_string_table("/strings", pool_));
    ASCPROF_RETURN_IF_ERROR(store::write_stats(*writer_, stats_));
    ASCPROF_RETURN_IF_ERROR(keep_going());  // the last point where the rank can still be dropped whole
    return writer_->commit(stage_name(stage));
  }

  // A trimmed rank (communication.json or analysis.db, no kernel table): its capture facts,
  // communication and step trace are read and written, so it still takes part in the slow-rank
  // vote, the slow-link and transit/wait diagnostics and the step-trace rows.
  Status communication_only() {
    out_.partial = true;
    out_.source = task_.analysis_db.empty() ? "text" : "db";
    ASCPROF_RETURN_IF_ERROR(open_rank_file());
    ASCPROF_RETURN_IF_ERROR(capture_info());
    ASCPROF_RETURN_IF_ERROR(keep_going());
    ASCPROF_RETURN_IF_ERROR(communication());
    ASCPROF_RETURN_IF_ERROR(step_trace());
    ASCPROF_RETURN_IF_ERROR(keep_going());
    // The operator statistics describe kernels this rank has no table of: not read, but still
    // fingerprinted, so a checkpoint stands for every input file of the task (checkpoint.cpp).
    for (auto field : {&RankTask::op_statistic, &RankTask::api_statistic})
      if (!(task_.*field).empty()) ASCPROF_RETURN_IF_ERROR(source(field));
    out_.facts.rank_id = task_.rank_id;
    out_.facts.rank_ordinal = static_cast<uint32_t>(task_.rank_index);
    return close_rank_file(Stage::kNormalize);
  }

  // The rank's last write, after its HDF5 file: the part pack, with `seal`'s checkpoint record of the
  // finished outcome, renamed into place. A rank that stopped before summarize packs only the record.
  Status commit_parts(const CheckpointSealer& seal) {
    Timer t(&out_.write_seconds);
    if (!pack_open_) ASCPROF_RETURN_IF_ERROR(open_parts());
    out_.ok = true;  // the record is of the finished rank
    if (seal) seal(out_, pack_);
    Status st = pack_.commit();
    if (!st.ok()) {  // no HDF5 file without its pack: a rerun redoes the rank either way
      std::error_code ec;
      fs::remove(fs::path(task_.root_out) / out_.h5_file, ec);
    }
    return st;
  }

  void finish_outcome() {
    for (size_t i = 0; i < fingerprints_.size(); ++i) {
      const auto& fp = fingerprints_[i];
      out_.sources.push_back({kinds_[i], fp.path, fp.size, fp.mtime_ns, fp.prefix_hash});
    }
    out_.stats_json = stats_.to_json();
    out_.stat_counts.assign(kStatCount, 0);
    for (size_t i = 0; i < kStatCount; ++i) out_.stat_counts[i] = stats_.count(static_cast<Stat>(i));
    out_.data_loss_records = stats_.total(StatSeverity::kDataLoss);
    out_.warning_records = stats_.total(StatSeverity::kWarning);
  }

 private:
  Status open_parts() {
    pack_open_ = true;
    return pack_.open(fs::path(task_.root_out) / layout::rank_parts(task_.rank_id));
  }
  Status keep_going() const { return interrupted() ? interrupted_status(task_.rank_path) : Status{}; }
  bool from_db() const { return task_.source == "db"; }
  // The file the kernel rows come from, and its kind, as source_index.json names it.
  std::string RankTask::*kernel_source() const { return from_db() ? &RankTask::profiler_db : &RankTask::kernel_details; }

  /// Fingerprints the input `field` of the task before it is read (kInputKinds names it).
  Status source(std::string RankTask::*field) { return source_file(task_.*field, input_kind_name(field)); }
  Status source_file(const std::string& path, const char* kind) {
    auto fp = store::fingerprint_file(path);
    if (!fp.ok()) return fp.status();
    fingerprints_.push_back(*fp);
    kinds_.emplace_back(kind);
    return {};
  }

  Status kernels() {
    model::KernelTable k;
    if (from_db()) {
      Timer t(&out_.ingest_seconds);  // the database was fingerprinted with the capture facts
      ASCPROF_RETURN_IF_ERROR(importers::import_db_kernels(task_.profiler_db, pool_, steps_, k, stats_));
    } else {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::kernel_details));
      Timer t(&out_.ingest_seconds);
      importers::CsvOptions csv;
      csv.max_field_bytes = csv.max_row_bytes = task_.limits.max_field_bytes;
      ASCPROF_RETURN_IF_ERROR(importers::import_kernel_details(task_.kernel_details, pool_, k, stats_, csv));
    }
    // A rank without a single kernel row has nothing to analyse: counting it "ok" with 0 events would
    // hide a header-only (or wholly damaged) kernel_details.csv from the run's status and exit code.
    if (k.size() == 0)
      return file_error(ErrorCode::kSchema, task_.*kernel_source(), "",
                        stats_.total(StatSeverity::kDataLoss) > 0
                            ? "no usable kernel rows (every row was dropped, see data_quality)"
                        : from_db() ? "no kernel rows (COMPUTE_TASK_INFO and COMMUNICATION_OP are empty or absent)"
                                    : "no kernel rows below the header");
    memory_probe("kernel import");
    if (!task_.moe_traces.empty()) moe_rows_ = analysis::moe_kernel_rows(k, pool_, kb_.moe_trace);
    std::optional<analysis::NormalizedKernels> norm;
    {
      Timer t(&out_.normalize_seconds);
      norm.emplace(analysis::normalize_kernels(k, pool_, kb_, stats_));
    }
    memory_probe("normalize");
    out_.kernel_rows = k.size();
    out_.pipeline_event_count = norm->pipeline_event_count;
    out_.start_ns = norm->start_ns;
    out_.end_ns = norm->end_ns;
    out_.header_era = k.header.era;
    if (!k.device_id.empty() && k.device_id[0] >= 0) out_.device_id = k.device_id[0];
    {
      Timer t(&out_.write_seconds);
      ASCPROF_RETURN_IF_ERROR(write_kernel_tables(*writer_, k, *norm, kb_));
    }
    memory_probe("kernel tables written");
    return structure(k, norm);
  }

  // Segment and classify while the kernel table is in memory; only counts leave the process. The
  // kernel table and normalized columns are freed (`k`, `norm` emptied) as soon as their last
  // consumer ran, before the summary tables are written, so a big rank's peak memory is not the
  // kernel table plus the summary plus its rendered text.
  Status structure(model::KernelTable& k, std::optional<analysis::NormalizedKernels>& norm_opt) {
    if (task_.last_stage < kStageSegment) return {};
    const analysis::NormalizedKernels& norm = *norm_opt;
    model::RankStructure s;
    {
      Timer t(&out_.segment_seconds);
      analysis::SegmentInput in;
      in.kernels = &k;
      in.normalized = &norm;
      in.pool = &pool_;
      in.profiler_steps = &steps_;
      in.rank_id = task_.rank_id;
      s = analysis::segment_rank(in, kb_);
    }
    memory_probe("segment");
    model::RankClasses c;
    if (task_.last_stage >= kStageClassify) {
      Timer t(&out_.classify_seconds);
      c = analysis::classify_rank(s, k, norm, pool_, kb_);
    }
    memory_probe("classify");
    summarise_structure(s, c);
    const bool classified = task_.last_stage >= kStageClassify;
    {
      Timer t(&out_.write_seconds);
      ASCPROF_RETURN_IF_ERROR(classified ? write_structure_tables(*writer_, s, c) : write_segment_tables(*writer_, s));
    }
    memory_probe("structure tables written");
    if (task_.last_stage < kStageSummarize) {  // the root's structure rows now, without window metrics
      Timer t(&out_.write_seconds);
      ASCPROF_RETURN_IF_ERROR(open_parts());
      return write_rank_structure_parts(pack_, static_cast<uint32_t>(task_.rank_index), task_.rank_id, s, c, classified);
    }
    model::RankSummary sum;
    analysis::AicoreFreqStats freq;
    {
      Timer t(&out_.summarize_seconds);
      analysis::SummarizeInput in{&k, &norm, &pool_, &kb_};
      sum = analysis::summarize_rank(in, s, c);
      memory_probe("summarize");
      out_.class_partials = analysis::class_partials(s, c, sum, kb_);
      out_.candidates = std::make_shared<const analysis::OperatorCandidates>(
          analysis::operator_candidates(k, norm, pool_, kb_));
      out_.deep_dive = analysis::operator_profiles(k, norm, pool_, kb_);  // statistics() adds the CSV tables later
      freq = analysis::aicore_freq_stats(k, pool_, aicore_freq_, s, kb_.diagnostics);
      out_.paths = analysis::step_path_skeleton(k, norm, pool_, comm_ops_, s, kb_);
      comm_ops_ = {};
    }
    memory_probe("class partials + candidates");
    out_.parts_file = layout::rank_parts(task_.rank_id);
    {
      Timer t(&out_.write_seconds);
      ASCPROF_RETURN_IF_ERROR(open_parts());
      ASCPROF_RETURN_IF_ERROR(write_raw_kernel_index_part(pack_, static_cast<uint32_t>(task_.rank_index), task_.rank_id,
                                                          input_kind_name(kernel_source()), task_.*kernel_source(),
                                                          root_profile_id(task_.root), k,
                                                          norm, pool_, kb_));
    }
    memory_probe("raw kernel index written");
    const EventRecords bubble_events = bubble_event_records(static_cast<uint32_t>(task_.rank_index), task_.rank_id, sum, k,
                                                            norm, pool_, kb_);
    // Last reader of the kernel rows: everything below reads only s, c, sum and bubble_events.
    k = model::KernelTable{};
    norm_opt.reset();
    memory_probe("kernel table freed");
    {
      Timer t(&out_.write_seconds);
      ASCPROF_RETURN_IF_ERROR(write_summary_tables(*writer_, sum));
    }
    memory_probe("summary tables written");
    // A database rank's row numbers are its kernel rows in start order; /kernels source_line gives each key.
    out_.findings = analysis::diagnose_rank(
        task_.rank_id, static_cast<uint32_t>(task_.rank_index), s, sum, kb_,
        from_db() ? "the kernel rows of " + fs::path(task_.profiler_db).filename().string() + " (in start order)"
                  : std::string("kernel_details.csv"));
    for (auto& f : analysis::diagnose_aicore_freq(task_.rank_id, freq, kb_.diagnostics)) out_.findings.push_back(std::move(f));
    out_.facts.rank_id = task_.rank_id;
    out_.facts.rank_ordinal = static_cast<uint32_t>(task_.rank_index);
    out_.facts.aicore_reduced_share = freq.reduced_share();
    out_.facts.aicore_min_mhz = freq.min_mhz;
    out_.facts.wall_ns = sum.rank.wall_ns;
    analysis::collect_operator_comm_facts(sum, kb_, out_.facts);
    for (const auto& ss : sum.segments) out_.facts.has_attention = out_.facts.has_attention || ss.has_attention;
    for (const auto& g : s.segments)
      if (g.type == model::SegmentType::kStep)
        out_.step_windows.push_back(
            {task_.rank_id, g.segment_id, g.step_family, g.main_layer_count, g.start_ns, g.end_ns, g.microbatch_count});
    for (const auto& o : sum.operators) {
      out_.operators.push_back({o.name, o.task_type, o.roles, o.op_type, o.categories, o.call_count, o.duration_sum_ns,
                                o.wait_sum_ns, o.pipeline_signal, o.pipeline_us});
      out_.operators_with_signal += o.pipeline_signal ? 1 : 0;
      if (has_any_category(o.categories, kb_.diagnostics.ep_expert_categories))
        out_.expert_compute_ns += o.duration_sum_ns;
    }
    out_.operator_count = sum.operators.size();
    out_.hccl = sum.hccl;
    Timer t(&out_.write_seconds);
    std::string metrics;
    ASCPROF_RETURN_IF_ERROR(write_rank_summary_parts(pack_, static_cast<uint32_t>(task_.rank_index), task_.rank_id, s, c,
                                                     sum, kb_, bubble_events, &out_.findings, &metrics));
    memory_probe("summary parts written");
    // the root's structure rows, rendered here so the root only concatenates them (issue 17)
    const EvidenceMetrics window_metrics = parse_evidence_metrics(metrics);
    ASCPROF_RETURN_IF_ERROR(write_rank_structure_parts(pack_, static_cast<uint32_t>(task_.rank_index), task_.rank_id, s,
                                                       c, true, &window_metrics));
    memory_probe("structure parts written");
    return {};
  }

  void summarise_structure(const model::RankStructure& s, const model::RankClasses& c) {
    out_.segment_count = s.segments.size();
    out_.step_count = s.step_count();
    out_.layer_count = s.layers.size();
    out_.block_count = c.blocks.size();
    out_.hard_error_count = s.hard_errors.size();
    for (const auto& e : s.hard_errors) {
      if (e.error_type == "interior_unclassified_island") ++out_.interior_island_count;
      if (out_.hard_errors.size() < 16)
        out_.hard_errors.push_back(e.error_type + " rows " + std::to_string(e.row_start) + "-" + std::to_string(e.row_end) +
                                   ": " + e.detail);
    }
    out_.declared_steps = s.boundary_checks.size();
    for (const auto& b : s.boundary_checks) out_.declared_steps_agreeing += b.agrees ? 1 : 0;
    out_.step_source = model::step_source_name(s.step_source);
    out_.anchor_family = s.anchor_family;
    for (const auto& seg : s.segments)
      if (seg.type == model::SegmentType::kStep) out_.layer_inventory.push_back(seg.main_layer_count);
    std::sort(out_.layer_inventory.begin(), out_.layer_inventory.end());
    out_.layer_inventory.erase(std::unique(out_.layer_inventory.begin(), out_.layer_inventory.end()), out_.layer_inventory.end());
    for (const auto& cls : c.step_classes) {
      out_.step_class_ids.push_back(cls.class_id);
      out_.step_class_members.push_back(static_cast<uint32_t>(cls.members.size()));
    }
  }

  // The rank's in-kernel MoE traces (issue 20): read, analysed, attached to the instrumented kernel's
  // rows, written to /moe_trace. A broken trace is counted and reported per call; it never fails the rank.
  Status moe_traces() {
    if (task_.moe_traces.empty()) return {};
    std::vector<model::MoeTraceCall> calls;
    {
      Timer t(&out_.ingest_seconds);
      // the trace's args.rank_id is a number: the rank's number when it has one (-1 keeps the file's only rank)
      const int64_t rank_number = task_.rank_number;
      // an unreadable trace is not fingerprinted (the importer reports it), so no checkpoint stands for it;
      // the point map is an input of the rank*.pt calls, fingerprinted but not a call itself
      for (const fs::path file : task_.moe_traces) {
        (void)source_file(file.string(), kMoeTraceKind);
        if (file.filename() == importers::kMoePointMap) continue;
        calls.emplace_back();
        if (file.extension() == ".pt")
          importers::import_moe_rank_pt(file, file.parent_path() / importers::kMoePointMap, rank_number,
                                        kb_.moe_trace.cycles_per_us, pool_, calls.back(), stats_);
        else
          importers::import_moe_trace(file, rank_number, kb_.moe_trace.records_per_core, pool_, calls.back(), stats_);
      }
    }
    {
      Timer t(&out_.summarize_seconds);
      out_.moe = analysis::summarize_moe_traces(calls, moe_rows_, pool_, kb_.moe_trace, stats_);
    }
    Timer t(&out_.write_seconds);
    return write_moe_trace_tables(*writer_, calls, out_.moe, pool_);
  }

  Status capture_info() {
    Timer t(&out_.ingest_seconds);
    if (!task_.profiler_info.empty()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::profiler_info));
      auto info = importers::read_profiler_info(task_.profiler_info, stats_);
      if (!info.ok()) return info.status();
      out_.profiler_level = info->profiler_level;
    }
    if (!task_.profiler_metadata.empty()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::profiler_metadata));
      auto meta = importers::read_profiler_metadata(task_.profiler_metadata, stats_);
      if (!meta.ok()) return meta.status();
      meta_ = std::move(meta).value();
    }
    if (from_db()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::profiler_db));
      auto db = importers::read_profiler_db_info(task_.profiler_db, stats_);
      if (!db.ok()) return db.status();
      // META_DATA's parallel_group_info stands in for profiler_metadata.json when the rank has none.
      if (meta_.groups.empty() && meta_.distributed_args.empty()) meta_ = std::move(db->metadata);
      if (db->device_id >= 0) out_.device_id = db->device_id;
      // RANK_DEVICE_MAP is a second word on the rank: a disagreement is said, not silently resolved
      if (db->rank_id >= 0 && task_.rank_number != db->rank_id)
        stats_.note(Stat::db_rank_mismatch, fs::path(task_.profiler_db).filename().string() + ":table RANK_DEVICE_MAP: rankId " +
                                                std::to_string(db->rank_id) + ", the rank is " + task_.rank_id + " (from " +
                                                task_.rank_id_source + ")");
    }
    out_.parallel_groups = meta_.groups.size();
    return {};
  }

  Status trace() {
    model::TraceTables tr;
    if (from_db()) {
      Timer t(&out_.ingest_seconds);
      ASCPROF_RETURN_IF_ERROR(importers::import_db_trace(task_.profiler_db, pool_, tr, stats_));
    } else {
      if (task_.trace_view.empty()) return {};
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::trace_view));
      Timer t(&out_.ingest_seconds);
      importers::TraceViewOptions opts;
      opts.max_event_bytes = task_.limits.max_event_bytes;
      ASCPROF_RETURN_IF_ERROR(importers::import_trace_view(task_.trace_view, pool_, tr, stats_, opts));
    }
    memory_probe("trace import");
    out_.trace_events = tr.events_total;
    out_.host_ops = tr.host_ops.size();
    out_.device_tasks = tr.device_tasks.size();
    out_.comm_ops = tr.comm_ops.size();
    out_.comm_plane_tasks = tr.comm_plane_tasks.size();
    out_.overlap_intervals = tr.overlap.size();
    out_.flows = tr.flows.size();
    out_.profiler_steps = tr.steps.size();
    out_.damaged_spans = tr.damaged_spans.size();
    Timer t(&out_.write_seconds);
    ASCPROF_RETURN_IF_ERROR(write_trace_tables(*writer_, tr));
    memory_probe("trace tables written");
    steps_ = std::move(tr.steps);
    aicore_freq_ = std::move(tr.aicore_freq);
    out_.collectives = analysis::collective_marks(tr.comm_ops, pool_);
    comm_ops_ = std::move(tr.comm_ops);  // names the kernel rows' collectives for the critical path
    // one binding of device tasks to their launches, read by host-bound and by the module breakdown
    const bool modules_present = analysis::has_module_ranges(tr, pool_, kb_.modules);
    const analysis::LaunchBinding links = analysis::bind_launches(tr, pool_, /*with_torch_ops=*/modules_present);
    out_.host_bound = analysis::host_bound_stats(tr, links);
    if (from_db()) out_.host_bound.launch_links = "the database's CANN_API node launches (connectionId) and CONNECTION_IDS";
    if (!modules_present) return {};  // a capture without nn.Module ranges writes nothing new
    analysis::ModuleBreakdown modules = analysis::module_breakdown(tr, pool_, links, kb_.modules);
    ASCPROF_RETURN_IF_ERROR(write_module_tables(*writer_, modules));
    out_.modules = std::move(modules.summary);
    return {};
  }

  Status communication() {
    model::CommStatTable c;
    std::vector<int32_t> groups;
    const bool db = !task_.analysis_db.empty();
    if (db || !task_.communication.empty()) {
      Timer t(&out_.ingest_seconds);
      if (db) {
        ASCPROF_RETURN_IF_ERROR(source(&RankTask::analysis_db));
        ASCPROF_RETURN_IF_ERROR(importers::import_analysis_db_communication(task_.analysis_db, pool_, c, stats_));
      } else {
        ASCPROF_RETURN_IF_ERROR(source(&RankTask::communication));
        ASCPROF_RETURN_IF_ERROR(importers::import_communication(task_.communication, pool_, c, stats_));
      }
      groups = importers::link_groups(c, meta_, stats_, db ? task_.analysis_db : task_.communication);
      out_.comm_times = analysis::collective_times(c);
      analysis::attach_comm_waits(out_.paths, c, pool_);  // who arrived last, clock-free
      analysis::collect_alltoall_volume(c, pool_, out_.facts);
    }
    out_.comm_stat_rows = c.size();
    Timer t(&out_.write_seconds);
    return write_comm_tables(*writer_, c, groups, meta_);
  }

  Status step_trace() {
    model::StepTraceTable s;
    if (!task_.analysis_db.empty()) {  // fingerprinted with the communication tables
      Timer t(&out_.ingest_seconds);
      ASCPROF_RETURN_IF_ERROR(importers::import_analysis_db_step_trace(task_.analysis_db, s, stats_));
    } else if (!task_.step_trace_time.empty()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::step_trace_time));
      Timer t(&out_.ingest_seconds);
      ASCPROF_RETURN_IF_ERROR(importers::import_step_trace_time(task_.step_trace_time, s, stats_));
    }
    out_.step_trace_rows = s.size();
    Timer t(&out_.write_seconds);
    return write_step_trace_table(*writer_, s);
  }

  // op_statistic.csv and api_statistic.csv (small tables) go with the outcome to the deep dive. A
  // broken one fails the rank like any other input file: its numbers would be cited as facts.
  Status statistics() {
    auto& dd = out_.deep_dive;
    if (!task_.op_statistic.empty()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::op_statistic));
      Timer t(&out_.ingest_seconds);
      ASCPROF_RETURN_IF_ERROR(importers::import_op_statistic(task_.op_statistic, dd.op_stats, stats_));
      dd.op_statistic_present = true;
    }
    if (!task_.api_statistic.empty()) {
      ASCPROF_RETURN_IF_ERROR(source(&RankTask::api_statistic));
      Timer t(&out_.ingest_seconds);
      ASCPROF_RETURN_IF_ERROR(importers::import_api_statistic(task_.api_statistic, dd.api_stats, stats_));
      dd.api_statistic_present = true;
    }
    return {};
  }

  const RankTask& task_;
  const knowledge::Knowledge& kb_;
  RankOutcome& out_;
  StringPool pool_;
  Stats stats_;
  model::ProfilerMetadata meta_;
  model::StepMarkerTable steps_;  // ProfilerStep#N ranges, kept for segmentation
  model::AicoreFreqTable aicore_freq_;  // AI Core Freq samples, kept for the frequency analysis
  model::CommOpTable comm_ops_;         // trace_view's communication ops, kept for the critical path
  std::vector<analysis::MoeKernelRow> moe_rows_;  // the instrumented MoE kernel's rows (only with traces)
  std::vector<store::Fingerprint> fingerprints_;
  std::vector<std::string> kinds_;
  std::optional<store::H5Writer> writer_;  // created in run(); destroyed without commit on error: no half file
  store::PartPackWriter pack_;             // ranks/<id>.parts, likewise removed unless committed
  bool pack_open_ = false;
};

}  // namespace

const char* input_kind_name(std::string RankTask::*path) {
  for (const InputKind& k : kInputKinds)
    if (k.path == path) return k.kind;
  return "input";
}

RankOutcome run_rank_stages(const RankTask& task, const knowledge::Knowledge& kb, const CheckpointSealer& seal) {
  RankOutcome out;
  out.rank_id = task.rank_id;
  out.rank_dir = task.rank_dir;
  out.rank_path = task.rank_path;
  out.rank_id_source = task.rank_id_source;
  out.root_index = task.root_index;
  out.rank_index = task.rank_index;
  out.input_bytes = task.input_bytes;
  out.device_id = task.device_id;
  Status st;
  try {
    RankJob job(task, kb, out);
    st = job.run();
    job.finish_outcome();
    if (st.ok()) st = job.commit_parts(seal);
  } catch (const std::bad_alloc&) {
    st = Status(ErrorCode::kLimit, task.rank_path + ": out of memory while analysing this rank");
  } catch (const std::exception& e) {
    st = Status(ErrorCode::kInternal, task.rank_path + ": " + e.what());
  }
  out.ok = st.ok();
  if (!st.ok()) {
    out.error_class = error_code_name(st.code());
    out.error = st.message();
    out.h5_file.clear();
    out.parts_file.clear();
  }
  return out;
}

void fold_operator_buckets(RankOutcome& o, int64_t offset_ns, const knowledge::Knowledge& kb) {
  if (!o.ok || o.candidates == nullptr) return;
  o.operator_buckets = analysis::operator_buckets(*o.candidates, offset_ns, kb.operator_alignment);
  o.candidates.reset();
}

}  // namespace ascprof::pipeline
