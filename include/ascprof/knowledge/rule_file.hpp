#pragma once
/// The knowledge/ rule-file format: human-edited text, loaded at run time.
///
///   # comment (whole line, or after whitespace)
///   [kind name]          starts a block (name optional)
///   key = v1 v2 "v 3"    an entry: values split on whitespace, double quotes group words
///
/// Parsing only checks syntax; each consumer validates its own keys and values and reports
/// "file:line: reason" for anything it does not know.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::knowledge {

struct RuleEntry {
  std::string key;
  std::vector<std::string> values;
  std::string raw_value;  ///< text after '=' trimmed, before splitting
  int line = 0;
};

struct RuleBlock {
  std::string kind;  ///< first word inside [...]
  std::string name;  ///< rest inside [...], trimmed ("" if none)
  int line = 0;
  std::vector<RuleEntry> entries;
};

struct RuleFile {
  std::string path;  ///< for messages
  std::vector<RuleBlock> blocks;
  /// "path:line: reason" as a kKnowledge Status.
  Status error(int line, std::string_view reason) const;
};

/// The one non-negative finite number of entry `e` (kKnowledge "file:line: 'key' needs one
/// non-negative number" otherwise).
Status rule_number(const RuleFile& file, const RuleEntry& e, double* out);

/// Parses rule text; `display_path` names it in errors. kKnowledge error on syntax problems.
Result<RuleFile> parse_rule_text(std::string_view text, std::string display_path);
/// Reads and parses a rule file; kIo if unreadable.
Result<RuleFile> load_rule_file(const std::filesystem::path& path);

}  // namespace ascprof::knowledge
