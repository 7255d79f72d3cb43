// report.md (reference-analysis.md §2.9): the reference's twelve sections in its order, with the
// operator deep dive (issue 9) after the operator view, then the sections for what the reference
// does not have (clock offsets, slow rank/link, host-bound time, training phases, and when the root has
// them the in-kernel MoE traces and the nn.Module breakdown). Every number is either a cell copied from a table or an aggregate of one table
// column whose rule the text states, so the report always agrees with the CSV/HDF5 tables.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ascprof/common/join.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/report/moe_tables.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "deep_dive_view.hpp"
#include "findings_reader.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

// Markdown cell text: input strings (kernel names, paths) must not break the table or inject HTML.
std::string md(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\n': case '\r': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '`': out += "'"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, int decimals = 3) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pct(double ratio) { return std::isfinite(ratio) ? num(100.0 * ratio, 1) + " %" : ""; }

class Doc {
 public:
  void h1(std::string_view t) { out_ += "# " + std::string(t) + "\n\n"; }
  void h2(std::string_view t) { out_ += "## " + std::string(t) + "\n\n"; }
  void h3(std::string_view t) { out_ += "### " + std::string(t) + "\n\n"; }
  void h4(std::string_view t) { out_ += "#### " + std::string(t) + "\n\n"; }
  void raw(std::string_view t) { out_ += t; }
  void p(std::string_view t) { out_ += std::string(t) + "\n\n"; }
  void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    if (rows.empty()) {
      p("_(no rows)_");
      return;
    }
    line(head);
    std::vector<std::string> sep(head.size(), "---");
    line(sep);
    for (const auto& r : rows) line(r);
    out_ += "\n";
  }
  std::string take() { return std::move(out_); }

 private:
  void line(const std::vector<std::string>& cells) {
    out_ += "|";
    for (const auto& c : cells) out_ += " " + c + " |";
    out_ += "\n";
  }
  std::string out_;
};

// Nearest-rank quantile of sorted values (q in [0, 1]).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
}

int severity_rank(const std::string& s) {
  static const char* const order[] = {"critical", "high", "medium", "low", "info"};
  for (int i = 0; i < 5; ++i)
    if (s == order[i]) return i;
  return 5;
}

struct Json {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  bool ok = false;
  explicit Json(const fs::path& p) {
    auto text = read_file(p);
    if (!text.ok()) return;
    text_ = std::move(*text);
    ok = parser.parse(text_).get(root) == simdjson::SUCCESS;
  }
  // a file that is absent or did not parse has no tape to walk: default values
  uint64_t u(std::initializer_list<const char*> path) const {
    if (!ok) return 0;
    simdjson::dom::element e = root;
    for (const char* k : path)
      if (e[k].get(e) != simdjson::SUCCESS) return 0;
    uint64_t v = 0;
    if (e.get(v) == simdjson::SUCCESS) return v;
    int64_t i = 0;
    return e.get(i) == simdjson::SUCCESS && i > 0 ? static_cast<uint64_t>(i) : 0;
  }
  double d(std::initializer_list<const char*> path) const {
    if (!ok) return std::nan("");
    simdjson::dom::element e = root;
    for (const char* k : path)
      if (e[k].get(e) != simdjson::SUCCESS) return std::nan("");
    double v = 0;
    return e.get(v) == simdjson::SUCCESS ? v : std::nan("");
  }
  std::string s(std::initializer_list<const char*> path) const {
    if (!ok) return "";
    simdjson::dom::element e = root;
    for (const char* k : path)
      if (e[k].get(e) != simdjson::SUCCESS) return "";
    std::string_view v;
    return e.get(v) == simdjson::SUCCESS ? std::string(v) : "";
  }

 private:
  std::string text_;
};


// Rows of a table, ordered by a numeric key (descending), at most n.
std::vector<size_t> top_rows(const TextTable& t, const std::function<double(size_t)>& key, size_t n,
                             const std::function<bool(size_t)>& keep = nullptr) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (!keep || keep(i)) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&key](size_t a, size_t b) {
    const double x = key(a), y = key(b);
    return (std::isfinite(x) ? x : -1e300) > (std::isfinite(y) ? y : -1e300);
  });
  if (idx.size() > n) idx.resize(n);
  return idx;
}

// ---- 8. Operator Deep Dive (issue 9) ----------------------------------------------------------

// At most `n` characters of an input string, cut on a UTF-8 boundary, with "…" when cut.
std::string shorten(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  size_t cut = n;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "\xE2\x80\xA6";
}

// "a;b" lists of the CSV shown as "a, b".
std::string list_text(std::string_view s) {
  std::string out;
  for (const char c : s) out += c == ';' ? std::string(", ") : std::string(1, c);
  return out;
}

// Decimal text shifted exactly (no rounding): µs -> ms, ratio -> percent.
std::string us_as_ms(const std::string& us) { return us.empty() ? "" : shift_decimal(us, -3); }
std::string ratio_as_pct(const std::string& r) { return r.empty() ? "" : shift_decimal(r, 2) + " %"; }

void deep_dive_section(Doc& d, const DeepDiveData& dd) {
  d.h2("8. Operator Deep Dive");
  if (!dd.csv_present) {
    d.p("Not available: this output folder has no operator_deep_dive.csv (it was written before the operator deep dive "
        "existed).");
    return;
  }
  const TextTable& t = dd.table;
  std::vector<size_t> root_rows, rank_rows;
  for (size_t i = 0; i < t.rows.size(); ++i) (t.cell(i, "scope") == "root" ? root_rows : rank_rows).push_back(i);
  if (dd.json_present) {
    std::string chip = "Chip: **" + md(dd.chip_name.empty() ? "unknown" : dd.chip_name) + "** (" +
                       (dd.chip_assumed == 1 ? "assumed, not detected" : dd.chip_assumed == 0 ? "detected" : "not stated") +
                       (dd.chip_source.empty() ? "" : "; source: " + md(dd.chip_source)) + ")";
    if (!dd.cube_cores.empty() || !dd.vector_cores.empty())
      chip += " · " + md(dd.cube_cores) + " cube cores, " + md(dd.vector_cores) + " vector cores";
    if (!dd.cube_tflops.empty() || !dd.hbm_gbps.empty())
      chip += " · peaks " + md(dd.cube_tflops) + " TFLOPS (cube), " + md(dd.hbm_gbps) + " GB/s (HBM)";
    d.p(chip + ".");
    if (!dd.coverage.empty())
      d.p("Hot operators per scope: by total kernel time, the smallest prefix reaching " + md(dd.coverage) +
          " of the scope's kernel time, at least " + md(dd.min_operators) + " and at most " + md(dd.max_operators) +
          " operators.");
  } else {
    d.p(dd.json_error.empty() ? "Chip and rule details: operator_deep_dive.json is absent; rows from operator_deep_dive.csv only."
                              : "Chip and rule details unavailable: " + md(dd.json_error) +
                                    "; rows from operator_deep_dive.csv only.");
  }
  d.p("Root scope (all ranks merged), hot order: " + std::to_string(root_rows.size()) + " operators, " +
      std::to_string(std::count_if(root_rows.begin(), root_rows.end(),
                                   [&t](size_t i) { return !t.cell(i, "classifications").empty(); })) +
      " classified (operator_deep_dive.csv; total ms and share are the CSV's total_us and kernel_time_share with the "
      "decimal point moved).");
  std::vector<std::vector<std::string>> rows;
  for (const size_t i : root_rows) {
    const std::string& shapes = t.cell(i, "input_shapes");
    rows.push_back({md(t.cell(i, "hot_rank")), md(t.cell(i, "name")), md(t.cell(i, "task_type")),
                    md(shorten(shapes.empty() ? t.cell(i, "shape_class") : shapes, 40)), md(t.cell(i, "call_count")),
                    md(us_as_ms(t.cell(i, "total_us"))), md(ratio_as_pct(t.cell(i, "kernel_time_share"))),
                    md(t.cell(i, "avg_us")), md(t.cell(i, "efficiency")), md(t.cell(i, "severity")),
                    md(list_text(t.cell(i, "classifications")))});
  }
  d.table({"#", "name", "task type", "shapes", "calls", "total ms", "share", "avg us", "efficiency", "severity",
           "classifications"},
          rows);

  // cards: classified root rows, most severe first, hot order within a severity
  std::vector<size_t> classified;
  for (const size_t i : root_rows)
    if (!t.cell(i, "classifications").empty()) classified.push_back(i);
  std::stable_sort(classified.begin(), classified.end(), [&t](size_t a, size_t b) {
    return severity_rank(t.cell(a, "severity")) < severity_rank(t.cell(b, "severity"));
  });
  constexpr size_t kMaxCards = 12;
  if (!classified.empty()) d.h3("Operator cards");
  for (size_t k = 0; k < classified.size() && k < kMaxCards; ++k) {
    const size_t i = classified[k];
    const std::string& shapes = t.cell(i, "input_shapes");
    d.h4("#" + md(t.cell(i, "hot_rank")) + " " + md(t.cell(i, "name")) + " (" + md(t.cell(i, "task_type")) + ", " +
         md(shorten(shapes.empty() ? t.cell(i, "shape_class") : shapes, 60)) + ") — " + md(t.cell(i, "severity")));
    static const std::vector<DeepDiveDetail> kNone;
    auto it = dd.details.find(t.cell(i, "deep_dive_id"));
    const auto& details = it == dd.details.end() ? kNone : it->second;
    std::string facts = "calls " + md(t.cell(i, "call_count")) + "; avg " + md(t.cell(i, "avg_us")) + " us; share " +
                        md(ratio_as_pct(t.cell(i, "kernel_time_share"))) + " of the root's kernel time";
    for (const auto& det : details)
      for (const auto& f : det.facts) facts += "; " + md(f);
    // one rule: its text on the line; several: one nested bullet per rule, named by its title
    auto texts = [&details](std::string DeepDiveDetail::*member) {
      if (details.size() == 1) return " " + md(details[0].*member);
      std::string out;
      for (const auto& det : details)
        if (!(det.*member).empty())
          out += "\n  - *" + md(det.title.empty() ? det.id : det.title) + "*: " + md(det.*member);
      return out;
    };
    std::string card = "- **Classifications**: " + md(list_text(t.cell(i, "classifications"))) + "\n";
    card += "- **Facts**: " + facts + "\n";
    if (details.empty()) {
      card += "- **Verdict**: " + md(t.cell(i, "verdict")) + " (rule details not available)\n";
    } else {
      card += "- **Inference**:" + texts(&DeepDiveDetail::inference) + "\n";
      card += "- **Likely cause**:" + texts(&DeepDiveDetail::cause) + "\n";
      card += "- **Suggested change**:" + texts(&DeepDiveDetail::suggestion) + "\n";
    }
    const std::string& ev = t.cell(i, "evidence_ids");
    const std::string& gaps = t.cell(i, "gaps");
    card += "- **Evidence**: " + (ev.empty() ? std::string("none") : md(list_text(ev))) + "\n";
    card += "- **Gaps**: " + (gaps.empty() ? std::string("none") : md(list_text(gaps))) + "\n\n";
    d.raw(card);
  }
  if (classified.size() > kMaxCards)
    d.p("Showing " + std::to_string(kMaxCards) + " of " + std::to_string(classified.size()) +
        " classified root operators (all in operator_deep_dive.csv / .json).");

  d.h3("Per-rank hot operators");
  {
    // ranks in the file's order (rank order), each with its first 3 classified rows (hot order)
    std::vector<std::string> order;
    std::map<std::string, std::pair<uint64_t, std::vector<size_t>>> by_rank;  // hot rows, classified rows
    for (const size_t i : rank_rows) {
      const std::string& r = t.cell(i, "rank_id");
      auto [it, fresh] = by_rank.try_emplace(r);
      if (fresh) order.push_back(r);
      ++it->second.first;
      if (!t.cell(i, "classifications").empty() && it->second.second.size() < 3) it->second.second.push_back(i);
    }
    constexpr size_t kMaxRanks = 64;
    std::string lines;
    for (size_t k = 0; k < order.size() && k < kMaxRanks; ++k) {
      const auto& [hot, picked] = by_rank[order[k]];
      std::string line = "- " + md(order[k]) + ": ";
      if (picked.empty()) line += "no classified operator among " + std::to_string(hot) + " hot operators";
      for (size_t j = 0; j < picked.size(); ++j) {
        const size_t i = picked[j];
        line += (j ? "; " : "") + std::string("#") + md(t.cell(i, "hot_rank")) + " " + md(t.cell(i, "name")) + " (" +
                md(list_text(t.cell(i, "classifications"))) + ", " + md(t.cell(i, "severity")) + ", share " +
                md(ratio_as_pct(t.cell(i, "kernel_time_share"))) + ")";
      }
      lines += line + "\n";
    }
    if (order.empty()) d.p("No rank rows.");
    else d.raw(lines + "\n");
    if (order.size() > kMaxRanks)
      d.p("Showing " + std::to_string(kMaxRanks) + " of " + std::to_string(order.size()) +
          " ranks (all in operator_deep_dive.csv).");
  }

  d.h3("Host API overhead");
  if (!dd.json_present) {
    d.p("Not available (operator_deep_dive.json " + std::string(dd.json_error.empty() ? "is absent" : "is unusable") + ").");
    return;
  }
  constexpr size_t kMaxHost = 24;
  rows.clear();
  for (size_t k = 0; k < dd.host_api.size() && k < kMaxHost; ++k) {
    const auto& h = dd.host_api[k];
    rows.push_back({md(h.rank_id), md(h.level), md(h.api), md(h.time_us), md(h.count), md(h.avg_us),
                    md(ratio_as_pct(h.share_of_span)), md(h.classification)});
  }
  d.p("Host-side API time (operator_deep_dive.json host_api; share of the rank's captured span):");
  d.table({"rank", "level", "api", "time us", "count", "avg us", "share of span", "classification"}, rows);
  if (dd.host_api.size() > kMaxHost)
    d.p("Showing " + std::to_string(kMaxHost) + " of " + std::to_string(dd.host_api.size()) +
        " entries (all in operator_deep_dive.json).");
}

}  // namespace

// 17: the in-kernel MoE traces (only a root with traces has the tables; section absent otherwise).
void moe_trace_section(Doc& d, const fs::path& root_out, const std::vector<model::Finding>& findings) {
  std::error_code ec;
  if (!fs::exists(root_out / layout::kMoeTraceCallsCsv, ec)) return;
  auto calls = read_table(root_out / layout::kMoeTraceCallsCsv);
  auto compare = read_table(root_out / layout::kMoePhaseCompareCsv);
  auto phases = read_table(root_out / layout::kMoePhaseSummaryCsv);
  d.h2("17. In-Kernel MoE Traces");
  d.p("Traces recorded inside the fused MoE kernels (MoeTracing). Each core's times count from its own kernel entry, "
      "so ranks are compared by durations; the instrumented build's barriers make phases longer than in a clean "
      "build. Tables: moe_trace_calls.csv, moe_phase_summary.csv, moe_phase_compare.csv, moe_bubble_summary.csv.");
  if (calls.ok()) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < calls->rows.size() && i < 32; ++i)
      rows.push_back({md(calls->cell(i, "rank_id")), md(calls->cell(i, "call")), md(calls->cell(i, "variant")),
                      md(calls->cell(i, "status")), md(calls->cell(i, "event_id")), num(calls->number(i, "span_us")),
                      md(calls->cell(i, "detail"))});
    d.h3("Calls And Their Kernel Rows");
    d.table({"rank", "call", "variant", "status", "kernel row", "span us", "detail"}, rows);
    if (calls->rows.size() > 32) d.p("Showing 32 of " + std::to_string(calls->rows.size()) + " calls.");
  }
  if (compare.ok()) {
    const std::vector<size_t> order = moe_phase_rows(*compare, /*with_containers=*/false);
    std::vector<std::vector<std::string>> rows;
    for (size_t k = 0; k < order.size() && k < 30; ++k) {
      const size_t i = order[k];
      rows.push_back({md(compare->cell(i, "label")), md(compare->cell(i, "core_group")), md(compare->cell(i, "role")),
                      md(compare->cell(i, "ranks")), num(compare->number(i, "union_us_median")),
                      num(compare->number(i, "max_core_us_median")), num(compare->number(i, "max_core_us_max")),
                      md(compare->cell(i, "slowest_rank")), num(compare->number(i, "slowest_to_median"), 2)});
    }
    d.h3("Phases Across Ranks");
    d.table({"phase", "core group", "role", "ranks", "union us (median)", "slowest core us (median)",
             "slowest core us (max)", "slowest rank", "max / median"},
            rows);
  }
  if (phases.ok()) {
    std::vector<std::vector<std::string>> rows;
    for (const size_t i : moe_worst_core_rows(*phases, 10)) {
      const std::string& index = phases->cell(i, "index");
      rows.push_back({md(phases->cell(i, "rank_id")), md(phases->cell(i, "label")) + (index.empty() ? "" : " #" + index),
                      md(phases->cell(i, "core_group")), md(phases->cell(i, "max_core_id")), num(phases->number(i, "max_core_us")),
                      num(phases->number(i, "median_core_us")), md(phases->cell(i, "evidence_id"))});
    }
    d.h3("Worst Cores");
    d.table({"rank", "phase", "core group", "core", "its us", "median core us", "evidence"}, rows);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : findings)
    if (f.finding_type.rfind("moe_", 0) == 0) rows.push_back({md(f.finding_type), md(join(f.suspected_ranks, ", ")), num(f.magnitude_ms), md(f.summary)});
  d.h3("In-Kernel Findings");
  d.table({"type", "suspected ranks", "ms at stake", "summary"}, rows);
}

// The module breakdown (issue 21; only a root whose trace has nn.Module ranges has the tables; the
// section is absent otherwise). Numbered after the sections before it.
void module_section(Doc& d, const fs::path& root_out, int number) {
  std::error_code ec;
  if (!fs::exists(root_out / layout::kModuleSummaryCsv, ec)) return;
  auto ranks = read_table(root_out / layout::kModuleRanksCsv);
  auto compare = read_table(root_out / layout::kModuleCompareCsv);
  d.h2(std::to_string(number) + ". Module Breakdown");
  d.p("Device time per nn.Module (torch_npu with_modules=True). Each device task is bound to its host launch (the "
      "binding host-bound uses), placed on the Python thread (the launch's own thread, the Enqueue of torch_npu's task "
      "queue, or the task's torch op) and counted in the innermost module range holding it. Self = the module's own "
      "tasks; total = self + every module below it; device time = the tasks' summed durations (concurrent streams "
      "add up). Tables: module_summary.csv (per rank and module), module_ranks.csv (where each rank's device time "
      "went), module_compare.csv (each module across ranks).");
  if (ranks.ok()) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < ranks->rows.size(); ++i)
      rows.push_back({md(ranks->cell(i, "rank_id")), md(ranks->cell(i, "ranges")), md(ranks->cell(i, "modules")),
                      num(ranks->number(i, "device_us")), num(ranks->number(i, "module_device_us")),
                      pct(ranks->number(i, "module_share")), num(ranks->number(i, "outside_device_us")),
                      md(ranks->cell(i, "outside_tasks")), num(ranks->number(i, "unlaunched_device_us")),
                      md(ranks->cell(i, "unlaunched_tasks")),
                      md(ranks->cell(i, "placed_by_launch_thread")) + " / " + md(ranks->cell(i, "placed_by_task_queue")) +
                          " / " + md(ranks->cell(i, "placed_by_torch_op"))});
    d.h3("Where Each Rank's Device Time Went");
    d.table({"rank", "module calls", "modules", "device us", "in modules us", "share", "outside modules us",
             "outside tasks", "no launch us", "no launch tasks", "placed by launch thread / task queue / torch op"},
            rows);
  }
  if (compare.ok()) {
    std::vector<size_t> order(compare->rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return compare->number(a, "total_device_us_median") > compare->number(b, "total_device_us_median");
    });
    auto calls = [&](size_t i) {
      const std::string &lo = compare->cell(i, "calls_min"), &hi = compare->cell(i, "calls_max");
      return lo == hi ? md(lo) : md(lo) + "-" + md(hi);
    };
    std::vector<std::vector<std::string>> rows;
    for (size_t k = 0; k < order.size() && k < 25; ++k) {
      const size_t i = order[k];
      rows.push_back({md(compare->cell(i, "module_path")), md(compare->cell(i, "ranks")), calls(i),
                      num(compare->number(i, "total_device_us_median")), num(compare->number(i, "self_device_us_median")),
                      num(compare->number(i, "total_device_us_min")), num(compare->number(i, "total_device_us_max")),
                      md(compare->cell(i, "slowest_rank")), num(compare->number(i, "busy_us_median")),
                      md(compare->cell(i, "busiest_rank")), num(compare->number(i, "busiest_to_median"), 2)});
    }
    d.h3("Modules By Device Time");
    d.p("Busy = total device time minus its waiting tasks (modules.rules [device]): a rank waiting in a collective "
        "for a slow peer has long device time but is not the slow one.");
    d.table({"module", "ranks", "calls", "total us (median)", "self us (median)", "total us (min)", "total us (max)",
             "slowest rank", "busy us (median)", "busiest rank", "busiest / median"},
            rows);
    if (order.size() > 25) d.p("Showing 25 of " + std::to_string(order.size()) + " modules (all in module_compare.csv).");
    rows.clear();
    for (const size_t i : order)
      if (compare->cell(i, "stands_out") == "True")
        rows.push_back({md(compare->cell(i, "module_path")), md(compare->cell(i, "busiest_rank")),
                        num(compare->number(i, "busy_us_max")), num(compare->number(i, "busy_us_median")),
                        num(compare->number(i, "busiest_to_median"), 2), md(compare->cell(i, "slowest_rank")),
                        num(compare->number(i, "total_device_us_max"))});
    d.h3("Modules Whose Busiest Rank Stands Out");
    d.p("Module paths whose busiest rank's busy time reaches modules.rules [compare] spread_ratio x the ranks' median "
        "and its min_device_us (module_compare.csv stands_out).");
    d.table({"module", "busiest rank", "its busy us", "median busy us", "busiest / median", "slowest rank (total)",
             "its total us"},
            rows);
  }
}

// The critical path of the walked steps (issue 21; only a root with aligned steps has the tables).
void critical_path_section(Doc& d, const fs::path& root_out, int number, const std::vector<model::Finding>& findings) {
  std::error_code ec;
  if (!fs::exists(root_out / layout::kCriticalPathRanksCsv, ec)) return;
  auto ranks = read_table(root_out / layout::kCriticalPathRanksCsv);
  auto steps = read_table(root_out / layout::kCriticalPathStepsCsv);
  d.h2(std::to_string(number) + ". Critical Path");
  d.p("What set each aligned step's wall time: walked back from the step's end, inside a rank from a device task to "
      "the task it waited for (the previous task of its stream, or a communication op), and at each collective to the "
      "member that arrived last. Kinds: compute, transfer (a collective from its last arrival to its end), waiting "
      "(a communication op no other rank shares), host gap (no device task). Times on the reference rank's clock. "
      "Tables: critical_path.csv (each chain), critical_path_steps.csv, critical_path_ranks.csv.");
  if (ranks.ok()) {
    std::vector<size_t> order(ranks->rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ranks->number(a, "share") > ranks->number(b, "share"); });
    std::vector<std::vector<std::string>> rows;
    for (size_t k = 0; k < order.size() && k < 25; ++k) {
      const size_t i = order[k];
      rows.push_back({md(ranks->cell(i, "rank_id")), pct(ranks->number(i, "share")), num(ranks->number(i, "path_us")),
                      num(ranks->number(i, "compute_us")), num(ranks->number(i, "transfer_us")),
                      num(ranks->number(i, "host_gap_us")), num(ranks->number(i, "waiting_us")),
                      md(ranks->cell(i, "steps_on_path")) + " / " + md(ranks->cell(i, "steps_member")),
                      num(ranks->number(i, "others_waited_us"))});
    }
    d.h3("Each Rank's Share Of The Critical Path");
    d.table({"rank", "share", "on path us", "compute us", "transfer us", "host gap us", "waiting us",
             "steps on path / member", "others waited us"},
            rows);
    if (order.size() > 25) d.p("Showing 25 of " + std::to_string(order.size()) + " ranks (all in critical_path_ranks.csv).");
  }
  if (steps.ok()) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < steps->rows.size() && i < 25; ++i)
      rows.push_back({md(steps->cell(i, "alignment_id")), num(steps->number(i, "wall_us")), num(steps->number(i, "walked_us")),
                      md(steps->cell(i, "end_rank")), num(steps->number(i, "compute_us")), num(steps->number(i, "transfer_us")),
                      num(steps->number(i, "host_gap_us")), num(steps->number(i, "waiting_us")),
                      md(steps->cell(i, "ranks_on_path")), md(steps->cell(i, "hops"))});
    d.h3("Steps");
    d.table({"alignment", "wall us", "walked us", "ended last", "compute us", "transfer us", "host gap us", "waiting us",
             "ranks on path", "hops"},
            rows);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : findings)
    if (f.finding_type == "critical_path_rank_bound") rows.push_back({md(join(f.suspected_ranks, ", ")), num(f.magnitude_ms), md(f.summary)});
  d.h3("Critical-Path Findings");
  d.table({"suspected rank", "ms others waited", "summary"}, rows);
}

Result<fs::path> write_report_md(const fs::path& root_out) {
  auto load = [&root_out](const char* name) -> Result<TextTable> { return read_table(root_out / name); };
  ASCPROF_ASSIGN_OR_RETURN(TextTable ranks, load(layout::kRankSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable steps, load(layout::kStepSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable anatomy, load(layout::kStepAnatomyCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable operators, load(layout::kOperatorSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable op_classes, load(layout::kOperatorClassSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable hccl_classes, load(layout::kHcclClassSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable hccl_ops, load(layout::kHcclOpSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable step_classes, load(layout::kStepClassSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable layer_classes, load(layout::kLayerClassSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable block_classes, load(layout::kBlockClassSummaryCsv));
  ASCPROF_ASSIGN_OR_RETURN(DeepDiveData deep_dive, load_deep_dive(root_out));
  const Json normalize(root_out / layout::kNormalizeManifestJson);
  const Json segment(root_out / layout::kSegmentManifestJson);
  const Json summary(root_out / layout::kSummaryManifestJson);
  const Json cross(root_out / layout::kCrossRankManifestJson);
  // findings that cannot be read fail the report, as they fail the evidence-chain check before it
  ASCPROF_ASSIGN_OR_RETURN(FindingsFile diagnosis, read_findings_file(root_out));
  const uint64_t refused = diagnosis.refused_without_evidence;
  std::vector<model::Finding>& findings = diagnosis.findings;
  std::stable_sort(findings.begin(), findings.end(), [](const model::Finding& a, const model::Finding& b) {
    const int x = severity_rank(a.severity), y = severity_rank(b.severity);
    return x != y ? x < y : a.finding_type < b.finding_type;
  });
  const std::string root = normalize.s({"root"});
  Doc d;
  d.h1("ascprof-mpi report");

  // 1
  d.h2("1. Executive Summary");
  d.table({"field", "value"},
          {{"report id", stable_id("report", {root, ASCPROF_VERSION})},
           {"root", md(root)},
           {"tool version", ASCPROF_VERSION},
           {"ranks", std::to_string(normalize.u({"rank_count"}))},
           {"kernel events", std::to_string(normalize.u({"event_count"}))},
           {"segments", std::to_string(segment.u({"segment_count"}))},
           {"steps", std::to_string(segment.u({"step_count"}))},
           {"layers", std::to_string(segment.u({"layer_count"}))},
           {"pipeline coverage (events with pipeline data)", pct(summary.d({"pipeline_coverage", "events_ratio"}))},
           {"findings", std::to_string(findings.size())},
           {"structure hard errors", std::to_string(segment.u({"hard_error_count"}))}});

  // 2
  d.h2("2. Capture And Segmentation");
  {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < ranks.rows.size() && i < 64; ++i)
      rows.push_back({md(ranks.cell(i, "rank_id")), ranks.cell(i, "step_count"), ranks.cell(i, "segment_count"),
                      md(ranks.cell(i, "layer_count_inventory")), ranks.cell(i, "wall_ms"), ranks.cell(i, "busy_union_ms"),
                      ranks.cell(i, "underfeed_ms"), md(ranks.cell(i, "step_source")), md(ranks.cell(i, "anchor_family")),
                      md(ranks.cell(i, "role_counts"))});
    d.table({"rank", "steps", "segments", "layer inventory", "wall ms", "busy ms", "underfeed ms", "step source", "anchors", "roles"},
            rows);
    if (ranks.rows.size() > 64) d.p("Showing 64 of " + std::to_string(ranks.rows.size()) + " ranks (all in rank_summary.csv).");
    // Ranks analysed from communication data alone (a trimmed capture): in no kernel table above.
    std::vector<std::string> partial;
    simdjson::dom::array list;
    if (normalize.ok && normalize.root["rank_summaries"].get(list) == simdjson::SUCCESS)
      for (simdjson::dom::element r : list) {
        std::string_view status, id, dir;
        if (r["status"].get(status) == simdjson::SUCCESS && status == "partial" &&
            r["rank_id"].get(id) == simdjson::SUCCESS && r["rank_dir"].get(dir) == simdjson::SUCCESS)
          partial.push_back(md(std::string(id)) + " (" + md(std::string(dir)) + ")");
      }
    if (!partial.empty()) {
      std::string text = "Partial ranks, analysed from their communication and step-trace data only (no kernel table "
                         "in the capture): ";
      for (size_t i = 0; i < partial.size(); ++i) text += (i ? ", " : "") + partial[i];
      d.p(text + ". They are in no kernel, structure or operator table; they take part in the communication "
                 "findings (slow rank, slow link, transit/wait) and the step-trace rows.");
    }
  }

  // 3
  d.h2("3. Macro Step Timeline");
  {
    std::map<std::string, std::vector<double>> walls;
    std::vector<size_t> step_rows;
    for (size_t i = 0; i < steps.rows.size(); ++i)
      if (steps.cell(i, "segment_type") == "step") {
        walls[steps.cell(i, "rank_id")].push_back(steps.number(i, "wall_ms"));
        step_rows.push_back(i);
      }
    std::map<std::string, std::array<double, 5>> shares;  // head, main, tail, bubble ratio sums, count
    for (size_t i = 0; i < anatomy.rows.size(); ++i) {
      auto& s = shares[anatomy.cell(i, "rank_id")];
      s[0] += anatomy.number(i, "head_ratio");
      s[1] += anatomy.number(i, "main_ratio");
      s[2] += anatomy.number(i, "tail_ratio");
      s[3] += anatomy.number(i, "bubble_ratio");
      s[4] += 1;
    }
    d.p("Per rank: step wall time quantiles (nearest rank over the rank's `step` rows of step_summary.csv) and "
        "the mean anatomy shares of step_anatomy.csv.");
    std::vector<std::vector<std::string>> rows;
    for (size_t r = 0; r < ranks.rows.size(); ++r) {
      const std::string& id = ranks.cell(r, "rank_id");
      const auto& w = walls[id];
      const auto s = shares.count(id) ? shares[id] : std::array<double, 5>{0, 0, 0, 0, 0};
      const double n = std::max(1.0, s[4]);
      rows.push_back({md(id), std::to_string(w.size()), num(quantile(w, 0.5)), num(quantile(w, 0.9)), num(quantile(w, 0.99)),
                      pct(s[0] / n), pct(s[1] / n), pct(s[2] / n), pct(s[3] / n)});
    }
    d.table({"rank", "steps", "wall p50 ms", "wall p90 ms", "wall p99 ms", "head", "main", "tail", "bubble"}, rows);
    d.p("The 8 heaviest steps:");
    rows.clear();
    for (const size_t i : top_rows(steps, [&steps](size_t k) { return steps.number(k, "wall_ms"); }, 8,
                                   [&steps](size_t k) { return steps.cell(k, "segment_type") == "step"; }))
      rows.push_back({md(steps.cell(i, "segment_id")), md(steps.cell(i, "rank_id")), steps.cell(i, "wall_ms"),
                      md(steps.cell(i, "step_family")), steps.cell(i, "main_layer_count"), steps.cell(i, "underfeed_ratio"),
                      md(steps.cell(i, "anomaly_tags"))});
    d.table({"segment", "rank", "wall ms", "family", "main layers", "underfeed ratio", "anomaly tags"}, rows);
  }

  // 4
  d.h2("4. Pipeline Coverage And Bound Families");
  {
    d.table({"level", "with pipeline data", "total", "share"},
            {{"events", std::to_string(summary.u({"pipeline_coverage", "events_with_pipeline_signal"})),
              std::to_string(summary.u({"pipeline_coverage", "events_total"})), pct(summary.d({"pipeline_coverage", "events_ratio"}))},
             {"operators", std::to_string(summary.u({"pipeline_coverage", "operators_with_pipeline_signal"})),
              std::to_string(summary.u({"pipeline_coverage", "operators_total"})),
              pct(static_cast<double>(summary.u({"pipeline_coverage", "operators_with_pipeline_signal"})) /
                  static_cast<double>(std::max<uint64_t>(1, summary.u({"pipeline_coverage", "operators_total"}))))}});
    std::map<std::string, std::pair<uint64_t, double>> by_type, by_family;  // operator rows, Σ duration ms
    for (size_t i = 0; i < operators.rows.size(); ++i) {
      const double ms = operators.number(i, "duration_sum_us") / 1000.0;
      auto& t = by_type[operators.cell(i, "op_type")];
      ++t.first;
      t.second += std::isfinite(ms) ? ms : 0;
      auto& f = by_family[operators.cell(i, "bound_family")];
      ++f.first;
      f.second += std::isfinite(ms) ? ms : 0;
    }
    d.p("op_type histogram (operator_summary.csv rows of all ranks; Σ duration_sum_us / 1000):");
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, v] : by_type) rows.push_back({md(k), std::to_string(v.first), num(v.second)});
    d.table({"op_type", "operator rows", "Σ duration ms"}, rows);
    d.p("bound_family histogram:");
    rows.clear();
    for (const auto& [k, v] : by_family) rows.push_back({md(k), std::to_string(v.first), num(v.second)});
    d.table({"bound_family", "operator rows", "Σ duration ms"}, rows);
  }

  // 5
  d.h2("5. Step Class View");
  {
    auto weight = [&step_classes](size_t i) { return step_classes.number(i, "member_count") * step_classes.number(i, "wall_ms_mean"); };
    std::vector<std::vector<std::string>> rows;
    const auto top = top_rows(step_classes, weight, 8);
    for (const size_t i : top)
      rows.push_back({md(step_classes.cell(i, "step_class_id")), md(step_classes.cell(i, "step_family")),
                      step_classes.cell(i, "main_layer_count"), step_classes.cell(i, "member_count"),
                      step_classes.cell(i, "rank_count"), step_classes.cell(i, "wall_ms_mean"), step_classes.cell(i, "wall_ms_p90"),
                      step_classes.cell(i, "head_ratio_mean"), step_classes.cell(i, "tail_ratio_mean"),
                      step_classes.cell(i, "bubble_ratio_mean")});
    d.p("Top step classes by member_count × wall_ms_mean (step_class_summary.csv):");
    d.table({"class", "family", "main layers", "members", "ranks", "wall mean ms", "wall p90 ms", "head ratio", "tail ratio",
             "bubble ratio"},
            rows);
    if (!top.empty()) {
      d.p("Heaviest class " + md(step_classes.cell(top[0], "step_class_id")) + ": top layer classes " +
          md(step_classes.cell(top[0], "top_layer_classes")) + "; top operators " + md(step_classes.cell(top[0], "top_ops")));
    }
  }

  // 6
  d.h2("6. Layer And Block View");
  {
    auto weight = [&layer_classes](size_t i) { return layer_classes.number(i, "member_count") * layer_classes.number(i, "wall_ms_mean"); };
    std::vector<std::vector<std::string>> rows;
    for (const size_t i : top_rows(layer_classes, weight, 8))
      rows.push_back({md(layer_classes.cell(i, "layer_class_id")), md(layer_classes.cell(i, "block_kinds")),
                      layer_classes.cell(i, "member_count"), layer_classes.cell(i, "wall_ms_mean"),
                      md(layer_classes.cell(i, "block_kind_wall_ms_share_mean"))});
    d.p("Top layer classes by member_count × wall_ms_mean (layer_class_summary.csv):");
    d.table({"class", "block kinds", "members", "wall mean ms", "block-kind wall share"}, rows);
    std::set<std::string> kinds;
    for (size_t i = 0; i < block_classes.rows.size(); ++i) kinds.insert(block_classes.cell(i, "block_kind"));
    for (const auto& kind : kinds) {
      rows.clear();
      for (const size_t i : top_rows(block_classes, [&block_classes](size_t k) { return block_classes.number(k, "wall_ms_sum"); }, 12,
                                     [&](size_t k) { return block_classes.cell(k, "block_kind") == kind; }))
        rows.push_back({md(block_classes.cell(i, "block_class_id")), block_classes.cell(i, "member_count"),
                        block_classes.cell(i, "wall_ms_mean"), md(block_classes.cell(i, "bound_family")),
                        md(block_classes.cell(i, "dominant_core")), block_classes.cell(i, "comm_share_mean")});
      d.p("Block classes of kind `" + md(kind) + "` (top 12 by wall_ms_sum):");
      d.table({"class", "members", "wall mean ms", "bound family", "core", "comm share mean"}, rows);
    }
  }

  // 7
  d.h2("7. Operator View");
  {
    static const std::set<std::string> kNotCompute = {"communication", "mix_comm_aiv", "aicpu", "dsa", "unknown"};
    std::vector<std::vector<std::string>> rows;
    for (const size_t i : top_rows(op_classes, [&op_classes](size_t k) { return op_classes.number(k, "duration_sum_us"); }, 10,
                                   [&](size_t k) { return !kNotCompute.count(op_classes.cell(k, "op_type")); }))
      rows.push_back({md(op_classes.cell(i, "name")), md(op_classes.cell(i, "task_type")), md(op_classes.cell(i, "op_type")),
                      op_classes.cell(i, "call_count"), op_classes.cell(i, "duration_sum_us"), op_classes.cell(i, "duration_avg_us"),
                      op_classes.cell(i, "rank_duration_skew_ratio"), md(op_classes.cell(i, "bound_family")),
                      md(op_classes.cell(i, "dominant_core"))});
    d.p("Top compute operators by duration_sum_us (operator_class_summary.csv; communication, mix_comm_aiv, aicpu, dsa "
        "and unknown left out):");
    d.table({"name", "task type", "op_type", "calls", "Σ duration us", "avg us", "rank skew", "bound family", "core"}, rows);
    rows.clear();
    for (size_t i = 0; i < hccl_classes.rows.size(); ++i)
      rows.push_back({md(hccl_classes.cell(i, "hccl_op_kind")), hccl_classes.cell(i, "comm_aiv_fused"),
                      hccl_classes.cell(i, "rank_count"), hccl_classes.cell(i, "call_count"),
                      hccl_classes.cell(i, "duration_sum_us"), hccl_classes.cell(i, "duration_avg_us"),
                      hccl_classes.cell(i, "rank_skew_ratio"), hccl_classes.cell(i, "duration_max_us")});
    d.p("HCCL per kind (hccl_class_summary.csv):");
    d.table({"kind", "comm+AIV fused", "ranks", "calls", "Σ duration us", "avg us", "rank skew", "max us"}, rows);
    const auto heaviest = top_rows(hccl_classes, [&hccl_classes](size_t k) { return hccl_classes.number(k, "duration_sum_us"); }, 1);
    if (!heaviest.empty()) {
      const std::string kind = hccl_classes.cell(heaviest[0], "hccl_op_kind");
      rows.clear();
      for (const size_t i : top_rows(hccl_ops, [&hccl_ops](size_t k) { return hccl_ops.number(k, "duration_avg_us"); }, 8,
                                     [&](size_t k) { return hccl_ops.cell(k, "hccl_op_kind") == kind; }))
        rows.push_back({md(hccl_ops.cell(i, "rank_id")), hccl_ops.cell(i, "call_count"), hccl_ops.cell(i, "duration_avg_us"),
                        hccl_ops.cell(i, "duration_p90_us"), hccl_ops.cell(i, "duration_max_us"), hccl_ops.cell(i, "wait_ratio")});
      d.p("Ranks with the longest average `" + md(kind) + "` (hccl_op_summary.csv, top 8):");
      d.table({"rank", "calls", "avg us", "p90 us", "max us", "wait ratio"}, rows);
    }
  }

  // 8 (ours, after the operator view it deepens)
  deep_dive_section(d, deep_dive);

  // 9
  d.h2("9. Step Inventory");
  {
    struct Group {
      uint64_t n = 0;
      double wall = 0, main = 0, head = 0, tail = 0, bubble_max = 0;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    std::map<std::string, size_t> anatomy_of;
    for (size_t i = 0; i < anatomy.rows.size(); ++i) anatomy_of[anatomy.cell(i, "segment_id")] = i;
    for (size_t i = 0; i < steps.rows.size(); ++i) {
      if (steps.cell(i, "segment_type") != "step") continue;
      auto& g = groups[{steps.cell(i, "step_family"), steps.cell(i, "main_layer_count")}];
      ++g.n;
      g.wall += steps.number(i, "wall_ms");
      g.bubble_max = std::max(g.bubble_max, steps.number(i, "largest_internal_bubble_ms"));
      if (auto a = anatomy_of.find(steps.cell(i, "segment_id")); a != anatomy_of.end()) {
        g.main += anatomy.number(a->second, "main_wall_ms");
        g.head += anatomy.number(a->second, "head_wall_ms");
        g.tail += anatomy.number(a->second, "tail_wall_ms");
      }
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& [k, g] : groups) {
      const double n = static_cast<double>(g.n);
      rows.push_back({md(k.first), k.second, std::to_string(g.n), num(g.wall / n), num(g.main / n), num(g.head / n),
                      num(g.tail / n), num(g.bubble_max)});
    }
    d.table({"family", "main layers", "steps", "avg wall ms", "avg main ms", "avg head ms", "avg tail ms", "max bubble ms"}, rows);
  }

  // 10, 11
  d.h2("10. Cross-Rank And Anomaly Findings");
  {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < findings.size() && i < 24; ++i) {
      const auto& f = findings[i];
      rows.push_back({md(f.severity), md(f.finding_type), md(f.confidence), md(join(f.suspected_ranks, ", ")), num(f.magnitude_ms), md(f.summary)});
    }
    d.table({"severity", "type", "confidence", "suspected ranks", "ms at stake", "summary"}, rows);
    if (findings.size() > 24) d.p("Showing 24 of " + std::to_string(findings.size()) + " findings (all in diagnosis_findings.json).");
  }
  d.h2("11. Finding Inventory");
  {
    std::map<std::string, uint64_t> by_type;
    for (const auto& f : findings) ++by_type[f.finding_type];
    std::vector<std::vector<std::string>> rows;
    for (const auto& [t, n] : by_type) rows.push_back({md(t), std::to_string(n)});
    d.table({"finding type", "count"}, rows);
  }

  // 12, 13
  d.h2("12. Evidence Chain");
  d.p("Every finding above carries evidence ids (`evt_<rank ordinal>_<row>` kernel rows, `evd_...` windows in "
      "evidence_index.csv) and alignment ids (cross_rank_alignment.csv); " +
      std::to_string(refused) + " finding(s) without evidence were refused by the gate. In report.xlsx: findings in "
      "`diagnosis_findings`, windows in `evidence_index`, kernel rows in `raw_kernel_index`, alignments in "
      "`cross_rank_alignment`, bubbles in `bubble_windows`.");
  d.h2("13. Limitations");
  d.p("Structure comes from kernel order and the operator taxonomy in knowledge/ (no timing heuristics); a model "
      "family the taxonomy does not know segments as windows. Pipeline bound families need the kernel_details metric "
      "columns (Level1+ captures). Collective durations include the time a rank waits for its peers. Clock offsets are "
      "estimated from shared collectives and are absent for ranks that share none.");

  // ours
  d.h2("14. Clock Offsets");
  {
    std::vector<std::vector<std::string>> rows;
    simdjson::dom::array arr;
    if (cross.ok && cross.root["clock_offsets"].get(arr) == simdjson::SUCCESS)
      for (simdjson::dom::element c : arr) {
        std::string_view id, via;
        double off = 0, spread = 0;
        uint64_t n = 0;
        bool est = false;
        // absent fields keep their defaults
        auto get = [](auto result, auto& value) { return result.get(value) == simdjson::SUCCESS; };
        get(c["rank_id"], id);
        get(c["via_rank"], via);
        get(c["estimated"], est);
        const bool has_off = get(c["offset_us"], off);
        get(c["spread_us"], spread);
        get(c["collectives"], n);
        rows.push_back({md(id), est && has_off ? num(off) : "not estimated", std::to_string(n), md(via), num(spread)});
      }
    d.p("Each rank's clock minus the reference rank's, from the end times of shared collectives "
        "(cross_rank_manifest.json); alignments use corrected times.");
    d.table({"rank", "offset us", "collectives", "via rank", "spread us"}, rows);
  }
  d.h2("15. Slow Ranks, Slow Links And Host-Bound Time");
  {
    std::vector<std::vector<std::string>> rows;
    for (const auto& f : findings)
      if (f.finding_type == "slow_rank_suspected" || f.finding_type == "slow_link_suspected" || f.finding_type == "host_dispatch_bound" ||
          f.finding_type == "host_bound_untested" ||
          f.finding_type == "communication_collective_slow" || f.finding_type == "ep_load_imbalance_suspected")
        rows.push_back({md(f.finding_type), md(join(f.suspected_ranks, ", ")), num(f.magnitude_ms), md(f.summary)});
    d.table({"type", "suspected ranks", "ms at stake", "summary"}, rows);
  }
  d.h2("16. Training Phases");
  {
    std::map<std::string, uint64_t> phases;
    for (size_t i = 0; i < steps.rows.size(); ++i)
      if (steps.cell(i, "segment_type") == "step" && !steps.cell(i, "phase").empty()) ++phases[steps.cell(i, "phase")];
    if (phases.empty()) {
      d.p("No training steps (no backward attention kernels).");
    } else {
      std::vector<std::vector<std::string>> rows;
      for (const auto& [p, n] : phases) rows.push_back({md(p), std::to_string(n)});
      d.table({"phase", "steps"}, rows);
    }
  }
  moe_trace_section(d, root_out, findings);
  std::error_code ec;
  int next = fs::exists(root_out / layout::kMoeTraceCallsCsv, ec) ? 18 : 17;
  if (fs::exists(root_out / layout::kModuleSummaryCsv, ec)) module_section(d, root_out, next++);
  critical_path_section(d, root_out, next, findings);
  const fs::path out = root_out / layout::kReportDir / layout::kReportMd;
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(out, d.take()));
  return out;
}

}  // namespace ascprof::report
