// The result object of `analyze` (analyze_result.hpp).
#include "analyze_result.hpp"

#include <algorithm>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/json_writer.hpp"

namespace ascprof::parallel {

AnalyzeVerdict analyze_verdict(const std::vector<pipeline::RootSummary>& summaries) {
  uint64_t ranks_ok = 0, ranks_failed = 0, roots_ok = 0, hard_errors = 0, islands = 0;
  for (const auto& s : summaries) {
    ranks_ok += s.ranks_ok;
    ranks_failed += s.ranks_failed;
    hard_errors += s.structure.hard_error_count;
    islands += s.structure.interior_island_total;
    if (s.status == "ok") ++roots_ok;
  }
  const bool nothing = ranks_ok == 0;
  const bool partial = !nothing && (ranks_failed > 0 || roots_ok != summaries.size());
  // Like the reference's wrapper, a structure with hard errors is not a clean result: everything is
  // written (segment_manifest.json lists the errors) but the exit code says so.
  const bool structure_errors = !nothing && !partial && (hard_errors > 0 || islands > 0);
  if (nothing) return {"failed", 3};
  if (partial) return {"partial", 1};
  if (structure_errors) return {"structure_errors", 4};
  return {"ok", 0};
}

std::string analyze_result_json(const AnalyzeFigures& f, const std::vector<pipeline::RootSummary>& summaries,
                                const std::string& out) {
  uint64_t payload_total = 0, bucket_total = 0;
  for (uint64_t b : f.payloads) payload_total += b;
  for (uint64_t b : f.bucket_payloads) bucket_total += b;
  uint64_t deep_dive_total = 0;
  for (uint64_t b : f.deep_dive_payloads) deep_dive_total += b;
  double work_max = 0;
  for (double s : f.work_seconds) work_max = std::max(work_max, s);

  std::map<std::string, uint64_t> status_counts;
  uint64_t ranks_ok = 0, ranks_failed = 0, ranks_partial = 0, events = 0, trace_events = 0, hard_errors = 0, islands = 0;
  for (const auto& s : summaries) {
    ranks_ok += s.ranks_ok;
    ranks_failed += s.ranks_failed;
    ranks_partial += s.partial_ranks.size();
    events += s.event_count;
    trace_events += s.trace_events;
    hard_errors += s.structure.hard_error_count;
    islands += s.structure.interior_island_total;
    ++status_counts[s.status];
  }

  JsonWriter w;
  w.begin_object();
  w.kv("status", analyze_verdict(summaries).status);
  w.kv("command", "analyze");
  w.kv("processes", static_cast<int64_t>(f.processes));
  w.kv("root_count", static_cast<uint64_t>(summaries.size()));
  w.kv("rank_count", ranks_ok);
  w.kv("ranks_failed", ranks_failed);
  w.kv("ranks_partial", ranks_partial);
  w.kv("event_count", events);
  w.kv("trace_event_count", trace_events);
  w.kv("hard_error_count", hard_errors);
  w.kv("interior_island_total", islands);
  w.key("stages_executed");
  w.begin_array();
  for (const auto st : f.stages) w.value(pipeline::stage_name(st));
  w.end_array();
  w.key("stages_partial");  // written, but only part of the stage exists (see each file's stage_status)
  w.begin_array();
  w.end_array();
  w.key("stages_not_available");  // stages not built yet, said plainly (none today: resume works since issue 6)
  w.begin_array();
  w.end_array();
  if (f.reporting) w.kv("html_status", f.html_status.empty() ? "skipped" : f.html_status);
  w.key("stage_timings");
  w.begin_object();
  w.kv("discover", f.discover);
  w.kv("rank_jobs", work_max);         // slowest process: ingest + normalize + segment + classify + HDF5
  w.kv("ingest_cpu", f.ingest_cpu);      // summed over ranks: reading the input files
  w.kv("normalize_cpu", f.normalize_cpu);
  w.kv("write_cpu", f.write_cpu);        // HDF5 and CSV fragments of the ranks
  w.kv("segment_cpu", f.segment_cpu);    // summed over ranks
  w.kv("classify_cpu", f.classify_cpu);  // summed over ranks
  w.kv("summarize_cpu", f.summarize_cpu);  // summed over ranks
  w.kv("gather", f.gather);
  w.kv("root_outputs", f.root_outputs);  // coordinator, all roots; split below
  double structure = 0, summary = 0, cross = 0, diag = 0;
  for (const auto& r : summaries) {
    structure += r.structure_seconds;
    summary += r.summary_seconds;
    cross += r.cross_rank_seconds;
    diag += r.diagnostics_seconds;
  }
  w.kv("root_structure", structure);
  w.kv("root_summary", summary);
  w.kv("root_cross_rank", cross);
  w.kv("root_diagnostics", diag);
  w.kv("report", f.report);  // wall time of the report stage; its parts' busy seconds below
  for (const auto& [part, secs] : f.report_part_seconds) w.kv("report_" + part + "_cpu", secs);
  w.kv("total", f.total);
  w.end_object();
  w.key("gathered_bytes");
  w.begin_object();
  w.kv("total", payload_total);
  w.kv("per_rank", f.outcome_count ? static_cast<double>(payload_total) / static_cast<double>(f.outcome_count) : 0.0);
  w.kv("operator_buckets_per_rank",  // bytes sent up the buckets' reduction tree, within per_rank
       f.outcome_count ? static_cast<double>(bucket_total) / static_cast<double>(f.outcome_count) : 0.0);
  w.kv("deep_dive_per_rank",  // operator profiles inside the first round's outcomes
       f.outcome_count ? static_cast<double>(deep_dive_total) / static_cast<double>(f.outcome_count) : 0.0);
  w.end_object();
  w.kv("output_dir", out);
  w.kv("scheduling", f.scheduling);  // dynamic: a process takes the next largest rank when it finishes
  w.kv("ranks_reused", f.ranks_reused);
  // per process: seconds inside rank jobs, and that as a share of the slowest process's rank phase
  w.key("process_busy");
  w.begin_array();
  for (size_t p = 0; p < f.busy_seconds.size(); ++p) {
    w.begin_object();
    w.kv("process", static_cast<uint64_t>(p));
    w.kv("busy_s", f.busy_seconds[p]);
    w.kv("busy_share", work_max > 0 ? f.busy_seconds[p] / work_max : 0.0);
    w.kv("report_busy_s", p < f.report_busy.size() ? f.report_busy[p] : 0.0);  // reports it wrote
    w.kv("report_busy_share", f.report > 0 && p < f.report_busy.size() ? f.report_busy[p] / f.report : 0.0);
    w.end_object();
  }
  w.end_array();
  w.key("status_counts");
  w.begin_object();
  for (const auto& [k, v] : status_counts) w.kv(k, v);
  w.end_object();
  w.key("roots");
  w.begin_array();
  for (const auto& s : summaries) {
    w.begin_object();
    w.kv("root", s.root);
    w.kv("out_dir", s.out_dir);
    w.kv("status", s.status);
    if (!s.error.empty()) w.kv("error", s.error);
    w.kv("rank_count", s.rank_count);
    w.kv("ranks_ok", s.ranks_ok);
    w.kv("ranks_failed", s.ranks_failed);
    w.kv("event_count", s.event_count);
    w.kv("step_count", s.structure.step_count);
    w.kv("layer_count", s.structure.layer_count);
    w.kv("block_count", s.structure.block_count);
    w.kv("hard_error_count", s.structure.hard_error_count);
    w.kv("interior_island_total", s.structure.interior_island_total);
    w.kv("step_classes", s.structure.step_classes);
    w.kv("layer_classes", s.structure.layer_classes);
    w.kv("block_classes", s.structure.block_classes);
    w.kv("finding_count", s.finding_count);
    w.kv("step_alignment_count", s.step_alignment_count);
    w.kv("operator_alignment_count", s.operator_alignment_count);
    w.key("failed_ranks");
    w.begin_array();
    for (const auto& id : s.failed_ranks) w.value(id);
    w.end_array();
    w.key("failed_rank_classes");  // parallel to failed_ranks
    w.begin_array();
    for (const auto& c : s.failed_rank_classes) w.value(c);
    w.end_array();
    w.key("partial_ranks");  // analysed from communication data only (no kernel table)
    w.begin_array();
    for (const auto& id : s.partial_ranks) w.value(id);
    w.end_array();
    w.key("outputs");
    w.begin_array();
    for (const auto& file : s.outputs) w.value(file);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("failed_roots");
  w.begin_array();
  for (const auto& s : summaries)
    if (s.status == "failed") w.value(s.root);
  w.end_array();
  w.end_object();
  return w.take();
}

void note_rank_ends(const std::vector<pipeline::RankOutcome>& outcomes, RankEnds& ends) {
  for (const auto& o : outcomes) {
    RankEnd e;
    if (o.ok) e.kind = RankEnd::kDone;
    else if (o.error_class != error_code_name(ErrorCode::kInterrupted)) e = {RankEnd::kFailed, o.error};
    ends[{o.root_index, o.rank_index}] = std::move(e);
  }
}

// The stdout object of an interrupted run (process 0).
std::string interrupted_result_json(const std::vector<pipeline::RootPlan>& plans, const RankEnds& ends,
                                    std::string_view stage, int processes, const std::string& out, double seconds) {
  JsonWriter w;
  w.begin_object();
  w.kv("status", "interrupted");
  w.kv("command", "analyze");
  w.kv("signal", signal_name(interrupt_signal()));
  w.kv("stage", stage);  // where the stop found the run
  w.kv("processes", static_cast<int64_t>(processes));
  w.kv("output_dir", out);
  w.kv("resume", "rerun the same command into the same output folder: finished ranks are taken from their checkpoints");
  uint64_t counts[3] = {0, 0, 0};
  JsonWriter lists[3];  // done, not done, failed
  for (auto& l : lists) l.begin_array();
  for (const auto& plan : plans)
    for (const auto& task : plan.tasks) {
      const auto it = ends.find({plan.root_index, task.rank_index});
      const RankEnd& e = it == ends.end() ? RankEnd{} : it->second;
      ++counts[e.kind];
      JsonWriter& l = lists[e.kind];
      l.begin_object();
      l.kv("root", plan.root);
      l.kv("rank_id", task.rank_id);
      l.kv("rank_dir", task.rank_dir);
      if (e.kind == RankEnd::kFailed) l.kv("error", e.error);
      l.end_object();
    }
  const char* const names[] = {"ranks_done", "ranks_not_done", "ranks_failed"};
  for (int i = 0; i < 3; ++i) w.kv(std::string(names[i]) + "_count", counts[i]);
  for (int i = 0; i < 3; ++i) {
    lists[i].end_array();
    w.key(names[i]);
    w.raw(lists[i].str());
  }
  w.key("stage_timings");
  w.begin_object();
  w.kv("total", seconds);
  w.end_object();
  w.end_object();
  return w.take();
}

}  // namespace ascprof::parallel
