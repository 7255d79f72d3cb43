#include "ascprof/pipeline/module_outputs.hpp"

#include <algorithm>
#include <map>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// part / whole with 6 decimals, or an empty cell when the whole is 0
void share(CsvRow& row, int64_t part, int64_t whole) {
  if (whole > 0) row.number(static_cast<double>(part) / static_cast<double>(whole), 6);
  else row.empty();
}

std::string summary_table(const std::vector<ModuleRankView>& ranks) {
  std::string out = csv_header({"rank_id", "module_path", "module", "depth", "calls", "host_us", "self_device_us",
                                "total_device_us", "self_tasks", "tasks", "self_wait_us", "total_wait_us",
                                "share_of_rank_device"});
  CsvRow row;
  for (const auto& v : ranks)
    for (const auto& m : v.summary->rows) {
      row.text(v.rank_id).text(m.path).text(m.module).number(static_cast<uint64_t>(m.depth)).number(m.calls);
      row.number(us(m.host_ns), 3).number(us(m.self_device_ns), 3).number(us(m.total_device_ns), 3);
      row.number(m.self_tasks).number(m.tasks).number(us(m.self_wait_ns), 3).number(us(m.total_wait_ns), 3);
      share(row, m.total_device_ns, v.summary->device_ns);
      out += row.take_line();
    }
  return out;
}

std::string ranks_table(const std::vector<ModuleRankView>& ranks) {
  std::string out = csv_header({"rank_id", "ranges", "threads", "modules", "tasks", "device_us", "module_tasks",
                                "module_device_us", "module_share", "outside_tasks", "outside_device_us",
                                "unlaunched_tasks", "unlaunched_device_us", "placed_by_launch_thread",
                                "placed_by_task_queue", "placed_by_torch_op", "improperly_nested"});
  CsvRow row;
  for (const auto& v : ranks) {
    const auto& s = *v.summary;
    row.text(v.rank_id).number(s.ranges).number(static_cast<uint64_t>(s.threads)).number(static_cast<uint64_t>(s.rows.size()));
    row.number(s.tasks).number(us(s.device_ns), 3).number(s.module_tasks).number(us(s.module_ns), 3);
    share(row, s.module_ns, s.device_ns);
    row.number(s.outside_tasks).number(us(s.outside_ns), 3).number(s.unlaunched_tasks).number(us(s.unlaunched_ns), 3);
    row.number(s.by_launch_thread).number(s.by_task_queue).number(s.by_torch_op).number(s.improperly_nested);
    out += row.take_line();
  }
  return out;
}

std::string compare_table(const std::vector<ModuleRankView>& ranks, const knowledge::ModuleRules& rules) {
  struct Member {
    const analysis::ModuleRow* row;
    const std::string* rank;
  };
  // path -> members in rank order; paths in the order they are first met (rank order, module order)
  std::map<std::string, size_t> index;
  std::vector<std::vector<Member>> same;
  for (const auto& v : ranks)
    for (const auto& m : v.summary->rows) {
      auto [it, fresh] = index.emplace(m.path, same.size());
      if (fresh) same.emplace_back();
      same[it->second].push_back({&m, &v.rank_id});
    }
  std::string out = csv_header({"module_path", "module", "depth", "ranks", "total_device_us_min", "total_device_us_median",
                                "total_device_us_max", "slowest_rank", "fastest_rank", "slowest_to_median", "calls_min",
                                "calls_max", "self_device_us_median", "busy_us_median", "busy_us_max", "busiest_rank",
                                "busiest_to_median", "stands_out"});
  CsvRow row;
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::vector<int64_t> total, self, busy;
  for (const auto& members : same) {
    const auto& m0 = *members.front().row;
    total.clear();
    self.clear();
    busy.clear();
    // the first rank wins ties (rank order)
    const Member *slowest = &members.front(), *fastest = &members.front(), *busiest = &members.front();
    uint64_t calls_min = m0.calls, calls_max = m0.calls;
    for (const auto& m : members) {
      total.push_back(m.row->total_device_ns);
      self.push_back(m.row->self_device_ns);
      busy.push_back(m.row->busy_ns());
      if (m.row->total_device_ns > slowest->row->total_device_ns) slowest = &m;
      if (m.row->total_device_ns < fastest->row->total_device_ns) fastest = &m;
      if (m.row->busy_ns() > busiest->row->busy_ns()) busiest = &m;
      calls_min = std::min(calls_min, m.row->calls);
      calls_max = std::max(calls_max, m.row->calls);
    }
    const int64_t med = median(total), busy_med = median(busy), busy_max = busiest->row->busy_ns();
    row.text(m0.path).text(m0.module).number(static_cast<uint64_t>(m0.depth)).number(static_cast<uint64_t>(members.size()));
    row.number(us(fastest->row->total_device_ns), 3).number(us(med), 3).number(us(slowest->row->total_device_ns), 3);
    row.text(*slowest->rank).text(*fastest->rank);
    share(row, slowest->row->total_device_ns, med);
    row.number(calls_min).number(calls_max).number(us(median(self)), 3);
    row.number(us(busy_med), 3).number(us(busy_max), 3).text(*busiest->rank);
    share(row, busy_max, busy_med);
    // a rank that waits for a slow peer is not slow itself: compared on busy time
    row.boolean(members.size() >= 2 && busy_med > 0 && us(busy_max) >= rules.min_device_us &&
                static_cast<double>(busy_max) >= rules.spread_ratio * static_cast<double>(busy_med));
    out += row.take_line();
  }
  return out;
}

}  // namespace

const std::vector<std::string>& module_tables() {
  static const std::vector<std::string> t = {layout::kModuleSummaryCsv, layout::kModuleRanksCsv, layout::kModuleCompareCsv};
  return t;
}

Result<std::vector<fs::path>> write_module_outputs(const fs::path& root_out, const std::vector<ModuleRankView>& ranks,
                                                   const knowledge::ModuleRules& rules) {
  return write_files_atomic(root_out, module_tables(),
                            {summary_table(ranks), ranks_table(ranks), compare_table(ranks, rules)});
}

}  // namespace ascprof::pipeline
