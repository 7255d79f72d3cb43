// Benchmark driver: ingest throughput and peak RSS of one rank's files, one measurement per
// process so peak RSS belongs to that measurement alone.
//
//   ingest_driver csv   FILE     kernel_details.csv importer
//   ingest_driver json  FILE     trace_view.json importer
//   ingest_driver db    FILE     ascend_pytorch_profiler_N.db: kernel rows (COMPUTE_TASK_INFO ⋈ TASK,
//                                COMMUNICATION_OP, TASK_PMU_INFO pivot), after its trace tables (STEP_TIME
//                                is needed for Step Id; the trace part is reported as its own line)
//   ingest_driver rank  RANKDIR OUTDIR [auto|text|db]   every rank-local stage of a whole rank folder (ingest, normalize,
//                                        segment, classify, summarize) with its HDF5 and CSV fragment writes;
//                                        ASCPROF_DEBUG_MEMORY=1 prints RSS / peak RSS / seconds per stage to stderr
//
// Prints one JSON line: {"what", "bytes", "seconds", "mb_per_s", "rows", "rows_per_s", "peak_rss_bytes", ...}.
// benchmarks/run_ingest.sh generates the input with `ascprof-mpi synth` (outside the timed region).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/common/allocator.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

void report(const char* what, uint64_t bytes, double seconds, uint64_t rows,
            const std::vector<std::pair<std::string, double>>& extra = {}) {
  ascprof::JsonWriter w;
  w.begin_object();
  w.kv("what", what);
  w.kv("bytes", bytes);
  w.kv("seconds", seconds);
  w.kv("mb_per_s", static_cast<double>(bytes) / 1e6 / seconds);
  w.kv("rows", rows);
  w.kv("rows_per_s", static_cast<double>(rows) / seconds);
  w.kv("peak_rss_bytes", peak_rss_bytes());
  w.kv("peak_rss_over_input", static_cast<double>(peak_rss_bytes()) / static_cast<double>(bytes));
  for (const auto& [key, value] : extra) w.kv(key, value);
  w.end_object();
  std::printf("%s\n", w.str().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  ascprof::keep_freed_heap_for_reuse();  // as the tool does
  if (argc < 3) {
    std::fprintf(stderr, "usage: ingest_driver csv FILE | json FILE | db FILE | rank RANKDIR OUTDIR [auto|text|db]\n");
    return 2;
  }
  const std::string what = argv[1];
  const fs::path path = argv[2];
  ascprof::Stats stats;
  if (what == "csv" || what == "json") {
    const uint64_t bytes = fs::file_size(path);
    ascprof::StringPool pool;
    const auto t0 = Clock::now();
    uint64_t rows = 0;
    if (what == "csv") {
      ascprof::model::KernelTable k;
      const auto st = ascprof::importers::import_kernel_details(path, pool, k, stats);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.to_string().c_str());
        return 1;
      }
      rows = k.size();
    } else {
      ascprof::model::TraceTables t;
      const auto st = ascprof::importers::import_trace_view(path, pool, t, stats);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.to_string().c_str());
        return 1;
      }
      rows = t.events_total;
    }
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    report(what == "csv" ? "kernel_details_csv" : "trace_view_json", bytes, secs, rows);
    return 0;
  }
  if (what == "db") {
    const uint64_t bytes = fs::file_size(path);
    ascprof::StringPool pool;
    ascprof::model::TraceTables t;
    auto t0 = Clock::now();
    auto st = ascprof::importers::import_db_trace(path, pool, t, stats);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 1;
    }
    const double trace_secs = std::chrono::duration<double>(Clock::now() - t0).count();
    report("profiler_db_trace", bytes, trace_secs, t.events_total);
    ascprof::model::KernelTable k;
    t0 = Clock::now();
    st = ascprof::importers::import_db_kernels(path, pool, t.steps, k, stats);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 1;
    }
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    report("profiler_db_kernels", bytes, secs, k.size(), {{"metric_columns", static_cast<double>(k.metrics.size())}});
    return 0;
  }
  if (what == "rank" && argc >= 4) {
    auto kb = ascprof::knowledge::Knowledge::load(ascprof::knowledge::default_knowledge_dir());
    if (!kb.ok()) {
      std::fprintf(stderr, "%s\n", kb.status().to_string().c_str());
      return 1;
    }
    ascprof::pipeline::SourceChoice source = ascprof::pipeline::SourceChoice::kAuto;
    if (argc >= 5 && !ascprof::pipeline::parse_source_choice(argv[4], &source)) {
      std::fprintf(stderr, "source must be auto, text or db\n");
      return 2;
    }
    auto plan = ascprof::pipeline::plan_root(path.string(), argv[3], 0, source);
    if (!plan.ok || plan.tasks.empty()) {
      std::fprintf(stderr, "no rank found: %s\n", plan.error.c_str());
      return 1;
    }
    const auto& task = plan.tasks.front();
    const auto t0 = Clock::now();
    const auto o = ascprof::pipeline::run_rank_stages(task, *kb);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!o.ok) {
      std::fprintf(stderr, "%s\n", o.error.c_str());
      return 1;
    }
    // input bytes: the files of the source that was read (the other export is not read)
    uint64_t read_bytes = 0;
    for (const auto& src : o.sources) read_bytes += src.size;
    report(o.source == "db" ? "rank_end_to_end_db" : "rank_end_to_end", read_bytes, secs, o.kernel_rows + o.trace_events,
           {{"ingest_seconds", o.ingest_seconds},
            {"normalize_seconds", o.normalize_seconds},
            {"segment_seconds", o.segment_seconds},
            {"classify_seconds", o.classify_seconds},
            {"summarize_seconds", o.summarize_seconds},
            {"h5_write_seconds", o.write_seconds}});
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", what.c_str());
  return 2;
}
