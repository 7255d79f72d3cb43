#include <algorithm>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {
namespace {
int index_of(const std::vector<std::string>& v, std::string_view s) {
  auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}
}  // namespace

Status Vocabulary::load(const RuleFile& file) {
  for (const auto& block : file.blocks) {
    std::vector<std::string>* target = nullptr;
    if (block.kind == "categories") target = &categories_;
    else if (block.kind == "roles") target = &roles_;
    else if (block.kind == "op_types") target = &op_types_;
    else if (block.kind == "hccl_op_kinds") target = &hccl_kinds_;
    else return file.error(block.line, "unknown block [" + block.kind + "] (expected categories, roles, op_types, hccl_op_kinds)");
    for (const auto& e : block.entries)
      for (const auto& v : e.values) {
        if (index_of(*target, v) >= 0) return file.error(e.line, "'" + v + "' declared twice");
        target->push_back(v);
      }
  }
  if (categories_.size() > kMaxCategories)
    return file.error(1, "more than " + std::to_string(kMaxCategories) + " categories declared");
  if (roles_.size() > kMaxRoles) return file.error(1, "more than " + std::to_string(kMaxRoles) + " roles declared");
  if (op_types_.empty() || hccl_kinds_.empty()) return file.error(1, "[op_types] and [hccl_op_kinds] must not be empty");
  return {};
}

int Vocabulary::category_index(std::string_view name) const { return index_of(categories_, name); }
int Vocabulary::role_index(std::string_view name) const { return index_of(roles_, name); }
int Vocabulary::op_type_index(std::string_view name) const { return index_of(op_types_, name); }
int Vocabulary::hccl_kind_index(std::string_view name) const { return index_of(hccl_kinds_, name); }

CategorySet Vocabulary::categories_under(std::string_view prefix) const {
  CategorySet set;
  for (size_t i = 0; i < categories_.size(); ++i) {
    const std::string& c = categories_[i];
    if (c == prefix || (c.size() > prefix.size() && c.compare(0, prefix.size(), prefix) == 0 && c[prefix.size()] == '.'))
      set.set(i);
  }
  return set;
}

}  // namespace ascprof::knowledge
