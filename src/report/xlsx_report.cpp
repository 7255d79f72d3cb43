#include "ascprof/report/xlsx_report.hpp"

#include <simdjson.h>
#include <xlsxwriter.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "ascprof/common/cores.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"

#ifndef ASCPROF_VERSION
#define ASCPROF_VERSION "unknown"
#endif

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSampleRows = 1000;  // rows that decide a column's type and width
constexpr double kMinWidth = 8, kMaxWidth = 60;
constexpr size_t kExcelMaxChars = 32767;
// Excel keeps 15 significant digits. A number it would round in its integer part or its first three
// decimals (epoch µs with ns decimals, ns times, long ids) stays text, so no shown value is wrong;
// digits beyond the third decimal (ratios) may be rounded.
constexpr int kExactDigits = 15;
constexpr int kKeptDecimals = 3;

struct SheetSpec {
  const char* name;
  const char* source;
  const char* description;
  /// Comma-separated columns that are always text, besides *_id / *_ids (codes, signatures and lists
  /// that could look like a number in a small table).
  const char* text_columns = "";
  /// When the sheet is capped: the column whose largest values choose the rows kept (the first of
  /// a comma-separated list that a row fills); "" keeps the first rows of the file.
  const char* rank_by = "";
  /// The sheet exists only when its source file does (tables of optional inputs: a root without
  /// in-kernel MoE traces gets no MoE sheets, so its workbook is unchanged).
  bool only_if_present = false;
};

// The reference's sheet order (reference-analysis.md §2.9).
constexpr SheetSpec kSheets[] = {
    {"README", "", "this sheet: what each sheet holds, tool version and root"},
    {"case_summary",
     "normalize_manifest.json, segment_manifest.json, classify_manifest.json, summary_manifest.json, "
     "cross_rank_manifest.json, diagnosis_findings.json",
     "root-level counts and statuses from the stage manifests, one key per row"},
    {"rank_summary", layout::kRankSummaryCsv, "one row per rank: steps, segments, layer inventory and window metrics", "", "wall_ms"},
    {"step_summary", layout::kStepSummaryCsv, "one row per segment (steps and other segment types) with window metrics", "", "wall_ms"},
    {"step_anatomy", layout::kStepAnatomyCsv, "head / main / tail / bubble anatomy of each step", "", "step_wall_ms"},
    {"step_class_summary", layout::kStepClassSummaryCsv, "step classes (shape-strict) with member counts and statistics", "", "wall_ms_sum"},
    {"layer_summary", layout::kLayerSummaryCsv, "one row per layer with window metrics and its class", "", "wall_ms"},
    {"layer_class_summary", layout::kLayerClassSummaryCsv, "layer classes with member counts and statistics", "", "wall_ms_sum"},
    {"block_summary", layout::kBlockSummaryCsv, "one row per block (attention, ffn, moe, ...) with bound family and comm share", "", "wall_ms"},
    {"block_class_summary", layout::kBlockClassSummaryCsv, "block classes with member counts and statistics", "", "wall_ms_sum"},
    {"operator_summary", layout::kOperatorSummaryCsv, "per rank and kernel name: calls, duration, wait, bound family", "", "total_cost_sum_us"},
    {"operator_class_summary", layout::kOperatorClassSummaryCsv, "per kernel across ranks: rank skew, bound stage and family", "", "total_cost_sum_us"},
    {"operator_deep_dive", layout::kOperatorDeepDiveCsv,
     "hot operators per root and per rank: per-call metrics, efficiency, host API, rule classifications with verdict, "
     "evidence ids and gaps (rule details in operator_deep_dive.json)",
     "deep_dive_id,rank_id,evidence_ids,classifications,shape_class,input_shapes,input_dtypes,slowest_rank_id,gaps", "total_us"},
    {"hccl_op_summary", layout::kHcclOpSummaryCsv, "per HCCL operation kind and rank: calls, duration, wait", "", "duration_sum_us"},
    {"hccl_class_summary", layout::kHcclClassSummaryCsv, "per HCCL operation kind across ranks, with rank skew", "", "duration_sum_us"},
    {"bubble_windows", layout::kBubbleWindowsJsonl, "the largest device-idle bubbles of each step, with evidence ids"},
    {"wait_anchor_ops", layout::kWaitAnchorOpsCsv, "operators whose cost is mostly waiting (false hotspot risk)", "", "total_cost_avg_us"},
    {"aicpu_summary", layout::kAicpuSummaryCsv, "AI_CPU kernels and how much of them is exposed"},
    {"cross_rank_alignment", layout::kCrossRankAlignmentCsv, "step and operator alignments across ranks", "", "duration_skew_us,wall_skew_us"},
    {"diagnosis_findings", layout::kDiagnosisFindingsJson, "findings that passed the evidence gate, one per row"},
    {"evidence_index", layout::kEvidenceIndexCsv, "evidence ids: step, layer and bubble windows with source row ranges"},
    {"raw_kernel_index", layout::kRawKernelIndexCsv, "kernel rows with event ids (capped; the CSV holds every row)"},
    {"moe_trace_calls", layout::kMoeTraceCallsCsv, "in-kernel MoE trace files per rank: status, kernel row, span, data quality",
     "event_id", "", true},
    {"moe_phases", layout::kMoePhaseSummaryCsv,
     "in-kernel MoE phases per rank, call and core group: count, cores, total / union / per-core us (evidence ids)",
     "evidence_id", "union_us", true},
    {"moe_phase_compare", layout::kMoePhaseCompareCsv, "the same in-kernel MoE phase across ranks, core group by core group",
     "", "max_core_us_max", true},
    {"module_summary", layout::kModuleSummaryCsv,
     "device time per rank and nn.Module path: calls, host us, self and total device us, tasks, share of the rank",
     "module_path,module", "total_device_us", true},
    {"module_ranks", layout::kModuleRanksCsv,
     "per rank: device time in modules, outside every module and without a launch; how launches were placed", "", "", true},
    {"module_compare", layout::kModuleCompareCsv,
     "each nn.Module path across ranks: min / median / max total device us, slowest rank, max / median",
     "module_path,module,slowest_rank,fastest_rank", "total_device_us_max", true},
    {"critical_path", layout::kCriticalPathCsv,
     "each walked step's critical path in time order: rank, kind, interval, µs by kind, op, who waited, evidence id",
     "alignment_id,rank_id,op_name,group,evidence_id", "dur_us", true},
    {"critical_path_steps", layout::kCriticalPathStepsCsv,
     "per walked step: wall and walked µs, the rank that ended last, µs by kind, ranks on the path, hops",
     "alignment_id,end_rank,ranks_on_path", "walked_us", true},
    {"critical_path_ranks", layout::kCriticalPathRanksCsv,
     "per rank: its µs on the critical paths by kind, its share, how long the others waited for it",
     "rank_id", "share", true},
};

/// One cell as text; text_only cells (JSON strings) are never read as numbers.
struct Cell {
  std::string_view text;
  bool text_only = false;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_id_column(std::string_view name) { return ends_with(name, "_id") || ends_with(name, "_ids"); }

// A finite decimal number Excel shows without losing a digit that matters (see kExactDigits), or
// nullopt. Strict: no spaces, no leading '+', no inf/nan, the whole cell.
std::optional<double> exact_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  // significant digits of the whole mantissa, and of the part up to the kKeptDecimals-th decimal
  int digits = 0, kept = 0, zeros = 0, kept_zeros = 0, decimals = -1;
  bool started = false, exponent = false;
  for (const char c : s) {
    if (exponent) {
      if ((c < '0' || c > '9') && c != '+' && c != '-') return std::nullopt;
      continue;
    }
    if (c == 'e' || c == 'E') {
      exponent = true;
      continue;
    }
    if (c == '.') {
      if (decimals >= 0) return std::nullopt;
      decimals = 0;
      continue;
    }
    if (c == '-') continue;  // from_chars rejects it anywhere but first
    if (c < '0' || c > '9') return std::nullopt;
    if (decimals >= 0) ++decimals;
    const bool in_kept = decimals <= kKeptDecimals;
    if (c == '0') {
      if (started) {
        ++zeros;  // significant only when a non-zero digit follows
        if (in_kept) ++kept_zeros;
      }
      continue;
    }
    digits += zeros + 1;
    if (in_kept) kept += kept_zeros + 1;
    zeros = kept_zeros = 0;
    started = true;
  }
  if (digits > kExactDigits && (exponent || kept > kExactDigits)) return std::nullopt;
  double v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return n;
}

// The cell text as the sheet can hold it: invalid UTF-8 bytes become U+FFFD (the XML would be
// unreadable otherwise) and text beyond Excel's 32,767 characters is cut with a visible "…".
const std::string& sheet_text(std::string_view s, std::string& out) {
  out.clear();
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars == kExcelMaxChars - 1 && i < s.size()) {
      // one more character fits: keep it only when it is the last one
      const size_t n = utf8_sequence(s, i);
      if (n != 0 && i + n == s.size()) {
        out.append(s.substr(i, n));
      } else {
        out += "\xE2\x80\xA6";
      }
      return out;
    }
    const size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
    ++chars;
  }
  return out;
}

Status xlsx_error(std::string_view sheet, uint64_t row, lxw_error e) {
  return Status(ErrorCode::kIo, "report.xlsx: sheet " + std::string(sheet) + " row " + std::to_string(row + 1) +
                                    ": " + lxw_strerror(e));
}

/// Streams one table into one worksheet: the first rows are held back until they have decided each
/// column's type and width, then every row is written as it comes (constant memory). Rows beyond the
/// cap are only counted.
class SheetWriter {
 public:
  enum class Kind : uint8_t { kText, kNumber, kPerCell };

  SheetWriter(lxw_worksheet* ws, lxw_format* bold, std::string name, std::string source, uint64_t cap,
              bool per_cell = false)
      : ws_(ws), bold_(bold), name_(std::move(name)), source_(std::move(source)), cap_(cap), per_cell_(per_cell) {}

  /// Columns written as text whatever they hold (comma-separated names).
  void text_columns(std::string_view names) {
    while (!names.empty()) {
      const size_t comma = names.find(',');
      text_columns_.emplace_back(names.substr(0, comma));
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
  }

  template <class Names>
  void header(const Names& names) {
    header_.assign(names.begin(), names.end());
    for (size_t c = 0; c < header_.size() && st_.ok(); ++c) put_string(0, c, header_[c], bold_);
  }

  /// Data rows this sheet may hold.
  uint64_t cap() const { return cap_; }
  /// Counts a source row the sheet leaves out (chosen by the caller, see write_csv_sheet).
  void skip() { ++total_; }
  /// How the kept rows were chosen, for the note row of a capped sheet (default: the first rows).
  void kept_rows_are(std::string how) { kept_how_ = std::move(how); }

  /// Adds a data row (cells beyond the header's width are dropped). False after a write error.
  bool row(const std::vector<Cell>& cells) {
    if (!st_.ok()) return false;
    ++total_;
    if (written_ + sample_.size() >= cap_) return true;
    if (!decided_) {
      auto& held = sample_.emplace_back();
      auto& flags = sample_flags_.emplace_back();
      for (size_t c = 0; c < header_.size(); ++c) {
        held.emplace_back(c < cells.size() ? cells[c].text : std::string_view());
        flags.push_back(c < cells.size() && cells[c].text_only);
      }
      if (sample_.size() >= kSampleRows) decide();
      return st_.ok();
    }
    emit(cells);
    return st_.ok();
  }

  /// Writes the note rows, freezes and filters the header; fills `out`. `absent`: no source file.
  Status finish(XlsxSheet& out, bool absent) {
    out.name = name_;
    out.source = source_;
    if (st_.ok() && header_.empty()) {
      put_string(0, 0, source_ + (absent ? " is absent: no rows" : " is empty: no rows"), nullptr);
    } else if (st_.ok()) {
      if (!decided_) decide();
      const uint64_t last = written_;  // sheet row of the last data row (0 = header only)
      // before the note row: in constant-memory mode the filter may not end above the current row
      worksheet_freeze_panes(ws_, 1, 0);
      check(worksheet_autofilter(ws_, 0, 0, static_cast<lxw_row_t>(last), static_cast<lxw_col_t>(header_.size() - 1)),
            last);
      if (total_ == 0) put_string(1, 0, "no rows in " + source_, nullptr);
      if (total_ > written_)
        put_string(last + 1, 0,
                   "truncated: " + std::to_string(written_) + " of " + std::to_string(total_) + " rows" +
                       (kept_how_.empty() ? "" : ", " + kept_how_) + "; all rows in " + source_,
                   nullptr);
    }
    out.rows_written = written_;
    out.rows_total = total_;
    out.truncated = total_ > written_;
    return st_;
  }

  const Status& status() const { return st_; }

 private:
  void decide() {
    decided_ = true;
    kinds_.assign(header_.size(), Kind::kText);
    for (size_t c = 0; c < header_.size(); ++c) {
      size_t width = utf8_length(header_[c]) + 3;  // room for the filter button
      bool any = false, numeric = true;
      for (size_t r = 0; r < sample_.size(); ++r) {
        const std::string& text = sample_[r][c];
        width = std::max(width, utf8_length(text));
        if (text.empty()) continue;
        any = true;
        if (numeric && (sample_flags_[r][c] || !exact_number(text))) numeric = false;
      }
      if (per_cell_) kinds_[c] = Kind::kPerCell;
      else if (any && numeric && !is_id_column(header_[c]) &&
               std::find(text_columns_.begin(), text_columns_.end(), header_[c]) == text_columns_.end())
        kinds_[c] = Kind::kNumber;
      const double w = std::clamp(static_cast<double>(width) + 1, kMinWidth, kMaxWidth);
      check(worksheet_set_column(ws_, static_cast<lxw_col_t>(c), static_cast<lxw_col_t>(c), w, nullptr), 0);
    }
    std::vector<Cell> cells(header_.size());
    for (size_t r = 0; r < sample_.size() && st_.ok(); ++r) {
      for (size_t c = 0; c < header_.size(); ++c) cells[c] = Cell{sample_[r][c], static_cast<bool>(sample_flags_[r][c])};
      emit(cells);
    }
    sample_.clear();
    sample_.shrink_to_fit();
    sample_flags_.clear();
    sample_flags_.shrink_to_fit();
  }

  void emit(const std::vector<Cell>& cells) {
    const uint64_t row = ++written_;
    const size_t n = std::min(cells.size(), header_.size());
    for (size_t c = 0; c < n && st_.ok(); ++c) {
      const Cell& cell = cells[c];
      if (cell.text.empty()) continue;
      if (kinds_[c] != Kind::kText && !cell.text_only) {
        if (const auto v = exact_number(cell.text)) {
          check(worksheet_write_number(ws_, static_cast<lxw_row_t>(row), static_cast<lxw_col_t>(c), *v, nullptr), row);
          continue;
        }
      }
      put_string(row, c, cell.text, nullptr);
    }
  }

  // write_string stores text as text: a cell starting with '=' never becomes a formula.
  void put_string(uint64_t row, size_t col, std::string_view text, lxw_format* format) {
    check(worksheet_write_string(ws_, static_cast<lxw_row_t>(row), static_cast<lxw_col_t>(col),
                                 sheet_text(text, scratch_).c_str(), format),
          row);
  }

  void check(lxw_error e, uint64_t row) {
    if (e != LXW_NO_ERROR && st_.ok()) st_ = xlsx_error(name_, row, e);
  }

  lxw_worksheet* ws_;
  lxw_format* bold_;
  std::string name_, source_;
  uint64_t cap_;
  bool per_cell_;
  std::vector<std::string> text_columns_;
  std::vector<std::string> header_;
  std::vector<Kind> kinds_;
  bool decided_ = false;
  std::vector<std::vector<std::string>> sample_;
  std::vector<std::vector<char>> sample_flags_;
  uint64_t written_ = 0, total_ = 0;
  std::string kept_how_;
  std::string scratch_;
  Status st_;
};

/// Owned text cells for rows built from JSON (the Cell views point into `texts`).
struct OwnedRow {
  std::vector<std::string> texts;
  std::vector<char> text_only;
  std::vector<Cell> cells;

  void resize(size_t n) {
    texts.assign(n, std::string());
    text_only.assign(n, 0);
  }
  const std::vector<Cell>& view() {
    cells.resize(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) cells[i] = Cell{texts[i], static_cast<bool>(text_only[i])};
    return cells;
  }
};

// A JSON value as cell text: strings as they are, numbers in shortest round-trip form, lists and
// objects as compact JSON, null as an empty cell.
void json_cell(simdjson::dom::element e, std::string& text, char& text_only) {
  using simdjson::dom::element_type;
  text_only = 1;
  switch (e.type()) {
    case element_type::STRING: {
      std::string_view s;
      if (e.get_string().get(s) == simdjson::SUCCESS) text.assign(s);
      break;
    }
    case element_type::INT64: {
      int64_t v = 0;
      if (e.get_int64().get(v) == simdjson::SUCCESS) text = std::to_string(v);
      text_only = 0;
      break;
    }
    case element_type::UINT64: {
      uint64_t v = 0;
      if (e.get_uint64().get(v) == simdjson::SUCCESS) text = std::to_string(v);
      text_only = 0;
      break;
    }
    case element_type::DOUBLE: {
      double v = 0;
      char buf[64];
      if (e.get_double().get(v) == simdjson::SUCCESS) {
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        text.assign(buf, r.ptr);
      }
      text_only = 0;
      break;
    }
    case element_type::BOOL: {
      bool v = false;
      if (e.get_bool().get(v) == simdjson::SUCCESS) text = v ? "true" : "false";
      break;
    }
    case element_type::NULL_VALUE:
      text.clear();
      break;
    default:
      text = simdjson::minify(e);
      break;
  }
}

Status json_parse_error(const fs::path& path, std::string_view place, simdjson::error_code e) {
  return file_error(ErrorCode::kParse, path.string(), place, simdjson::error_message(e));
}

/// The data rows (0-based, source order) a capped sheet keeps: the w.cap() rows with the largest
/// value in the first column of `rank_by` the row fills (ties: the earlier row; empty or non-numeric
/// cells rank last). Empty when every row fits or the table has none of those columns.
Result<std::vector<bool>> rows_to_keep(SheetWriter& w, const fs::path& path, std::string_view rank_by,
                                       std::string* column_used) {
  std::vector<size_t> cols;
  std::vector<std::string> names;
  using Ranked = std::pair<double, uint64_t>;  // (value, ~row: larger for an earlier row)
  const auto better = [](const Ranked& a, const Ranked& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  };
  // with `better` as the heap order, the front is the worst row kept so far
  std::vector<Ranked> heap;
  uint64_t row = 0;
  const uint64_t cap = w.cap();
  const Status st = for_each_row(path, [&](const std::vector<std::string_view>& f, bool is_header) {
    if (is_header) {
      for (std::string_view want = rank_by; !want.empty();) {
        const size_t comma = want.find(',');
        const std::string_view name = want.substr(0, comma);
        for (size_t c = 0; c < f.size(); ++c)
          if (f[c] == name) {
            cols.push_back(c);
            names.emplace_back(name);
          }
        want = comma == std::string_view::npos ? std::string_view() : want.substr(comma + 1);
      }
      return !cols.empty();  // nothing to rank by: stop reading
    }
    double v = -std::numeric_limits<double>::infinity();
    for (const size_t c : cols)
      if (c < f.size() && !f[c].empty()) {
        double x = 0;
        const auto [end, ec] = std::from_chars(f[c].data(), f[c].data() + f[c].size(), x);
        if (ec == std::errc() && end == f[c].data() + f[c].size() && std::isfinite(x)) v = x;
        break;
      }
    const Ranked r{v, ~row};
    ++row;
    if (heap.size() < cap) {
      heap.push_back(r);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(r, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = r;
      std::push_heap(heap.begin(), heap.end(), better);
    }
    return true;
  });
  ASCPROF_RETURN_IF_ERROR(st);
  if (cols.empty() || row <= cap) return std::vector<bool>{};
  std::vector<bool> keep(row, false);
  for (const Ranked& r : heap) keep[~r.second] = true;
  *column_used = names.front();
  for (size_t i = 1; i < names.size(); ++i) *column_used += " (else " + names[i] + ")";
  return keep;
}

Status write_csv_sheet(SheetWriter& w, const fs::path& path, XlsxSheet& out, std::string_view rank_by = {}) {
  const bool absent = !table_present(path);
  std::vector<bool> keep;
  if (!rank_by.empty() && !absent) {
    std::string column;
    ASCPROF_ASSIGN_OR_RETURN(keep, rows_to_keep(w, path, rank_by, &column));
    if (!keep.empty()) w.kept_rows_are("those with the largest " + column + ", in source order");
  }
  std::vector<Cell> cells;
  uint64_t row = 0;
  const Status st = for_each_row(path, [&](const std::vector<std::string_view>& f, bool is_header) {
    if (is_header) {
      w.header(f);
      return w.status().ok();
    }
    if (!keep.empty() && !keep[row++]) {
      w.skip();
      return true;
    }
    cells.resize(f.size());
    for (size_t i = 0; i < f.size(); ++i) cells[i] = Cell{f[i], false};
    return w.row(cells);
  });
  ASCPROF_RETURN_IF_ERROR(st);
  return w.finish(out, absent);
}

// evidence/bubble_windows.jsonl: one column per key of the first object, one row per line.
Status write_jsonl_sheet(SheetWriter& w, const fs::path& path, XlsxSheet& out) {
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::file_size(path, ec) == 0) return w.finish(out, !fs::exists(path, ec));
  ASCPROF_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  const std::string_view data = file.data();
  simdjson::dom::parser parser;
  std::vector<std::string> keys;
  OwnedRow row;
  size_t line_no = 0;
  for (size_t pos = 0; pos < data.size() && w.status().ok();) {
    size_t end = data.find('\n', pos);
    if (end == std::string_view::npos) end = data.size();
    std::string_view line = data.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    simdjson::dom::element doc;
    simdjson::dom::object obj;
    const auto err = parser.parse(line.data(), line.size()).get(doc);
    if (err) return json_parse_error(path, "line " + std::to_string(line_no), err);
    if (doc.get_object().get(obj))
      return file_error(ErrorCode::kSchema, path.string(), "line " + std::to_string(line_no), "not a JSON object");
    if (keys.empty()) {
      for (const auto field : obj) keys.emplace_back(field.key);
      w.header(keys);
      row.resize(keys.size());
    }
    for (size_t c = 0; c < keys.size(); ++c) {
      simdjson::dom::element v;
      row.texts[c].clear();
      row.text_only[c] = 0;
      if (obj.at_key(keys[c]).get(v) == simdjson::SUCCESS) json_cell(v, row.texts[c], row.text_only[c]);
    }
    if (!w.row(row.view())) break;
  }
  return w.finish(out, false);
}

// diagnosis_findings.json: one row per finding, columns the union of the findings' keys in
// first-seen order.
Status write_findings_sheet(SheetWriter& w, const fs::path& path, XlsxSheet& out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return w.finish(out, true);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = parser.load(path.string()).get(doc)) return json_parse_error(path, "", err);
  simdjson::dom::array findings;
  if (doc["diagnosis_findings"].get_array().get(findings))
    return file_error(ErrorCode::kSchema, path.string(), "key diagnosis_findings", "missing or not an array");
  std::vector<std::string> keys;
  for (const auto f : findings) {
    simdjson::dom::object obj;
    if (f.get_object().get(obj)) continue;
    for (const auto field : obj)
      if (std::find(keys.begin(), keys.end(), field.key) == keys.end()) keys.emplace_back(field.key);
  }
  if (!keys.empty()) w.header(keys);
  OwnedRow row;
  row.resize(keys.size());
  size_t index = 0;
  for (const auto f : findings) {
    simdjson::dom::object obj;
    if (f.get_object().get(obj))
      return file_error(ErrorCode::kSchema, path.string(), "key diagnosis_findings[" + std::to_string(index) + "]",
                        "not an object");
    ++index;
    for (size_t c = 0; c < keys.size(); ++c) {
      simdjson::dom::element v;
      row.texts[c].clear();
      row.text_only[c] = 0;
      if (obj.at_key(keys[c]).get(v) == simdjson::SUCCESS) json_cell(v, row.texts[c], row.text_only[c]);
    }
    if (!w.row(row.view())) break;
  }
  return w.finish(out, false);
}

/// key / value / source rows gathered from the manifests.
class CaseSummary {
 public:
  explicit CaseSummary(const fs::path& root_out) : root_out_(root_out) {}

  /// Loads `file`; absent is fine (the stage did not run), unreadable is an error.
  Status load(const char* file) {
    const fs::path path = root_out_ / file;
    std::error_code ec;
    current_ = file;
    loaded_ = false;
    if (!fs::exists(path, ec)) return {};
    if (const auto err = parser_.load(path.string()).get(doc_)) return json_parse_error(path, "", err);
    loaded_ = true;
    return {};
  }

  /// Adds `key` from the JSON pointer of the loaded file, when present.
  void add(std::string key, std::string_view pointer) {
    simdjson::dom::element v;
    if (!loaded_ || doc_.at_pointer(pointer).get(v) != simdjson::SUCCESS) return;
    add_element(std::move(key), v);
  }

  /// Adds `prefix + name` for every member of the object at `pointer` (nested objects flattened one level).
  void add_members(const std::string& prefix, std::string_view pointer) {
    simdjson::dom::object obj;
    if (!loaded_ || doc_.at_pointer(pointer).get_object().get(obj) != simdjson::SUCCESS) return;
    for (const auto field : obj) {
      simdjson::dom::object inner;
      if (field.value.get_object().get(inner) == simdjson::SUCCESS) {
        for (const auto sub : inner) add_element(prefix + std::string(field.key) + "." + std::string(sub.key), sub.value);
      } else {
        add_element(prefix + std::string(field.key), field.value);
      }
    }
  }

  void add_text(std::string key, std::string value, std::string source) {
    rows_.push_back({std::move(key), std::move(value), std::move(source), 1});
  }

  bool loaded() const { return loaded_; }

  Status write(SheetWriter& w, XlsxSheet& out) {
    w.header(std::vector<std::string_view>{"key", "value", "source"});
    OwnedRow row;
    for (const auto& r : rows_) {
      row.resize(3);
      row.texts = {r.key, r.value, r.source};
      row.text_only = {1, r.text_only, 1};
      if (!w.row(row.view())) break;
    }
    return w.finish(out, false);
  }

 private:
  struct Row {
    std::string key, value, source;
    char text_only;
  };

  void add_element(std::string key, simdjson::dom::element v) {
    Row r{std::move(key), {}, current_, 1};
    json_cell(v, r.value, r.text_only);
    rows_.push_back(std::move(r));
  }

  fs::path root_out_;
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
  bool loaded_ = false;
  std::string current_;
  std::vector<Row> rows_;
};

Status build_case_summary(const fs::path& root_out, const std::string& root, CaseSummary& cs) {
  cs.add_text("root", root, layout::kNormalizeManifestJson);
  cs.add_text("output_folder", root_out.string(), "");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kNormalizeManifestJson));
  cs.add("normalize_status", "/status");
  cs.add("rank_count", "/rank_count");
  cs.add("kernel_rows", "/event_count");
  cs.add("pipeline_event_count", "/pipeline_event_count");
  cs.add("pipeline_coverage", "/pipeline_coverage");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kSegmentManifestJson));
  cs.add("segment_count", "/segment_count");
  cs.add("step_count", "/step_count");
  cs.add("layer_count", "/layer_count");
  cs.add("hard_error_count", "/hard_error_count");
  cs.add("interior_island_total", "/interior_island_total");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kClassifyManifestJson));
  cs.add("block_count", "/counts/blocks");
  cs.add("step_classes", "/counts/step_classes");
  cs.add("layer_classes", "/counts/layer_classes");
  cs.add("block_classes", "/counts/block_classes");
  cs.add_members("blocks.", "/counts/block_kind_counts");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kSummaryManifestJson));
  cs.add_members("", "/counts");  // <table>_rows, the reference's names
  cs.add_members("pipeline_coverage.", "/pipeline_coverage");
  cs.add_members("class_summary.", "/class_summary_counts");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kCrossRankManifestJson));
  cs.add("cross_rank_status", "/status");
  cs.add("reference_rank", "/reference_rank");
  cs.add("alignment_count", "/alignment_count");
  cs.add("step_alignment_count", "/step_alignment_count");
  cs.add("operator_alignment_count", "/operator_alignment_count");
  ASCPROF_RETURN_IF_ERROR(cs.load(layout::kDiagnosisFindingsJson));
  cs.add("diagnostics_status", "/stage_status");
  cs.add("finding_count", "/counts/finding_count");
  cs.add("findings_refused_without_evidence", "/counts/refused_without_evidence");
  cs.add_members("findings.", "/counts/by_type");
  return {};
}

// The root as the manifests name it (normalize, else segment), else the folder name.
std::string root_name(const fs::path& root_out) {
  simdjson::dom::parser parser;
  for (const char* file : {layout::kNormalizeManifestJson, layout::kSegmentManifestJson}) {
    simdjson::dom::element doc;
    std::string_view root;
    if (parser.load((root_out / file).string()).get(doc) == simdjson::SUCCESS &&
        doc["root"].get_string().get(root) == simdjson::SUCCESS)
      return std::string(root);
  }
  return root_out.filename().string();
}

Status write_readme(SheetWriter& w, const fs::path& root_out, const std::string& root,
                    const std::vector<XlsxSheet>& sheets, XlsxSheet& out) {
  w.header(std::vector<std::string_view>{"sheet", "source", "rows_in_sheet", "rows_in_source", "truncated",
                                         "description"});
  OwnedRow row;
  const auto add = [&](std::vector<std::string> texts, std::vector<char> text_only) {
    row.texts = std::move(texts);
    row.text_only = std::move(text_only);
    return w.row(row.view());
  };
  add({"(workbook)", "", "", "", "", std::string("ascprof-mpi ") + ASCPROF_VERSION + " report.xlsx"}, {1, 1, 1, 1, 1, 1});
  add({"(tool_version)", "", "", "", "", ASCPROF_VERSION}, {1, 1, 1, 1, 1, 1});
  add({"(root)", "", "", "", "", root}, {1, 1, 1, 1, 1, 1});
  add({"(output_folder)", "", "", "", "", root_out.string()}, {1, 1, 1, 1, 1, 1});
  for (size_t i = 0; i < sheets.size(); ++i) {
    const XlsxSheet& s = sheets[i];
    if (i > 0 && s.name.empty()) continue;  // an optional sheet without its source
    const bool counted = i > 0;
    add({kSheets[i].name, std::string(kSheets[i].source), counted ? std::to_string(s.rows_written) : "",
         counted ? std::to_string(s.rows_total) : "", counted ? (s.truncated ? "true" : "false") : "",
         kSheets[i].description},
        {1, 1, 0, 0, 1, 1});
  }
  add({"(notes)", "", "", "", "",
       "Numbers are number cells; *_id / *_ids columns, the code and list columns of operator_deep_dive and numbers Excel would round in their integer part "
       "or first three decimals (it keeps 15 significant digits, e.g. epoch microseconds) are text. Text is never a formula; cells the CSV writer guarded keep their "
       "leading apostrophe. Capped sheets end with a 'truncated' row; the source files hold every row."},
      {1, 1, 1, 1, 1, 1});
  return w.finish(out, false);
}

struct WorkbookGuard {
  lxw_workbook* wb = nullptr;
  fs::path tmp;
  ~WorkbookGuard() {
    if (wb != nullptr) lxw_workbook_free(wb);
    std::error_code ec;
    if (!tmp.empty()) fs::remove(tmp, ec);
  }
};

}  // namespace

namespace {

bool is_zip_error(lxw_error e) {
  return e == LXW_ERROR_ZIP_FILE_OPERATION || e == LXW_ERROR_ZIP_PARAMETER_ERROR || e == LXW_ERROR_ZIP_BAD_ZIP_FILE ||
         e == LXW_ERROR_ZIP_INTERNAL_ERROR || e == LXW_ERROR_ZIP_FILE_ADD || e == LXW_ERROR_ZIP_CLOSE;
}

/// One attempt at the workbook, written to `guard.tmp`. `close_error` is the workbook_close error.
Status write_workbook(const fs::path& root_out, const fs::path& xlsx_path, const XlsxOptions& options, bool zip64,
                      WorkbookGuard& guard, std::vector<XlsxSheet>& sheets, lxw_error& close_error) {
  close_error = LXW_NO_ERROR;
  // constant memory: each sheet's rows go to a temporary file beside the output, not to the heap
  std::string tmpdir = (xlsx_path.has_parent_path() ? xlsx_path.parent_path() : fs::path(".")).string();
  lxw_workbook_options wopt{};
  wopt.constant_memory = LXW_TRUE;
  wopt.tmpdir = tmpdir.data();
  wopt.use_zip64 = zip64 ? LXW_TRUE : LXW_FALSE;
  guard.wb = workbook_new_opt(guard.tmp.c_str(), &wopt);
  if (guard.wb == nullptr) return file_error(ErrorCode::kIo, xlsx_path.string(), "", "cannot create the workbook");
  lxw_format* bold = workbook_add_format(guard.wb);
  format_set_bold(bold);

  std::vector<lxw_worksheet*> ws;
  for (const SheetSpec& s : kSheets) {
    if (std::error_code ec; s.only_if_present && !fs::exists(root_out / s.source, ec)) {
      ws.push_back(nullptr);  // never written: its XlsxSheet keeps an empty name and is dropped below
      continue;
    }
    lxw_worksheet* w = workbook_add_worksheet(guard.wb, s.name);
    if (w == nullptr) return Status(ErrorCode::kInternal, std::string("report.xlsx: cannot add sheet ") + s.name);
    ws.push_back(w);
  }

  const uint64_t sheet_cap = options.max_sheet_rows - 2;  // header + note row
  sheets.assign(std::size(kSheets), XlsxSheet{});
  const std::string root = root_name(root_out);
  {
    CaseSummary cs(root_out);
    ASCPROF_RETURN_IF_ERROR(build_case_summary(root_out, root, cs));
    SheetWriter w(ws[1], bold, kSheets[1].name, "stage manifests", sheet_cap, /*per_cell=*/true);
    ASCPROF_RETURN_IF_ERROR(cs.write(w, sheets[1]));
    sheets[1].source = kSheets[1].source;
  }
  // The table sheets are independent (each its own worksheet and temporary file; strings are
  // inline in constant-memory mode, so no shared string table), so threads write them side by side,
  // largest source first. The one shared object, the bold format, gets its style index here, before
  // the threads: libxlsxwriter assigns it lazily on first use, which is the only write they would share.
  lxw_format_get_xf_index(bold);
  std::vector<size_t> order;
  std::vector<uintmax_t> source_bytes(std::size(kSheets), 0);
  for (size_t i = 2; i < std::size(kSheets); ++i) {
    std::error_code ec;
    const uintmax_t n = fs::file_size(root_out / kSheets[i].source, ec);
    source_bytes[i] = ec ? 0 : n;
    if (ws[i] != nullptr) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return source_bytes[a] > source_bytes[b]; });
  std::vector<Status> results(std::size(kSheets));
  std::atomic<size_t> next{0};
  const auto write_sheets = [&] {
    for (size_t k = next.fetch_add(1); k < order.size(); k = next.fetch_add(1)) {
      const size_t i = order[k];
      const std::string name = kSheets[i].name;
      const uint64_t cap = name == "raw_kernel_index" ? std::min(options.raw_kernel_index_rows, sheet_cap) : sheet_cap;
      SheetWriter w(ws[i], bold, name, kSheets[i].source, cap);
      w.text_columns(kSheets[i].text_columns);
      const fs::path path = root_out / kSheets[i].source;
      if (name == "bubble_windows") results[i] = write_jsonl_sheet(w, path, sheets[i]);
      else if (name == "diagnosis_findings") results[i] = write_findings_sheet(w, path, sheets[i]);
      // a capped workbook keeps each table's costliest rows; at Excel's own limit (full-raw) every
      // row of any table that fits is kept, without the extra ranking pass over the table
      else results[i] = write_csv_sheet(w, path, sheets[i], sheet_cap < kExcelMaxRows - 2 ? kSheets[i].rank_by : "");
    }
  };
  {
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < options.threads && t < order.size(); ++t) helpers.emplace_back(write_sheets);
    write_sheets();
    for (auto& h : helpers) h.join();
  }
  // the first failing sheet in workbook order, whichever thread met it first
  for (size_t i = 2; i < std::size(kSheets); ++i) ASCPROF_RETURN_IF_ERROR(results[i]);
  {
    SheetWriter w(ws[0], bold, kSheets[0].name, "", sheet_cap, /*per_cell=*/true);
    ASCPROF_RETURN_IF_ERROR(write_readme(w, root_out, root, sheets, sheets[0]));
  }
  std::erase_if(sheets, [](const XlsxSheet& s) { return s.name.empty(); });
  worksheet_activate(ws[0]);

  lxw_workbook* wb = guard.wb;
  guard.wb = nullptr;  // workbook_close frees it, on success and on error
  close_error = workbook_close(wb);
  if (close_error != LXW_NO_ERROR)
    return file_error(ErrorCode::kIo, xlsx_path.string(), "",
                      std::string("writing the workbook: ") + lxw_strerror(close_error));
  return {};
}

}  // namespace

// threads beyond the process's cores would only take turns on them (mpirun binds to one by default)
unsigned default_xlsx_threads() { return std::clamp(usable_cores(), 1u, 4u); }

Result<std::vector<XlsxSheet>> write_report_xlsx(const fs::path& root_out, const fs::path& xlsx_path,
                                                 const XlsxOptions& options) {
  if (options.max_sheet_rows < 3 || options.max_sheet_rows > kExcelMaxRows)
    return Status(ErrorCode::kInvalidArgument, "report.xlsx: max_sheet_rows must be in [3, 1048576]");
  std::error_code ec;
  if (!fs::is_directory(root_out, ec))
    return file_error(ErrorCode::kIo, root_out.string(), "", "not a folder (the root's output folder)");
  if (xlsx_path.has_parent_path()) {
    fs::create_directories(xlsx_path.parent_path(), ec);
    if (ec) return file_error(ErrorCode::kIo, xlsx_path.parent_path().string(), "", ec.message());
  }
  std::vector<XlsxSheet> sheets;
  lxw_error close_error = LXW_NO_ERROR;
  Status st;
  {
    WorkbookGuard guard;
    guard.tmp = temp_sibling(xlsx_path);
    st = write_workbook(root_out, xlsx_path, options, /*zip64=*/false, guard, sheets, close_error);
    if (st.ok()) {
      fs::rename(guard.tmp, xlsx_path, ec);
      if (ec) return file_error(ErrorCode::kIo, xlsx_path.string(), "", "rename from temporary: " + ec.message());
      guard.tmp.clear();
      return sheets;
    }
  }
  // Only a part over 4 GB needs ZIP64 (Excel is strict about ZIP64 records, so it is not the default):
  // the workbook is written again with it.
  if (!is_zip_error(close_error)) return st;
  WorkbookGuard guard;
  guard.tmp = temp_sibling(xlsx_path);
  ASCPROF_RETURN_IF_ERROR(write_workbook(root_out, xlsx_path, options, /*zip64=*/true, guard, sheets, close_error));
  fs::rename(guard.tmp, xlsx_path, ec);
  if (ec) return file_error(ErrorCode::kIo, xlsx_path.string(), "", "rename from temporary: " + ec.message());
  guard.tmp.clear();
  return sheets;
}

}  // namespace ascprof::report
