#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

namespace {

Status parse_roles(const RuleFile& file, const RuleEntry& e, const Vocabulary& vocab, RoleSet& out) {
  for (const auto& r : e.values) {
    const int i = vocab.role_index(r);
    if (i < 0) return file.error(e.line, "role '" + r + "' is not declared in vocabulary.rules");
    out.set(static_cast<size_t>(i));
  }
  return {};
}

Result<int> parse_category(const RuleFile& file, const RuleEntry& e, const Vocabulary& vocab, const std::string& c) {
  const int i = vocab.category_index(c);
  if (i < 0) return file.error(e.line, "category '" + c + "' is not declared in vocabulary.rules");
  return i;
}

}  // namespace

Status SegmentationRules::load(const RuleFile& file, const Vocabulary& vocab) {
  bool saw_rows = false, saw_anchors = false;
  for (const auto& block : file.blocks) {
    for (const auto& e : block.entries) {
      if (block.kind == "rows") {
        saw_rows = true;
        if (e.key == "boundary_roles") ASCPROF_RETURN_IF_ERROR(parse_roles(file, e, vocab, boundary_roles));
        else if (e.key == "anchor_boundary_roles") ASCPROF_RETURN_IF_ERROR(parse_roles(file, e, vocab, anchor_boundary_roles));
        else if (e.key == "selection_roles") ASCPROF_RETURN_IF_ERROR(parse_roles(file, e, vocab, selection_roles));
        else if (e.key == "structural_roles") ASCPROF_RETURN_IF_ERROR(parse_roles(file, e, vocab, structural_roles));
        else
          return file.error(e.line, "unknown key '" + e.key +
                                        "' (expected boundary_roles, anchor_boundary_roles, selection_roles, structural_roles)");
      } else if (block.kind == "anchors") {
        saw_anchors = true;
        if (e.key == "mla_first_categories") {
          for (const auto& c : e.values) {
            ASCPROF_ASSIGN_OR_RETURN(int i, parse_category(file, e, vocab, c));
            mla_first_categories.push_back(i);
          }
        } else if (e.key == "companion_only_categories") {
          for (const auto& c : e.values) {
            ASCPROF_ASSIGN_OR_RETURN(int i, parse_category(file, e, vocab, c));
            companion_only.set(static_cast<size_t>(i));
          }
        } else if (e.key == "companion_only_prefixes") {
          for (const auto& c : e.values) {
            const CategorySet under = vocab.categories_under(c);
            if (under.none()) return file.error(e.line, "no declared category under prefix '" + c + "'");
            companion_only |= under;
          }
        } else if (e.key == "fallbacks") {
          for (const auto& v : e.values) {
            AnchorFallback f;
            if (v.rfind("role:", 0) == 0) {
              f.role = vocab.role_index(v.substr(5));
              if (f.role < 0) return file.error(e.line, "role '" + v.substr(5) + "' is not declared in vocabulary.rules");
            } else if (v.rfind("category:", 0) == 0 && v.find('@') != std::string::npos) {
              const size_t at = v.find('@');
              ASCPROF_ASSIGN_OR_RETURN(f.category, parse_category(file, e, vocab, v.substr(9, at - 9)));
              f.role = vocab.role_index(v.substr(at + 1));
              if (f.role < 0) return file.error(e.line, "role '" + v.substr(at + 1) + "' is not declared in vocabulary.rules");
            } else {
              return file.error(e.line, "fallback '" + v + "' must be role:<role> or category:<category>@<role>");
            }
            fallbacks.push_back(f);
          }
        } else {
          return file.error(e.line, "unknown key '" + e.key +
                                        "' (expected mla_first_categories, companion_only_categories, "
                                        "companion_only_prefixes, fallbacks)");
        }
      } else if (block.kind == "training") {
        if (e.key == "backward_name_tokens") {
          backward_name_tokens = e.values;
        } else if (e.key == "microbatch_boundary_hccl_kinds") {
          for (const auto& v : e.values) {
            const int k = vocab.hccl_kind_index(v);
            if (k < 0) return file.error(e.line, "HCCL kind '" + v + "' is not declared in vocabulary.rules");
            microbatch_boundary_hccl_kinds.push_back(k);
          }
        } else {
          return file.error(e.line, "unknown key '" + e.key +
                                        "' (expected backward_name_tokens, microbatch_boundary_hccl_kinds)");
        }
      } else {
        return file.error(block.line, "unknown block [" + block.kind + "] (expected rows, anchors, training)");
      }
    }
  }
  if (!saw_rows || !saw_anchors) return file.error(1, "needs a [rows] and an [anchors] block");
  if (selection_roles.none()) return file.error(1, "selection_roles must name at least one role");
  return {};
}

}  // namespace ascprof::knowledge
