#include "ascprof/knowledge/rule_file.hpp"

#include <cmath>
#include <cstdlib>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::knowledge {

Status RuleFile::error(int line, std::string_view reason) const {
  return file_error(ErrorCode::kKnowledge, path, "line " + std::to_string(line), reason);
}

namespace {

// Splits on whitespace; "double quoted" groups keep their spaces.
bool split_values(std::string_view s, std::vector<std::string>& out) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    if (s[i] == '"') {
      const size_t close = s.find('"', i + 1);
      if (close == std::string_view::npos) return false;
      out.emplace_back(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      size_t j = i;
      while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
      out.emplace_back(s.substr(i, j - i));
      i = j;
    }
  }
  return true;
}

}  // namespace

Result<RuleFile> parse_rule_text(std::string_view text, std::string display_path) {
  RuleFile file;
  file.path = std::move(display_path);
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = trim(text.substr(pos, nl - pos));
    ++line_no;
    pos = nl + 1;
    if (line.empty() || line.front() == '#') {
      if (nl == text.size()) break;
      continue;
    }
    if (line.front() == '[') {
      if (line.back() != ']') return file.error(line_no, "block header must end with ']'");
      std::string_view inner = trim(line.substr(1, line.size() - 2));
      if (inner.empty()) return file.error(line_no, "empty block header '[]'");
      RuleBlock block;
      const size_t sp = inner.find_first_of(" \t");
      block.kind = std::string(inner.substr(0, sp));
      if (sp != std::string_view::npos) block.name = std::string(trim(inner.substr(sp)));
      block.line = line_no;
      file.blocks.push_back(std::move(block));
    } else {
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos) return file.error(line_no, "expected 'key = values' or '[block]'");
      if (file.blocks.empty()) return file.error(line_no, "entry before the first [block]");
      RuleEntry e;
      e.key = std::string(trim(line.substr(0, eq)));
      if (e.key.empty()) return file.error(line_no, "empty key before '='");
      std::string_view value = trim(line.substr(eq + 1));
      // Allow trailing comments after values: " # ...".
      if (const size_t hash = value.find(" #"); hash != std::string_view::npos) value = trim(value.substr(0, hash));
      e.raw_value = std::string(value);
      if (!split_values(value, e.values)) return file.error(line_no, "unterminated double quote");
      e.line = line_no;
      file.blocks.back().entries.push_back(std::move(e));
    }
    if (nl == text.size()) break;
  }
  return file;
}

Result<RuleFile> load_rule_file(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text.ok()) return text.status();
  return parse_rule_text(*text, path.string());
}

Status rule_number(const RuleFile& file, const RuleEntry& e, double* out) {
  char* end = nullptr;
  const double x = e.values.size() == 1 ? std::strtod(e.values[0].c_str(), &end) : -1;
  if (e.values.size() != 1 || end == e.values[0].c_str() || *end != '\0' || !std::isfinite(x) || x < 0)
    return file.error(e.line, "'" + e.key + "' needs one non-negative number");
  *out = x;
  return {};
}

}  // namespace ascprof::knowledge
