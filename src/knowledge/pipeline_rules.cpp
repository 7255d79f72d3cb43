#include "ascprof/knowledge/knowledge.hpp"

#include "ascprof/common/numbers.hpp"

namespace ascprof::knowledge {
namespace {
std::string lower(std::string_view s) {
  std::string out(trim(s));
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
}  // namespace

Status PipelineRules::load(const RuleFile& file) {
  for (const auto& block : file.blocks) {
    if (block.kind == "fields") {
      for (const auto& e : block.entries) {
        PipelineField f;
        f.name = e.key;
        f.aliases.push_back(lower(e.key));
        for (const auto& a : e.values) f.aliases.push_back(lower(a));
        fields_.push_back(std::move(f));
      }
    } else if (block.kind == "stages") {
      for (const auto& e : block.entries) {
        const int i = field_index(e.key);
        if (i < 0) return file.error(e.line, "stage '" + e.key + "' is not listed in [fields]");
        if (e.values.size() != 2) return file.error(e.line, "expected '<group> <family>' after '='");
        if (e.values[0] != "aic" && e.values[0] != "aiv") return file.error(e.line, "group must be 'aic' or 'aiv'");
        auto& f = fields_[static_cast<size_t>(i)];
        f.is_stage = true;
        f.group = e.values[0];
        f.family = e.values[1];
      }
    } else {
      return file.error(block.line, "unknown block [" + block.kind + "] (expected fields, stages)");
    }
  }
  if (fields_.empty()) return file.error(1, "[fields] is empty");
  return {};
}

int PipelineRules::field_index(std::string_view canonical) const {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == canonical) return static_cast<int>(i);
  return -1;
}

int PipelineRules::field_for_header(std::string_view header) const {
  const std::string h = lower(header);
  for (size_t i = 0; i < fields_.size(); ++i)
    for (const auto& a : fields_[i].aliases)
      if (a == h) return static_cast<int>(i);
  return -1;
}

}  // namespace ascprof::knowledge
