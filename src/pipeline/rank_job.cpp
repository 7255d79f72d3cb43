#include "ascprof/pipeline/rank_job.hpp"

#include <chrono>
#include <exception>
#include <filesystem>

#include "ascprof/importers/capture_info.hpp"
#include "ascprof/importers/communication.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/step_trace_time.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "rank_data.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void fail(RankOutcome& out, const Status& s) {
  out.ok = false;
  out.error_class = error_code_name(s.code());
  out.error = s.message();
}

// Reads every file of the rank. Optional files that are absent are simply skipped; a present
// file that cannot be read at all fails the rank (other ranks go on).
Status ingest(const RankTask& task, RankData& d) {
  auto add_source = [&d](const std::string& kind, const std::string& path) -> Status {
    auto fp = store::fingerprint_file(path);
    if (!fp.ok()) return fp.status();
    d.fingerprints.push_back(*fp);
    d.fingerprint_kinds.push_back(kind);
    return {};
  };
  if (task.kernel_details.empty())
    return file_error(ErrorCode::kSchema, task.rank_path, "", "no kernel_details.csv in this rank folder");
  ASCPROF_RETURN_IF_ERROR(add_source("kernel_details_csv", task.kernel_details));
  ASCPROF_RETURN_IF_ERROR(importers::import_kernel_details(task.kernel_details, d.pool, d.kernels, d.stats));
  if (!task.profiler_info.empty()) {
    ASCPROF_RETURN_IF_ERROR(add_source("profiler_info_json", task.profiler_info));
    auto info = importers::read_profiler_info(task.profiler_info, d.stats);
    if (!info.ok()) return info.status();
    d.info = std::move(info).value();
  }
  if (!task.profiler_metadata.empty()) {
    ASCPROF_RETURN_IF_ERROR(add_source("profiler_metadata_json", task.profiler_metadata));
    auto meta = importers::read_profiler_metadata(task.profiler_metadata, d.stats);
    if (!meta.ok()) return meta.status();
    d.meta = std::move(meta).value();
  }
  if (!task.trace_view.empty()) {
    ASCPROF_RETURN_IF_ERROR(add_source("trace_view_json", task.trace_view));
    ASCPROF_RETURN_IF_ERROR(importers::import_trace_view(task.trace_view, d.pool, d.trace, d.stats));
  }
  if (!task.communication.empty()) {
    ASCPROF_RETURN_IF_ERROR(add_source("communication_json", task.communication));
    ASCPROF_RETURN_IF_ERROR(importers::import_communication(task.communication, d.pool, d.comm, d.stats));
    d.comm_group = importers::link_groups(d.comm, d.meta, d.stats, task.communication);
  }
  if (!task.step_trace_time.empty()) {
    ASCPROF_RETURN_IF_ERROR(add_source("step_trace_time_csv", task.step_trace_time));
    ASCPROF_RETURN_IF_ERROR(importers::import_step_trace_time(task.step_trace_time, d.step_trace, d.stats));
  }
  return {};
}

}  // namespace

RankOutcome run_rank_normalize(const RankTask& task, const knowledge::Knowledge& kb, const RankJobOptions& opts) {
  RankOutcome out;
  out.rank_id = task.rank_id;
  out.rank_dir = task.rank_dir;
  out.rank_path = task.rank_path;
  out.rank_id_source = task.rank_id_source;
  out.root_index = task.root_index;
  out.rank_index = task.rank_index;
  out.input_bytes = task.input_bytes;
  out.device_id = task.device_id;
  try {
    auto d = std::make_unique<RankData>();
    auto t0 = std::chrono::steady_clock::now();
    const Status st = ingest(task, *d);
    out.ingest_seconds = seconds_since(t0);
    for (size_t i = 0; i < d->fingerprints.size(); ++i) {
      const auto& fp = d->fingerprints[i];
      out.sources.push_back({d->fingerprint_kinds[i], fp.path, fp.size, fp.mtime_ns, fp.prefix_hash});
    }
    out.stats_json = d->stats.to_json();
    if (!st.ok()) {
      fail(out, st);
      return out;
    }
    t0 = std::chrono::steady_clock::now();
    const analysis::NormalizedKernels norm = analysis::normalize_kernels(d->kernels, d->pool, kb, d->stats);
    out.normalize_seconds = seconds_since(t0);

    out.kernel_rows = d->kernels.size();
    out.pipeline_event_count = norm.pipeline_event_count;
    out.start_ns = norm.start_ns;
    out.end_ns = norm.end_ns;
    out.header_era = d->kernels.header.era;
    out.trace_events = d->trace.events_total;
    out.host_ops = d->trace.host_ops.size();
    out.device_tasks = d->trace.device_tasks.size();
    out.comm_ops = d->trace.comm_ops.size();
    out.comm_plane_tasks = d->trace.comm_plane_tasks.size();
    out.overlap_intervals = d->trace.overlap.size();
    out.flows = d->trace.flows.size();
    out.profiler_steps = d->trace.steps.size();
    out.damaged_spans = d->trace.damaged_spans.size();
    out.comm_stat_rows = d->comm.size();
    out.step_trace_rows = d->step_trace.size();
    out.parallel_groups = d->meta.groups.size();
    if (d->info) out.profiler_level = d->info->profiler_level;
    if (out.device_id < 0 && !d->kernels.device_id.empty() && d->kernels.device_id[0] >= 0)
      out.device_id = d->kernels.device_id[0];

    if (opts.write_h5) {
      t0 = std::chrono::steady_clock::now();
      out.h5_file = "ranks/" + task.rank_id + ".h5";
      const Status ws = write_rank_h5((fs::path(task.root_out) / out.h5_file).string(), task, *d, norm, kb);
      out.write_seconds = seconds_since(t0);
      if (!ws.ok()) {
        out.stats_json = d->stats.to_json();
        fail(out, ws);
        return out;
      }
    }
    out.stats_json = d->stats.to_json();
    out.data_loss_records = d->stats.total(StatSeverity::kDataLoss);
    out.warning_records = d->stats.total(StatSeverity::kWarning);
    out.ok = true;
  } catch (const std::bad_alloc&) {
    fail(out, Status(ErrorCode::kLimit, task.rank_path + ": out of memory while analysing this rank"));
  } catch (const std::exception& e) {
    fail(out, Status(ErrorCode::kInternal, task.rank_path + ": " + e.what()));
  }
  return out;
}

}  // namespace ascprof::pipeline
