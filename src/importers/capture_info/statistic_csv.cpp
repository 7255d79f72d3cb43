#include "statistic_csv.hpp"

#include <cmath>

namespace ascprof::importers::statistic_csv {

namespace {

bool all_blank(std::string_view data) {
  for (char c : data)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') return false;
  return true;
}

}  // namespace

Status Table::open(std::string_view content, std::string_view display_name, Stats& stats) {
  display_ = std::string(display_name);
  stats_ = &stats;
  // Rows of the wrong width are skipped here rather than padded, so the tokenizer must not pad them.
  CsvOptions opt;
  opt.fix_width = false;
  cursor_ = std::make_unique<CsvCursor>(content, display_name, stats, opt);
  std::vector<std::string_view> f;
  if (!cursor_->next_row(f)) {
    if (!cursor_->status().ok()) return cursor_->status();
    std::string_view body = content;
    if (body.size() >= 3 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
    if (all_blank(body)) return file_error(ErrorCode::kSchema, display_name, "", "empty file");
    return file_error(ErrorCode::kParse, display_name, "line 1", "no complete header row (unterminated quote)");
  }
  header_ = std::make_unique<CsvHeader>(f);
  header_line_ = cursor_->line();
  return {};
}

Status Table::require(std::string_view name, int* col) const {
  *col = header_->find(name);
  if (*col < 0)
    return file_error(ErrorCode::kSchema, display_, "line " + std::to_string(header_line_),
                      "missing required column '" + std::string(name) + "' (header has: " + header_->joined() + ")");
  return {};
}

bool Table::next(Stat bad_row, std::vector<std::string_view>& fields) {
  while (cursor_->next_row(fields)) {
    if (fields.size() == header_->size()) return true;
    skip(bad_row, std::to_string(fields.size()) + " fields, header has " + std::to_string(header_->size()));
  }
  return false;
}

void Table::skip(Stat bad_row, const std::string& reason) {
  note_line(*stats_, bad_row, display_, cursor_->line(), reason + "; row skipped");
}

std::optional<uint64_t> parse_count(std::string_view cell) {
  if (auto v = parse_int64(cell)) {
    if (*v >= 0) return static_cast<uint64_t>(*v);
    return std::nullopt;
  }
  if (auto d = parse_double(cell); d && *d >= 0 && *d < 1.8e19 && std::floor(*d) == *d) return static_cast<uint64_t>(*d);
  return std::nullopt;
}

}  // namespace ascprof::importers::statistic_csv
