#include "ascprof/report/module_lanes.hpp"

#include <set>

#include "ascprof/report/tables.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

Status read_rank(const fs::path& h5, ModuleLanes& lanes) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(h5));
  ASCPROF_ASSIGN_OR_RETURN(store::TableData summary, r.read_table("/modules/summary"));
  ASCPROF_ASSIGN_OR_RETURN(store::TableData calls, r.read_table("/modules/calls"));
  ASCPROF_ASSIGN_OR_RETURN(lanes.paths, summary.strings("module_path"));
  ASCPROF_ASSIGN_OR_RETURN(lanes.names, summary.strings("module"));
  ASCPROF_ASSIGN_OR_RETURN(auto row, calls.column<uint32_t>("row"));
  ASCPROF_ASSIGN_OR_RETURN(auto tid, calls.column<int64_t>("tid"));
  ASCPROF_ASSIGN_OR_RETURN(auto start, calls.column<int64_t>("start_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto end, calls.column<int64_t>("end_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto self, calls.column<int64_t>("self_device_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto total, calls.column<int64_t>("total_device_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto tasks, calls.column<uint64_t>("tasks"));
  std::set<int64_t> tids;
  lanes.calls.reserve(row.size());
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] >= lanes.paths.size())
      return Status(ErrorCode::kSchema, h5.string() + ":/modules/calls: row " + std::to_string(i) + " names no module");
    tids.insert(tid[i]);
    lanes.calls.push_back({tid[i], start[i], end[i], row[i], static_cast<double>(self[i]) / 1e3,
                           static_cast<double>(total[i]) / 1e3, tasks[i]});
  }
  lanes.threads = tids.size();
  return {};
}

}  // namespace

Result<std::vector<ModuleLanes>> read_module_lanes(const fs::path& root_out) {
  std::vector<ModuleLanes> out;
  std::error_code ec;
  if (!fs::exists(root_out / layout::kModuleSummaryCsv, ec)) return out;
  ASCPROF_ASSIGN_OR_RETURN(TextTable summary, read_table(root_out / layout::kModuleSummaryCsv));
  std::vector<std::string> ranks;  // in the table's (rank) order
  for (size_t i = 0; i < summary.rows.size(); ++i)
    if (ranks.empty() || ranks.back() != summary.cell(i, "rank_id")) ranks.push_back(summary.cell(i, "rank_id"));
  for (const std::string& rank : ranks) {
    ModuleLanes lanes;
    lanes.rank_id = rank;
    ASCPROF_RETURN_IF_ERROR(read_rank(root_out / layout::rank_h5(rank), lanes));
    out.push_back(std::move(lanes));
  }
  return out;
}

}  // namespace ascprof::report
