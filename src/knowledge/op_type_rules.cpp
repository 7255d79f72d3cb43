#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {
namespace {
std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}
}  // namespace

Status OpTypeRules::load_op_type(const RuleFile& file, const Vocabulary& vocab) {
  auto op_type_value = [&](const RuleEntry& e, int* out) -> Status {
    if (e.values.size() != 1) return file.error(e.line, "expected exactly one op_type after '='");
    *out = vocab.op_type_index(e.values[0]);
    if (*out < 0) return file.error(e.line, "op_type '" + e.values[0] + "' is not declared in vocabulary.rules");
    return {};
  };
  for (const auto& block : file.blocks) {
    if (block.kind == "exact") {
      for (const auto& e : block.entries) {
        int t = -1;
        ASCPROF_RETURN_IF_ERROR(op_type_value(e, &t));
        exact_.emplace_back(upper(e.key), t);
      }
    } else if (block.kind == "fallback") {
      for (const auto& e : block.entries) {
        int t = -1;
        ASCPROF_RETURN_IF_ERROR(op_type_value(e, &t));
        if (e.key == "empty") fallback_.push_back({Fallback::kEmpty, "", t});
        else if (e.key == "default") default_op_type_ = t;
        else if (e.key.starts_with("contains ")) fallback_.push_back({Fallback::kContains, upper(e.key.substr(9)), t});
        else if (e.key.starts_with("suffix ")) fallback_.push_back({Fallback::kSuffix, upper(e.key.substr(7)), t});
        else return file.error(e.line, "fallback key must be 'empty', 'default', 'contains X' or 'suffix X'");
      }
    } else if (block.kind == "comm_aiv_fusion") {
      for (const auto& e : block.entries) {
        if (e.key == "from") ASCPROF_RETURN_IF_ERROR(op_type_value(e, &fusion_from_));
        else if (e.key == "to") ASCPROF_RETURN_IF_ERROR(op_type_value(e, &fusion_to_));
        else if (e.key == "any_positive") fusion_fields_ = e.values;
        else return file.error(e.line, "unknown key '" + e.key + "' (expected from, to, any_positive)");
      }
    } else {
      return file.error(block.line, "unknown block [" + block.kind + "] (expected exact, fallback, comm_aiv_fusion)");
    }
  }
  if (default_op_type_ < 0) return file.error(1, "[fallback] needs a 'default = <op_type>' entry");
  return {};
}

Status OpTypeRules::load_hccl_kind(const RuleFile& file, const Vocabulary& vocab) {
  for (const auto& block : file.blocks) {
    if (block.kind != "exact" && block.kind != "fallback")
      return file.error(block.line, "unknown block [" + block.kind + "] (expected exact, fallback)");
    for (const auto& e : block.entries) {
      if (e.values.size() != 1) return file.error(e.line, "expected exactly one hccl_op_kind after '='");
      const int k = vocab.hccl_kind_index(e.values[0]);
      if (k < 0) return file.error(e.line, "hccl_op_kind '" + e.values[0] + "' is not declared in vocabulary.rules");
      if (block.kind == "exact") hccl_exact_.emplace_back(upper(e.key), k);
      else if (e.key == "default") hccl_default_ = k;
      else return file.error(e.line, "[fallback] takes only 'default = <kind>'");
    }
  }
  if (hccl_default_ < 0) return file.error(1, "[fallback] needs a 'default = <kind>' entry");
  return {};
}

int OpTypeRules::op_type(std::string_view core, bool* exact) const {
  const std::string u = upper(core);
  for (const auto& [key, t] : exact_)
    if (key == u) {
      if (exact != nullptr) *exact = true;
      return t;
    }
  if (exact != nullptr) *exact = false;
  for (const auto& f : fallback_) {
    switch (f.kind) {
      case Fallback::kEmpty:
        if (u.empty()) return f.op_type;
        break;
      case Fallback::kContains:
        if (u.find(f.text) != std::string::npos) return f.op_type;
        break;
      case Fallback::kSuffix:
        if (u.ends_with(f.text)) return f.op_type;
        break;
      case Fallback::kDefault:
        break;
    }
  }
  return default_op_type_;
}

int OpTypeRules::fuse(int op_type, bool exact, bool any_aiv_positive) const {
  if (exact && op_type == fusion_from_ && fusion_to_ >= 0 && any_aiv_positive) return fusion_to_;
  return op_type;
}

int OpTypeRules::hccl_kind(std::string_view type) const {
  const std::string u = upper(type);
  for (const auto& [key, k] : hccl_exact_)
    if (key == u) return k;
  return hccl_default_;
}

}  // namespace ascprof::knowledge
