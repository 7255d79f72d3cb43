#include <algorithm>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

std::string Taxonomy::fold(std::string_view name, std::string_view type, std::string_view core) {
  std::string out;
  out.reserve(name.size() + type.size() + core.size());
  for (std::string_view part : {name, type, core})
    for (char c : part) {
      if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
      else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += c;
    }
  return out;
}

Status Taxonomy::load(const RuleFile& file, const Vocabulary& vocab) {
  for (const auto& block : file.blocks) {
    if (block.kind != "rule") return file.error(block.line, "unknown block [" + block.kind + "] (expected [rule <id>])");
    if (block.name.empty()) return file.error(block.line, "[rule] needs an id");
    Rule r;
    r.id = block.name;
    bool has_condition = false, has_effect = false;
    for (const auto& e : block.entries) {
      if (e.values.empty()) return file.error(e.line, "'" + e.key + "' has no values");
      auto lower = [&](std::vector<std::string>& dst) -> Status {
        for (const auto& v : e.values) {
          for (char c : v)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
              return file.error(e.line, "token '" + v + "' must be folded text: lower-case a-z and 0-9 only");
          dst.push_back(v);
        }
        has_condition = true;
        return {};
      };
      auto cats = [&](CategorySet& dst, bool as_prefix) -> Status {
        for (const auto& v : e.values) {
          const CategorySet under = vocab.categories_under(v);
          if (as_prefix ? under.none() : vocab.category_index(v) < 0)
            return file.error(e.line, "category '" + v + "' is not declared in vocabulary.rules");
          if (as_prefix) dst |= under;
          else dst.set(static_cast<size_t>(vocab.category_index(v)));
        }
        return {};
      };
      if (e.key == "any") ASCPROF_RETURN_IF_ERROR(lower(r.any));
      else if (e.key == "all") ASCPROF_RETURN_IF_ERROR(lower(r.all));
      else if (e.key == "none") ASCPROF_RETURN_IF_ERROR(lower(r.none));
      else if (e.key == "prefix") ASCPROF_RETURN_IF_ERROR(lower(r.prefix));
      else if (e.key == "has_category") {
        ASCPROF_RETURN_IF_ERROR(cats(r.has_category, true));
        r.has_has_category = true;
      } else if (e.key == "lacks_category") {
        ASCPROF_RETURN_IF_ERROR(cats(r.lacks_category, true));
      } else if (e.key == "add_categories") {
        ASCPROF_RETURN_IF_ERROR(cats(r.add_categories, false));
        has_effect = true;
      } else if (e.key == "add_roles") {
        for (const auto& v : e.values) {
          const int i = vocab.role_index(v);
          if (i < 0) return file.error(e.line, "role '" + v + "' is not declared in vocabulary.rules");
          r.add_roles.set(static_cast<size_t>(i));
        }
        has_effect = true;
      } else {
        return file.error(e.line, "unknown key '" + e.key +
                                      "' (expected any, all, none, prefix, has_category, lacks_category, add_categories, add_roles)");
      }
    }
    if (!has_condition) return file.error(block.line, "rule '" + r.id + "' has no token condition (any/all/prefix)");
    if (!has_effect) return file.error(block.line, "rule '" + r.id + "' adds nothing (add_categories/add_roles)");
    for (const auto& other : rules_)
      if (other.id == r.id) return file.error(block.line, "rule id '" + r.id + "' used twice");
    rules_.push_back(std::move(r));
  }
  if (rules_.empty()) return file.error(1, "no rules");
  return {};
}

Taxon Taxonomy::classify(std::string_view name, std::string_view type, std::string_view core) const {
  const std::string text = fold(name, type, core);
  const std::string_view t(text);
  auto has = [&t](const std::string& tok) { return t.find(tok) != std::string_view::npos; };
  Taxon out;
  for (const auto& r : rules_) {
    if (!r.any.empty() && std::none_of(r.any.begin(), r.any.end(), has)) continue;
    if (!std::all_of(r.all.begin(), r.all.end(), has)) continue;
    if (std::any_of(r.none.begin(), r.none.end(), has)) continue;
    if (!r.prefix.empty() &&
        std::none_of(r.prefix.begin(), r.prefix.end(), [&t](const std::string& p) { return t.starts_with(p); }))
      continue;
    if (r.has_has_category && (out.categories & r.has_category).none()) continue;
    if ((out.categories & r.lacks_category).any()) continue;
    out.categories |= r.add_categories;
    out.roles |= r.add_roles;
  }
  return out;
}

}  // namespace ascprof::knowledge
