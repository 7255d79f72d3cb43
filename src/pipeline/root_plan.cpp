#include "ascprof/pipeline/root_plan.hpp"

#include <filesystem>

#include "ascprof/common/stats.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/moe_trace.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {
std::vector<uint64_t> counts_of(const Stats& s) {
  std::vector<uint64_t> out(kStatCount);
  for (size_t i = 0; i < kStatCount; ++i) out[i] = s.count(static_cast<Stat>(i));
  return out;
}
}  // namespace

bool parse_source_choice(std::string_view text, SourceChoice* out) {
  if (text == "auto") *out = SourceChoice::kAuto;
  else if (text == "text") *out = SourceChoice::kText;
  else if (text == "db") *out = SourceChoice::kDb;
  else return false;
  return true;
}

namespace {
// The export a rank is read from; the other export's table files are dropped from the task.
void choose_source(RankTask& t, SourceChoice choice) {
  std::error_code ec;
  const bool usable_text = !t.kernel_details.empty() && fs::file_size(t.kernel_details, ec) > 0 && !ec;
  const bool db = choice == SourceChoice::kDb || (choice == SourceChoice::kAuto && !usable_text && !t.profiler_db.empty());
  t.source = db ? "db" : "text";
  if (db) {
    t.kernel_details.clear();
    t.trace_view.clear();
    t.communication.clear();
    t.step_trace_time.clear();
  } else if (choice == SourceChoice::kText || !t.kernel_details.empty()) {
    // --source text reads no database; a text rank without kernel_details.csv keeps the name of its
    // database only for the error message. (auto: a rank with neither table keeps analysis.db, to be
    // analysed from its communication data alone.)
    if (choice != SourceChoice::kText || !t.kernel_details.empty()) t.profiler_db.clear();
    t.analysis_db.clear();
  }
}
}  // namespace

RootPlan plan_root(const std::string& root, const std::string& out, int32_t root_index, SourceChoice source,
                   std::string_view moe_trace_folder) {
  RootPlan plan;
  plan.root_index = root_index;
  plan.root = root;
  plan.slug = layout::root_slug(root);
  plan.out_dir = (fs::path(out) / plan.slug).string();
  Stats stats;
  auto found = importers::discover_capture_root(root, stats);
  plan.stat_counts = counts_of(stats);
  plan.stats_json = stats.to_json();
  if (!found.ok()) {
    plan.ok = false;
    plan.error_class = error_code_name(found.status().code());
    plan.error = found.status().message();
    return plan;
  }
  const importers::CaptureRoot& cr = *found;
  int32_t index = 0;
  for (const auto& r : cr.ranks) {
    RankTask t;
    t.root = root;
    t.root_out = plan.out_dir;
    t.rank_id = r.rank_id;
    t.rank_number = r.rank_number.value_or(-1);
    t.rank_dir = r.rank_dir;
    t.rank_path = r.path.string();
    t.rank_id_source = importers::rank_id_source_name(r.id_source);
    t.device_id = r.device_id.value_or(-1);
    t.kernel_details = r.files.kernel_details.string();
    t.trace_view = r.files.trace_view.string();
    t.communication = r.files.communication.string();
    t.step_trace_time = r.files.step_trace_time.string();
    t.op_statistic = r.files.op_statistic.string();
    t.api_statistic = r.files.api_statistic.string();
    t.profiler_info = r.files.profiler_info.string();
    t.profiler_metadata = r.files.profiler_metadata.string();
    t.profiler_db = r.files.profiler_db.string();
    t.analysis_db = r.files.analysis_db.string();
    choose_source(t, source);
    t.input_bytes = r.input_bytes;
    if (!moe_trace_folder.empty())
      for (const auto& f : importers::find_moe_traces(r.path, moe_trace_folder)) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(f, ec);
        t.input_bytes += ec ? 0 : size;
        t.moe_traces.push_back(f.string());
      }
    t.root_index = root_index;
    t.rank_index = index++;
    plan.tasks.push_back(std::move(t));
  }
  for (const auto& f : cr.failed) plan.failed.push_back({f.rank_id, f.rank_dir, f.path.string(), f.error});
  for (const auto& d : cr.duplicates)
    plan.duplicates.push_back({d.rank_id, d.kept.string(), d.dropped.string(), d.reason});
  plan.missing_rank_ids = cr.missing_rank_ids;
  return plan;
}

}  // namespace ascprof::pipeline
