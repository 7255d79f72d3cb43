#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>

#include "ascprof/common/allocator.hpp"
#include "ascprof/common/blake2b.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/common/csv_writer.hpp"
#include "ascprof/pipeline/class_summary_outputs.hpp"
#include "ascprof/pipeline/deep_dive_outputs.hpp"
#include "ascprof/pipeline/critical_path_outputs.hpp"
#include "ascprof/pipeline/module_outputs.hpp"
#include "ascprof/pipeline/moe_trace_outputs.hpp"
#include "ascprof/pipeline/structure_outputs.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "alignment_outputs.hpp"
#include "detectors.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// The source a rank's kernel rows came from: its kernel_details.csv, or its profiler database (a rank
// lists only the files it read, so a rank has at most one of them).
bool holds_kernel_rows(const SourceRef& src) {
  return src.kind == input_kind_name(&RankTask::kernel_details) || src.kind == input_kind_name(&RankTask::profiler_db);
}

// A root-level file written (listed among the root's outputs) or not (the root fails with the
// reason). Returns whether it was written.
bool record(RootSummary& s, const fs::path& path, const Status& st) {
  if (!st.ok()) {
    s.status = "failed";
    s.error = st.to_string();
    return false;
  }
  s.outputs.push_back(path.string());
  return true;
}

void write_data_quality(JsonWriter& w, const std::vector<uint64_t>& counts) {
  w.begin_object();
  for (size_t i = 0; i < kStatCount && i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    const StatInfo& info = stat_info(static_cast<Stat>(i));
    w.key(info.name);
    w.begin_object();
    w.kv("count", counts[i]);
    w.kv("severity", severity_name(info.severity));
    w.kv("description", info.description);
    w.end_object();
  }
  w.end_object();
}

std::string normalize_manifest(const RootPlan& plan, const std::vector<RankOutcome>& outcomes,
                               const RootSummary& summary) {
  std::vector<uint64_t> merged(kStatCount, 0);
  for (size_t i = 0; i < kStatCount && i < plan.stat_counts.size(); ++i) merged[i] += plan.stat_counts[i];
  for (const auto& o : outcomes)
    for (size_t i = 0; i < kStatCount && i < o.stat_counts.size(); ++i) merged[i] += o.stat_counts[i];

  JsonWriter w(true);
  w.begin_object();
  write_manifest_fields(w, stage_name(Stage::kNormalize), plan.out_dir);
  w.key("files");
  w.begin_object();
  w.kv("normalize_manifest", layout::kNormalizeManifestJson);
  w.kv("normalized_event_index", layout::kNormalizedEventIndexCsv);
  w.key("normalized_event_index_jsonl");
  w.null();  // the reference's optional --write-jsonl twin; we write none
  w.kv("source_index", layout::kSourceIndexJson);
  w.end_object();
  w.kv("hash_sources", false);  // sources are fingerprinted by size, mtime and a prefix hash
  w.kv("write_jsonl", false);
  w.kv("profile_id", root_profile_id(plan.root));
  w.kv("profile_root", plan.root);
  w.kv("root", plan.root);
  w.kv("status", summary.status);
  w.kv("rank_count", summary.ranks_ok);
  w.kv("event_count", summary.event_count);
  w.kv("pipeline_event_count", summary.pipeline_event_count);
  w.kv("pipeline_coverage",
       summary.event_count ? static_cast<double>(summary.pipeline_event_count) / static_cast<double>(summary.event_count) : 0.0);
  w.key("rank_summaries");
  w.begin_array();
  for (const auto& o : outcomes) {
    if (!o.ok) continue;
    w.begin_object();
    w.kv("rank_id", o.rank_id);
    w.kv("rank_index", static_cast<int64_t>(o.rank_index));  // the ordinal in evt_<ordinal>_<row> event ids
    w.kv("rank_dir", o.rank_dir);
    for (const auto& src : o.sources)  // the file the kernel rows came from (a database for db ranks)
      if (holds_kernel_rows(src)) {
        w.kv("kernel_details_csv", src.path);
        w.kv("source_id", stable_id("src", {o.rank_id, src.kind, src.path}));
        break;
      }
    w.kv("row_count", o.kernel_rows);
    w.kv("rank_id_source", o.rank_id_source);
    w.kv("device_id", static_cast<int64_t>(o.device_id));
    w.kv("event_count", o.kernel_rows);
    w.kv("start_us", static_cast<double>(o.start_ns) / 1000.0);
    w.kv("end_us", static_cast<double>(o.end_ns) / 1000.0);
    w.kv("start_ns", o.start_ns);
    w.kv("end_ns", o.end_ns);
    w.kv("pipeline_event_count", o.pipeline_event_count);
    w.kv("pipeline_coverage", o.kernel_rows ? static_cast<double>(o.pipeline_event_count) / static_cast<double>(o.kernel_rows) : 0.0);
    w.kv("h5_file", o.h5_file);
    w.kv("header_era", o.header_era);
    w.kv("profiler_level", o.profiler_level);
    w.kv("source", o.source);  // text | db: the export the rank's tables came from
    w.kv("status", o.partial ? "partial" : "ok");  // partial: communication and step trace only
    w.key("trace_view");
    w.begin_object();
    w.kv("events_total", o.trace_events);
    w.kv("host_ops", o.host_ops);
    w.kv("profiler_steps", o.profiler_steps);
    w.kv("device_tasks", o.device_tasks);
    w.kv("comm_ops", o.comm_ops);
    w.kv("comm_plane_tasks", o.comm_plane_tasks);
    w.kv("overlap_intervals", o.overlap_intervals);
    w.kv("flows", o.flows);
    w.kv("damaged_spans", o.damaged_spans);
    w.end_object();
    w.kv("communication_rows", o.comm_stat_rows);
    w.kv("step_trace_rows", o.step_trace_rows);
    w.kv("parallel_groups", o.parallel_groups);
    w.kv("input_bytes", o.input_bytes);
    w.kv("data_loss_records", o.data_loss_records);
    w.kv("warning_records", o.warning_records);
    w.key("data_quality");
    w.raw(o.stats_json.empty() ? "{}" : o.stats_json);
    w.end_object();
  }
  w.end_array();
  w.key("failed_ranks");
  w.begin_array();
  for (const auto& f : plan.failed) {
    w.begin_object();
    w.kv("rank_id", f.rank_id);
    w.kv("rank_dir", f.rank_dir);
    w.kv("path", f.path);
    w.kv("error_class", "io");
    w.kv("error", f.error);
    w.end_object();
  }
  for (const auto& o : outcomes) {
    if (o.ok) continue;
    w.begin_object();
    w.kv("rank_id", o.rank_id);
    w.kv("rank_dir", o.rank_dir);
    w.kv("path", o.rank_path);
    w.kv("error_class", o.error_class);
    w.kv("error", o.error);
    w.key("data_quality");
    w.raw(o.stats_json.empty() ? "{}" : o.stats_json);
    w.end_object();
  }
  w.end_array();
  w.key("duplicate_ranks");
  w.begin_array();
  for (const auto& d : plan.duplicates) {
    w.begin_object();
    w.kv("rank_id", d.rank_id);
    w.kv("kept", d.kept);
    w.kv("dropped", d.dropped);
    w.kv("reason", d.reason);
    w.end_object();
  }
  w.end_array();
  w.key("missing_rank_ids");
  w.begin_array();
  for (int64_t r : plan.missing_rank_ids) w.value(std::to_string(r));
  w.end_array();
  w.key("data_quality");
  write_data_quality(w, merged);
  w.end_object();
  return w.take() + "\n";
}

std::string source_index(const RootPlan& plan, const std::vector<RankOutcome>& outcomes) {
  JsonWriter w(true);
  w.begin_object();
  w.kv("root", plan.root);
  w.key("sources");
  w.begin_array();
  for (const auto& o : outcomes)
    for (const auto& s : o.sources) {
      w.begin_object();
      w.kv("source_id", stable_id("src", {o.rank_id, s.kind, s.path}));
      w.kv("rank_id", o.rank_id);
      w.kv("kind", s.kind);
      w.kv("path", s.path);
      w.kv("size", s.size);
      w.kv("mtime_ns", s.mtime_ns);
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(s.prefix_hash));
      w.kv("prefix_fnv1a64_words", hex);  // store::fnv1a64_words of the first 64 KiB
      // the reference's row range: the kernel table's rows (row_idx of the event tables), 0-based
      const bool kernel_rows = holds_kernel_rows(s) && o.kernel_rows > 0;
      w.kv("row_base", kernel_rows ? "zero_based" : "not_applicable");
      w.key("row_start");
      if (kernel_rows) w.value(uint64_t{0});
      else w.null();
      w.key("row_end");
      if (kernel_rows) w.value(o.kernel_rows - 1);
      else w.null();
      w.key("sha256");  // the reference hashes only with --hash-sources; we fingerprint a prefix instead
      w.null();
      w.end_object();
    }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

Status write_analysis_h5(const RootPlan& plan, const std::vector<RankOutcome>& outcomes) {
  store::WriterOptions wo;
  wo.create_parent_dirs = true;
  auto created = store::H5Writer::create(fs::path(plan.out_dir) / layout::kAnalysisH5, wo);
  if (!created.ok()) return created.status();
  store::H5Writer w = std::move(created).value();
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "root", plan.root));
  ASCPROF_RETURN_IF_ERROR(w.create_group("/ranks"));
  std::vector<std::string> rank_id, rank_dir, status, h5, error;
  std::vector<uint64_t> rows, events;
  std::vector<int64_t> start, end;
  for (const auto& o : outcomes) {
    rank_id.push_back(o.rank_id);
    rank_dir.push_back(o.rank_dir);
    status.push_back(o.ok ? (o.partial ? "partial" : "ok") : "failed");
    h5.push_back(o.ok ? o.h5_file : "");
    error.push_back(o.error);
    rows.push_back(o.kernel_rows);
    events.push_back(o.trace_events);
    start.push_back(o.start_ns);
    end.push_back(o.end_ns);
    if (o.ok && !o.h5_file.empty())
      ASCPROF_RETURN_IF_ERROR(w.create_external_link("/ranks/" + o.rank_id, o.h5_file, "/"));
  }
  store::TableWriter t(w, "/rank_index", outcomes.size());
  t.string_column("rank_id", rank_id);
  t.string_column("rank_dir", rank_dir);
  t.string_column("status", status);
  t.string_column("h5_file", h5);
  t.string_column("error", error);
  t.column("kernel_rows", rows);
  t.column("trace_events", events);
  t.column("start_ns", start);
  t.column("end_ns", end);
  ASCPROF_RETURN_IF_ERROR(t.finish());
  return w.commit(stage_name(Stage::kNormalize));
}


// The segment and classify root files, composed from the rows the rank jobs rendered into their
// part packs (write_rank_structure_parts), one rank at a time: copied, not parsed or re-rendered.
void record_structure_outputs(const RootPlan& plan, const std::vector<RankOutcome>& outcomes,
                              const store::SectionCopyRunner& run_copies, RootSummary& s) {
  auto fail = [&s](const Status& st) {
    s.status = "failed";
    s.error = st.to_string();
  };
  const int32_t last_stage = plan.tasks.empty() ? kStageClassify : plan.tasks.front().last_stage;
  if (last_stage < kStageSegment) return;
  StructureOutputOptions options;
  options.root = plan.root;
  options.classify_files = last_stage >= kStageClassify;
  options.run_copies = run_copies;
  auto writer = StructureOutputWriter::create(plan.out_dir, options);
  if (!writer.ok()) return fail(writer.status());
  for (const auto& o : outcomes) {
    if (!kernel_stages_ran(o)) continue;
    // (a rank that stopped before summarize has a pack too, but no parts_file naming it)
    auto pack = store::PartPackReader::open(fs::path(plan.out_dir) /
                                            (o.parts_file.empty() ? layout::rank_parts(o.rank_id) : o.parts_file));
    if (!pack.ok()) return fail(pack.status());
    const Status st = writer->add_rank_parts(static_cast<uint32_t>(o.rank_index), o.rank_id, *pack);
    if (!st.ok()) return fail(st);
  }
  const Status st = writer->finish();
  if (!st.ok()) return fail(st);
  for (const auto& p : writer->outputs()) s.outputs.push_back(p.string());
  s.structure = writer->totals();
}

// What the cross-rank stage hands to the diagnostics.

// The cross_rank stage: clock offsets, step alignments and operator alignments on corrected times,
// written to cross_rank_alignment.{json,csv} and cross_rank_manifest.json.
void record_cross_rank(const RootPlan& plan, std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                       analysis::OperatorBucketMerge* merged_operators, CrossRank& cr, RootSummary& s) {
  const auto offsets = root_clock_offsets(outcomes);
  std::map<std::string, int64_t> offset_of;
  for (const auto& c : offsets)
    if (c.estimated) offset_of[c.rank_id] = static_cast<int64_t>(c.offset_us * 1000.0);
  std::vector<int64_t> window_offset;
  // the windows move out of the outcomes into one table (nothing later reads them there)
  for (auto& o : outcomes) {
    if (o.ok && !o.parts_file.empty()) {
      const auto off = offset_of.find(o.rank_id);
      window_offset.insert(window_offset.end(), o.step_windows.size(), off == offset_of.end() ? 0 : off->second);
      cr.windows.append(o.step_windows);
    }
    o.step_windows = {};
  }
  return_freed_heap();  // the outcomes' window tables (~160 MB at 10,000 ranks) are free now
  {
    cr.steps = analysis::align_steps(cr.windows, window_offset, kb.diagnostics);
    // operator alignments from the root's merged buckets: the reduction's, or folded here from the
    // ranks this process analysed (serial callers); a rank's member position is its rank_index
    analysis::OperatorBucketMerge local;
    if (merged_operators == nullptr) {
      for (const auto& o : outcomes)
        if (kernel_stages_ran(o) && o.operator_buckets.built) {
          const auto off = offset_of.find(o.rank_id);
          analysis::fold_rank_buckets(local, static_cast<uint32_t>(o.rank_index), o.operator_buckets,
                                      off == offset_of.end() ? 0 : off->second, kb.operator_alignment);
        }
      merged_operators = &local;
    }
    for (const auto& o : outcomes) {
      const auto pos = static_cast<size_t>(std::max(0, o.rank_index));
      if (cr.rank_ids.size() <= pos) {
        cr.rank_ids.resize(pos + 1);
        cr.rank_ordinals.resize(pos + 1);
      }
      cr.rank_ids[pos] = o.rank_id;
      cr.rank_ordinals[pos] = static_cast<uint32_t>(pos);
    }
    cr.operators = analysis::finish_alignments(std::move(*merged_operators), kb.operator_alignment);
    std::vector<analysis::PathRankView> path_ranks;
    for (const auto& o : outcomes)
      if (kernel_stages_ran(o) && !o.paths.empty()) {
        const auto off = offset_of.find(o.rank_id);
        path_ranks.push_back({o.rank_id, static_cast<uint32_t>(o.rank_index), off == offset_of.end() ? 0 : off->second, &o.paths});
      }
    cr.paths = analysis::walk_critical_paths(path_ranks, cr.windows, cr.steps, kb.diagnostics);
    auto written = write_critical_path_outputs(plan.out_dir, cr.paths);
    if (!written.ok()) {
      s.status = "failed";
      s.error = written.status().to_string();
      return;
    }
    for (const auto& p : *written) s.outputs.push_back(p.string());
  }
  AlignmentTables tables;
  tables.steps = &cr.steps;
  tables.windows = &cr.windows;
  tables.operators = &cr.operators;
  tables.rank_ids = &cr.rank_ids;
  tables.rank_ordinals = &cr.rank_ordinals;
  tables.rules = &kb.operator_alignment;
  if (const Status st = write_alignment_tables(plan.out_dir, tables, &s.outputs); !st.ok()) {
    s.status = "failed";
    s.error = st.to_string();
    return;
  }
  std::vector<std::string> ids;
  for (const auto& o : outcomes)
    if (o.ok) ids.push_back(o.rank_id);
  JsonWriter w(true);
  w.begin_object();
  write_manifest_fields(w, stage_name(Stage::kCrossRank), plan.out_dir);
  w.key("files");
  w.begin_object();
  w.kv("cross_rank_alignment", layout::kCrossRankAlignmentCsv);
  w.kv("cross_rank_alignment_json", layout::kCrossRankAlignmentJson);
  w.end_object();
  w.key("counts");  // the reference's counts; the same numbers follow under our own names
  w.begin_object();
  w.kv("alignment_count", static_cast<uint64_t>(cr.steps.size() + cr.operators.alignments.size()));
  w.kv("operator_alignment_count", static_cast<uint64_t>(cr.operators.alignments.size()));
  w.kv("rank_count", static_cast<uint64_t>(ids.size()));
  w.kv("step_alignment_count", static_cast<uint64_t>(cr.steps.size()));
  w.end_object();
  w.kv("status", "ok");
  w.kv("alignment_count", static_cast<uint64_t>(cr.steps.size() + cr.operators.alignments.size()));
  w.kv("step_alignment_count", static_cast<uint64_t>(cr.steps.size()));
  w.kv("operator_alignment_count", static_cast<uint64_t>(cr.operators.alignments.size()));
  w.kv("operator_alignment_ranks", static_cast<uint64_t>(cr.operators.ranks));
  w.kv("rank_count", static_cast<uint64_t>(ids.size()));
  w.kv("reference_rank", ids.empty() ? std::string() : ids.front());
  w.kv("clock_offset_method", "median end-time difference of shared collectives (trace_view communication ops)");
  w.key("clock_offsets_us");
  w.begin_object();
  for (const auto& c : offsets) {
    w.key(c.rank_id);
    if (c.estimated) w.value(c.offset_us);
    else w.null();
  }
  w.end_object();
  w.key("clock_offsets");
  w.begin_array();
  for (const auto& c : offsets) {
    w.begin_object();
    w.kv("rank_id", c.rank_id);
    w.kv("estimated", c.estimated);
    w.key("offset_us");
    if (c.estimated) w.value(c.offset_us);
    else w.null();
    w.kv("collectives", uint64_t{c.collectives});
    w.kv("via_rank", c.via_rank);
    w.kv("spread_us", c.spread_us);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  const fs::path out = fs::path(plan.out_dir) / layout::kCrossRankManifestJson;
  record(s, out, write_file_atomic(out, w.take()));
}

// A root without the data of an optional table writes none, and removes one an earlier run into the
// same folder left (a report must not show it as this run's).
void remove_tables(const RootPlan& plan, const std::vector<std::string>& names, RootSummary& s) {
  if (const Status st = remove_files(plan.out_dir, names); !st.ok()) {
    s.status = "failed";
    s.error = st.to_string();
  }
}

// The in-kernel MoE trace tables, when any rank has a trace.
void record_moe_traces(const RootPlan& plan, const std::vector<RankOutcome>& outcomes, RootSummary& s) {
  const auto views = moe_views(outcomes);
  if (views.empty()) return remove_tables(plan, moe_trace_tables(), s);
  auto written = write_moe_trace_outputs(plan.out_dir, views);
  if (!written.ok()) {
    record(s, plan.out_dir, written.status());
    return;
  }
  for (const auto& p : *written) s.outputs.push_back(p.string());
}

// The module breakdown tables, when any rank has nn.Module ranges (else nothing new is written).
void record_modules(const RootPlan& plan, const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                    RootSummary& s) {
  std::vector<ModuleRankView> views;
  for (const auto& o : outcomes)
    if (o.ok && o.modules.present()) views.push_back({o.rank_id, &o.modules});
  if (views.empty()) return remove_tables(plan, module_tables(), s);
  auto written = write_module_outputs(plan.out_dir, views, kb.modules);
  if (!written.ok()) {
    record(s, plan.out_dir, written.status());
    return;
  }
  for (const auto& p : *written) s.outputs.push_back(p.string());
}

// diagnosis_findings.json: the ranks' findings (rank order) and the cross-rank ones, through the
// evidence gate (a finding without evidence is counted, not reported).
void record_findings(const RootPlan& plan, const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                     const CrossRank& cr, RootSummary& s) {
  const std::vector<model::Finding> findings = run_detectors(outcomes, kb, cr);
  uint64_t refused = 0;
  std::map<std::string, uint64_t> by_type;
  JsonWriter w(true);
  w.begin_object();
  w.kv("schema_version", int64_t{1});
  w.kv("tool_version", ASCPROF_VERSION);
  w.kv("analysis_stage", stage_name(Stage::kDiagnostics));
  w.kv("stage_status", "ok");
  w.key("diagnosis_findings");
  w.begin_array();
  for (const auto& f : findings) {
    if (!analysis::finding_is_traceable(f)) {
      ++refused;
      continue;
    }
    ++by_type[f.finding_type];
    w.begin_object();
    w.kv("claim_id", f.claim_id);
    w.kv("claim_type", f.finding_type);
    w.kv("finding_type", f.finding_type);
    w.kv("scope", f.scope);
    w.kv("summary", f.summary);
    w.kv("severity", f.severity);
    w.kv("confidence", f.confidence);
    for (const auto& [key, list] : {std::pair<const char*, const std::vector<std::string>*>{"rank_ids", &f.rank_ids},
                                    {"suspected_ranks", &f.suspected_ranks},
                                    {"alignment_ids", &f.alignment_ids},
                                    {"evidence_ids", &f.evidence_ids},
                                    {"counter_evidence_ids", &f.counter_evidence_ids},
                                    {"limitations", &f.limitations}}) {
      w.key(key);
      w.begin_array();
      for (const auto& v : *list) w.value(v);
      w.end_array();
    }
    w.kv("magnitude_ms", f.magnitude_ms);
    w.key("metrics");
    w.raw(f.metrics_json.empty() ? "{}" : f.metrics_json);
    w.end_object();
  }
  w.end_array();
  w.key("counts");
  w.begin_object();
  w.kv("finding_count", static_cast<uint64_t>(findings.size() - refused));
  w.kv("refused_without_evidence", refused);
  w.key("by_type");
  w.begin_object();
  for (const auto& [t, n] : by_type) w.kv(t, n);
  w.end_object();
  w.end_object();
  w.end_object();
  const fs::path out = fs::path(plan.out_dir) / layout::kDiagnosisFindingsJson;
  if (record(s, out, write_file_atomic(out, w.take()))) s.finding_count = findings.size() - refused;
}

// The summarize tables: the ranks' fragments concatenated in rank order, and the cross-rank class
// tables from the root's merged summaries (`merged`: wall quantiles set).
void record_summary_outputs(const RootPlan& plan, const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                            RootMerge& merged, const store::SectionCopyRunner& run_copies, RootSummary& s) {
  std::vector<SummaryPart> parts;
  for (const auto& o : outcomes)
    if (o.ok && !o.parts_file.empty()) {
      SummaryPart p{fs::path(plan.out_dir) / o.parts_file, o.rank_id, o.kernel_rows, o.pipeline_event_count, 0, 0};
      p.operators_total = o.operator_count;
      p.operators_with_pipeline_signal = o.operators_with_signal;
      parts.push_back(std::move(p));
    }
  if (parts.empty()) return;
  auto fail = [&s](const Status& st) {
    s.status = "failed";
    s.error = st.to_string();
  };
  // the cross-rank class tables first: summary_manifest.json counts their rows
  auto classes = write_root_class_summaries(plan.out_dir, merged.operator_classes.finish_operators(kb),
                                            merged.operator_classes.finish_hccl(), kb);
  if (!classes.ok()) return fail(classes.status());
  std::vector<fs::path> class_tables = *classes;
  auto structure_classes = write_root_structure_class_summaries(plan.out_dir, merged.classes.finish(kb), kb);
  if (!structure_classes.ok()) return fail(structure_classes.status());
  class_tables.insert(class_tables.end(), structure_classes->begin(), structure_classes->end());
  auto written = write_root_summary_outputs(plan.out_dir, parts, kb, class_tables, run_copies);
  if (!written.ok()) return fail(written.status());
  for (const auto& p : *written) s.outputs.push_back(p.string());
  for (const auto& p : class_tables) s.outputs.push_back(p.string());
}

// operator_deep_dive.csv/json: the root rows from `merged` (every rank's profiles), each rank's rows
// from its own first profiles (ranks that did not reach summarize have none and take no part).
void record_deep_dive(const RootPlan& plan, const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                      analysis::DeepDiveRootMerge& merged, RootSummary& s) {
  std::vector<analysis::RankProfilesRef> refs;
  for (const auto& o : outcomes)
    if (o.ok && !o.parts_file.empty())
      refs.push_back({o.rank_id, static_cast<uint32_t>(o.rank_index), &o.deep_dive});
  if (refs.empty()) return;
  const analysis::DeepDive dd = analysis::build_deep_dive(std::move(merged), refs, kb);
  auto written = write_deep_dive_outputs(plan.out_dir, plan.root, dd, kb);
  if (!written.ok()) {
    record(s, plan.out_dir, written.status());
    return;
  }
  for (const auto& p : *written) s.outputs.push_back(p.string());
}

}  // namespace

std::vector<analysis::ClockOffset> root_clock_offsets(const std::vector<RankOutcome>& outcomes) {
  std::vector<const RankOutcome*> ok;
  for (const auto& o : outcomes)
    if (o.ok) ok.push_back(&o);
  // rank order, whatever order the caller holds them in: the lowest rank is the reference clock
  std::stable_sort(ok.begin(), ok.end(), [](const RankOutcome* a, const RankOutcome* b) { return a->rank_index < b->rank_index; });
  std::vector<std::string> ids;
  std::vector<const analysis::CollectiveMarks*> marks;  // the outcomes' own (not copied)
  for (const auto* o : ok) {
    ids.push_back(o->rank_id);
    marks.push_back(&o->collectives);
  }
  return analysis::estimate_clock_offsets(ids, marks);
}

std::vector<int64_t> clock_offsets_ns(const std::vector<RankOutcome>& outcomes) {
  std::map<std::string, int64_t> by_rank;
  for (const auto& c : root_clock_offsets(outcomes))
    if (c.estimated) by_rank[c.rank_id] = static_cast<int64_t>(c.offset_us * 1000.0);
  std::vector<int64_t> out;
  for (const auto& o : outcomes) out.push_back(o.ok && by_rank.count(o.rank_id) ? by_rank[o.rank_id] : 0);
  return out;
}

void fold_rank_summaries(RankOutcome& o, RootMerge& into, analysis::ClassWalls& walls, const knowledge::Knowledge& kb) {
  if (!o.ok || o.parts_file.empty()) return;  // as record_summary_outputs: only ranks that reached summarize
  const auto ordinal = static_cast<uint32_t>(o.rank_index);
  into.classes.fold(ordinal, std::move(o.class_partials), walls, kb);
  o.class_partials = {};
  std::vector<model::OperatorRow> rows;
  rows.reserve(o.operators.size());
  for (auto& b : o.operators) {
    model::OperatorRow r;
    r.name = std::move(b.name);
    r.task_type = std::move(b.task_type);
    r.roles = std::move(b.roles);
    r.op_type = std::move(b.op_type);
    r.call_count = b.call_count;
    r.duration_sum_ns = b.duration_sum_ns;
    r.wait_sum_ns = b.wait_sum_ns;
    r.pipeline_signal = b.pipeline_signal;
    r.pipeline_us = std::move(b.pipeline_us);
    rows.push_back(std::move(r));
  }
  into.operator_classes.fold(ordinal, rows, o.hccl, kb);
  // freed, not cleared (`= {}` on a vector keeps its capacity: 260 MB of process 0's memory at
  // 10,000 ranks once its own outcomes moved into the gather instead of being copied)
  std::vector<OperatorBrief>().swap(o.operators);
  std::vector<model::HcclOpRow>().swap(o.hccl);
  into.deep_dive.fold(ordinal, o.rank_id, o.deep_dive, kb.deep_dive.evidence_rows);
  auto& profiles = o.deep_dive.profiles;  // sorted by total: the rank scope's candidates come first
  if (profiles.size() > kb.deep_dive.max_operators) {
    profiles.resize(kb.deep_dive.max_operators);
    profiles.shrink_to_fit();
  }
}

void merge_root_merges(RootMerge& into, RootMerge&& from, const knowledge::Knowledge& kb) {
  analysis::merge_bucket_merges(into.operators, std::move(from.operators), kb.operator_alignment);
  into.classes.merge(std::move(from.classes));
  into.operator_classes.merge(std::move(from.operator_classes));
  into.deep_dive.merge(std::move(from.deep_dive), kb.deep_dive.evidence_rows);
}

RootSummary write_root_outputs(const RootPlan& plan, std::vector<RankOutcome> outcomes, const knowledge::Knowledge& kb,
                               RootMerge* merged, const store::SectionCopyRunner& run_copies) {
  std::sort(outcomes.begin(), outcomes.end(),
            [](const RankOutcome& a, const RankOutcome& b) { return a.rank_index < b.rank_index; });
  RootSummary s;
  s.root = plan.root;
  s.slug = plan.slug;
  s.out_dir = plan.out_dir;
  if (!plan.ok) {
    s.status = "failed";
    s.error = plan.error;
    return s;
  }
  s.rank_count = outcomes.size() + plan.failed.size();
  for (const auto& f : plan.failed) {
    s.failed_ranks.push_back(f.rank_dir + ": " + f.error);
    s.failed_rank_classes.emplace_back("discovery");
  }
  for (const auto& o : outcomes) {
    s.rank_seconds += o.ingest_seconds + o.normalize_seconds + o.write_seconds + o.segment_seconds +
                      o.classify_seconds + o.summarize_seconds;
    if (o.ok) {
      ++s.ranks_ok;
      if (o.partial) s.partial_ranks.push_back(o.rank_dir);
      s.event_count += o.kernel_rows;
      s.pipeline_event_count += o.pipeline_event_count;
      s.trace_events += o.trace_events;
    } else {
      s.failed_ranks.push_back(o.rank_dir + ": " + o.error);
      s.failed_rank_classes.push_back(o.error_class);
    }
  }
  s.ranks_failed = s.rank_count - s.ranks_ok;
  // A communication-only rank leaves the root partial: its kernels are not in any table.
  s.status = s.ranks_ok == 0 ? "failed" : (s.ranks_failed > 0 || !s.partial_ranks.empty() ? "partial" : "ok");

  const fs::path out(plan.out_dir);
  record(s, out / layout::kNormalizeManifestJson, write_file_atomic(out / layout::kNormalizeManifestJson, normalize_manifest(plan, outcomes, s)));
  record(s, out / layout::kSourceIndexJson, write_file_atomic(out / layout::kSourceIndexJson, source_index(plan, outcomes)));
  record(s, out / layout::kAnalysisH5, write_analysis_h5(plan, outcomes));
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto t0 = Clock::now();
  if (s.ranks_ok > 0) record_structure_outputs(plan, outcomes, run_copies, s);
  s.structure_seconds = seconds(t0);
  t0 = Clock::now();
  // ranks analysed in this process (serial callers): their summaries folded here as the processes
  // fold theirs (analyze_run), so both paths write the same tables
  RootMerge local;
  RootMerge& summaries = merged != nullptr ? *merged : local;
  if (merged == nullptr) {
    analysis::ClassWalls walls;
    for (auto& o : outcomes) fold_rank_summaries(o, local, walls, kb);
    local.classes.set_wall_quantiles(analysis::class_wall_quantiles(
        local.classes.wall_requests(0), [&walls](int32_t) { return &walls; }, [](std::vector<uint64_t>&) {}));
  }
  if (s.ranks_ok > 0 && s.status != "failed") record_summary_outputs(plan, outcomes, kb, summaries, run_copies, s);
  if (s.ranks_ok > 0 && s.status != "failed") record_deep_dive(plan, outcomes, kb, summaries.deep_dive, s);
  if (s.ranks_ok > 0 && s.status != "failed") record_moe_traces(plan, outcomes, s);
  if (s.ranks_ok > 0 && s.status != "failed") record_modules(plan, outcomes, kb, s);
  // the operator profiles and module rows are written: nothing later reads them (at 10,000 ranks of
  // 215k kernel rows the profiles alone are ~400 MB of small blocks, handed back to the OS here)
  for (auto& o : outcomes) {
    o.deep_dive = {};
    o.modules = {};
  }
  return_freed_heap();
  s.summary_seconds = seconds(t0);
  t0 = Clock::now();
  // ranks analysed in this process (serial callers) still hold their candidates: fold them now
  if (merged == nullptr) {
    const auto offsets = clock_offsets_ns(outcomes);
    for (size_t i = 0; i < outcomes.size(); ++i)
      if (!outcomes[i].operator_buckets.built) fold_operator_buckets(outcomes[i], offsets[i], kb);
  }
  CrossRank cr;
  if (s.ranks_ok > 0 && s.status != "failed")
    record_cross_rank(plan, outcomes, kb, merged != nullptr ? &merged->operators : nullptr, cr, s);
  s.step_alignment_count = cr.steps.size();
  s.operator_alignment_count = cr.operators.alignments.size();
  s.cross_rank_seconds = seconds(t0);
  t0 = Clock::now();
  if (s.ranks_ok > 0 && s.status != "failed") record_findings(plan, outcomes, kb, cr, s);
  s.diagnostics_seconds = seconds(t0);
  return s;
}

}  // namespace ascprof::pipeline
