#include "critical_path_view.hpp"

#include <algorithm>
#include <vector>

#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

// Bounded like report.md's tables: a page stays light at thousands of ranks.
constexpr size_t kRankRows = 25, kStepRows = 25, kChainRows = 200;

void text(std::string& out, std::string_view s) {
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
}

void table(std::string& out, const char* id, const TextTable& t, const std::vector<size_t>& rows,
           const std::vector<std::pair<const char*, const char*>>& cols) {
  out += "<div class=\"scroll tbl\"><table id=\"";
  out += id;
  out += "\"><thead><tr>";
  for (const auto& c : cols) {
    out += "<th>";
    text(out, c.second);
    out += "</th>";
  }
  out += "</tr></thead><tbody>\n";
  for (const size_t r : rows) {
    out += "<tr>";
    for (const auto& c : cols) {
      out += "<td>";
      text(out, t.cell(r, c.first));
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

std::vector<size_t> first(size_t n, size_t cap) {
  std::vector<size_t> v(std::min(n, cap));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

}  // namespace

Result<std::string> critical_path_section_html(const fs::path& root_out) {
  std::error_code ec;
  if (!fs::exists(root_out / layout::kCriticalPathRanksCsv, ec)) return std::string();
  ASCPROF_ASSIGN_OR_RETURN(TextTable ranks, read_table(root_out / layout::kCriticalPathRanksCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable steps, read_table(root_out / layout::kCriticalPathStepsCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable chain, read_table(root_out / layout::kCriticalPathCsv));
  std::string out =
      "<section id=\"cp\"><h2>Critical path <span class=\"hint\">(what set each aligned step's wall time: walked back "
      "from its end, inside a rank to the task each task waited for, at each collective to the member that arrived "
      "last; kinds compute, transfer, waiting, host gap; µs on the reference rank's clock)</span></h2>\n";
  std::vector<size_t> order = first(ranks.rows.size(), ranks.rows.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranks.number(a, "share") > ranks.number(b, "share"); });
  if (order.size() > kRankRows) order.resize(kRankRows);
  out += "<h3>Each rank's share <span class=\"hint\">(" + std::to_string(order.size()) + " of " +
         std::to_string(ranks.rows.size()) + " ranks, largest share first; all in critical_path_ranks.csv)</span></h3>\n";
  table(out, "cp-ranks", ranks, order,
        {{"rank_id", "rank"}, {"share", "share"}, {"path_us", "on path µs"}, {"compute_us", "compute µs"},
         {"transfer_us", "transfer µs"}, {"host_gap_us", "host gap µs"}, {"waiting_us", "waiting µs"},
         {"steps_on_path", "steps on path"}, {"others_waited_us", "others waited µs"}});
  out += "<h3>Steps</h3>\n";
  table(out, "cp-steps", steps, first(steps.rows.size(), kStepRows),
        {{"alignment_id", "alignment"}, {"wall_us", "wall µs"}, {"walked_us", "walked µs"}, {"end_rank", "ended last"},
         {"compute_us", "compute µs"}, {"transfer_us", "transfer µs"}, {"host_gap_us", "host gap µs"},
         {"waiting_us", "waiting µs"}, {"ranks_on_path", "ranks on path"}, {"hops", "hops"}});
  // the chain of the longest step
  size_t longest = 0;
  for (size_t i = 1; i < steps.rows.size(); ++i)
    if (steps.number(i, "wall_us") > steps.number(longest, "wall_us")) longest = i;
  std::vector<size_t> rows;
  size_t total = 0;
  if (!steps.rows.empty())
    for (size_t i = 0; i < chain.rows.size(); ++i)
      if (chain.cell(i, "alignment_id") == steps.cell(longest, "alignment_id") && total++ < kChainRows) rows.push_back(i);
  out += "<h3>Chain of the longest step <span class=\"hint\">(";
  text(out, steps.rows.empty() ? std::string() : steps.cell(longest, "alignment_id"));
  out += ", " + std::to_string(rows.size()) + " of " + std::to_string(total) +
         " elements in time order; every step's chain in critical_path.csv)</span></h3>\n";
  table(out, "cp-chain", chain, rows,
        {{"position", "#"}, {"rank_id", "rank"}, {"kind", "kind"}, {"start_us", "start µs"}, {"dur_us", "µs"},
         {"kernels", "kernels"}, {"op_name", "op"}, {"waited_us", "first waited µs"}, {"evidence_id", "evidence"}});
  out += "</section>\n";
  return out;
}

}  // namespace ascprof::report
