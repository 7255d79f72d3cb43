#include "ascprof/report/moe_lanes.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "ascprof/report/tables.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

// One rank's /moe_trace tables, for call `call`.
Status place_call(const fs::path& h5, uint32_t call, MoeCallLanes& lanes) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(h5));
  ASCPROF_ASSIGN_OR_RETURN(store::TableData iv, r.read_table("/moe_trace/intervals"));
  ASCPROF_ASSIGN_OR_RETURN(store::TableData cores, r.read_table("/moe_trace/cores"));
  ASCPROF_ASSIGN_OR_RETURN(auto icall, iv.column<uint32_t>("call"));
  ASCPROF_ASSIGN_OR_RETURN(auto itype, iv.column<uint32_t>("core_type"));
  ASCPROF_ASSIGN_OR_RETURN(auto icore, iv.column<uint32_t>("core_id"));
  ASCPROF_ASSIGN_OR_RETURN(auto ilabel, iv.strings("label"));
  ASCPROF_ASSIGN_OR_RETURN(auto iindex, iv.column<int64_t>("index"));
  ASCPROF_ASSIGN_OR_RETURN(auto istart, iv.column<int64_t>("start_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto iend, iv.column<int64_t>("end_ns"));
  ASCPROF_ASSIGN_OR_RETURN(auto ccall, cores.column<uint32_t>("call"));
  ASCPROF_ASSIGN_OR_RETURN(auto ctype, cores.column<uint32_t>("core_type"));
  ASCPROF_ASSIGN_OR_RETURN(auto ccore, cores.column<uint32_t>("core_id"));
  ASCPROF_ASSIGN_OR_RETURN(auto ct0, cores.column<int64_t>("t0_cycles"));
  ASCPROF_ASSIGN_OR_RETURN(auto cdiv, cores.column<double>("cycles_per_us"));
  // each core's start on the row: by T0 when every core of the call has one
  std::map<std::pair<uint32_t, uint32_t>, double> shift_us;
  int64_t min_t0 = INT64_MAX;
  bool all_t0 = false;
  for (size_t i = 0; i < ccall.size(); ++i)
    if (ccall[i] == call) {
      all_t0 = (shift_us.empty() || all_t0) && ct0[i] >= 0;
      shift_us[{ctype[i], ccore[i]}] = 0;
      min_t0 = std::min(min_t0, ct0[i]);
    }
  if (all_t0)
    for (size_t i = 0; i < ccall.size(); ++i)
      if (ccall[i] == call && cdiv[i] > 0) shift_us[{ctype[i], ccore[i]}] = static_cast<double>(ct0[i] - min_t0) / cdiv[i];
  lanes.t0_aligned = all_t0;
  std::map<std::string, uint32_t> label_ix;
  for (uint32_t i = 0; i < lanes.labels.size(); ++i) label_ix[lanes.labels[i]] = i;
  for (size_t i = 0; i < icall.size(); ++i) {
    if (icall[i] != call) continue;
    auto [it, fresh] = label_ix.emplace(ilabel[i], static_cast<uint32_t>(lanes.labels.size()));
    if (fresh) {
      lanes.labels.push_back(ilabel[i]);
      lanes.roles.emplace_back("work");
    }
    const double base = shift_us[{itype[i], icore[i]}];
    lanes.intervals.push_back({itype[i], icore[i], it->second, iindex[i], base + static_cast<double>(istart[i]) / 1e3,
                               base + static_cast<double>(iend[i]) / 1e3});
  }
  return {};
}

}  // namespace

Result<std::vector<MoeCallLanes>> read_moe_lanes(const fs::path& root_out, const std::map<std::string, double>& offset_us) {
  std::vector<MoeCallLanes> out;
  std::error_code ec;
  if (!fs::exists(root_out / layout::kMoeTraceCallsCsv, ec)) return out;
  ASCPROF_ASSIGN_OR_RETURN(TextTable calls, read_table(root_out / layout::kMoeTraceCallsCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable phases, read_table(root_out / layout::kMoePhaseSummaryCsv));
  std::map<std::pair<std::string, std::string>, std::string> role;  // (rank, label) -> role
  std::map<std::pair<std::string, uint32_t>, std::string> group;    // (rank, core type) -> group
  for (size_t i = 0; i < phases.rows.size(); ++i) {
    role[{phases.cell(i, "rank_id"), phases.cell(i, "label")}] = phases.cell(i, "role");
    group[{phases.cell(i, "rank_id"), static_cast<uint32_t>(phases.number(i, "core_type"))}] = phases.cell(i, "core_group");
  }
  for (size_t i = 0; i < calls.rows.size(); ++i) {
    if (calls.cell(i, "status") != "attached") continue;
    MoeCallLanes lanes;
    lanes.rank_id = calls.cell(i, "rank_id");
    lanes.file = calls.cell(i, "file");
    lanes.kernel_event_id = calls.cell(i, "event_id");
    lanes.kernel_name = calls.cell(i, "kernel_name");
    const auto off = offset_us.find(lanes.rank_id);
    lanes.kernel_start_us = calls.number(i, "kernel_start_us") - (off == offset_us.end() ? 0.0 : off->second);
    lanes.kernel_end_us = lanes.kernel_start_us + calls.number(i, "kernel_duration_us");
    const fs::path h5 = root_out / layout::rank_h5(lanes.rank_id);
    ASCPROF_RETURN_IF_ERROR(place_call(h5, static_cast<uint32_t>(calls.number(i, "call")), lanes));
    for (size_t l = 0; l < lanes.labels.size(); ++l)
      if (auto r = role.find({lanes.rank_id, lanes.labels[l]}); r != role.end()) lanes.roles[l] = r->second;
    uint32_t types = 0;
    for (const auto& iv : lanes.intervals) types = std::max(types, iv.core_type + 1);
    for (uint32_t t = 0; t < types; ++t) {
      auto g = group.find({lanes.rank_id, t});
      lanes.core_groups.push_back(g == group.end() ? "type" + std::to_string(t) : g->second);
    }
    std::sort(lanes.intervals.begin(), lanes.intervals.end(), [](const MoeLaneInterval& a, const MoeLaneInterval& b) {
      return std::tie(a.core_type, a.core_id, a.start_us) < std::tie(b.core_type, b.core_id, b.start_us);
    });
    out.push_back(std::move(lanes));
  }
  return out;
}

}  // namespace ascprof::report
