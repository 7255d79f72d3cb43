#include "ascprof/knowledge/deep_dive_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

static_assert(kMaxCategories == 128, "DeepDiveCondition::categories mirrors CategorySet");

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Dtype words compare without case and without the DT_ prefix (E1 writes DT_BF16, E2 FLOAT16).
std::string dtype_key(std::string_view s) {
  std::string u = upper(s);
  if (u.rfind("DT_", 0) == 0) u.erase(0, 3);
  return u;
}

template <size_t N>
int index_of(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

bool parse_number(const std::string& text, double* out) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(x)) return false;
  *out = x;
  return true;
}

Status one_number(const RuleFile& file, const RuleEntry& e, double* out) {
  if (e.values.size() != 1 || !parse_number(e.values[0], out) || *out < 0)
    return file.error(e.line, "'" + e.key + "' needs one non-negative number");
  return {};
}

Status one_count(const RuleFile& file, const RuleEntry& e, size_t* out) {
  double x = 0;
  ASCPROF_RETURN_IF_ERROR(one_number(file, e, &x));
  if (x != std::floor(x) || x > 1e6) return file.error(e.line, "'" + e.key + "' needs a whole number");
  *out = static_cast<size_t>(x);
  return {};
}

Status parse_condition(const RuleFile& file, const RuleEntry& e, const Vocabulary& vocab, DeepDiveCondition* c) {
  c->line = e.line;
  c->text = e.raw_value;
  if (e.values.size() < 3)
    return file.error(e.line, "a condition is 'FEATURE OP VALUE...', e.g. 'aiv_scalar_ratio >= 0.4'");
  const std::string& feature = e.values[0];
  const std::string& op = e.values[1];
  static const std::map<std::string, DeepDiveCondition::Op> kOps = {
      {">=", DeepDiveCondition::Op::kGe}, {">", DeepDiveCondition::Op::kGt},      {"<=", DeepDiveCondition::Op::kLe},
      {"<", DeepDiveCondition::Op::kLt},  {"==", DeepDiveCondition::Op::kEq},     {"!=", DeepDiveCondition::Op::kNe},
      {"in", DeepDiveCondition::Op::kIn}, {"not_in", DeepDiveCondition::Op::kNotIn}, {"has", DeepDiveCondition::Op::kHas},
      {"lacks", DeepDiveCondition::Op::kLacks}};
  const auto it = kOps.find(op);
  if (it == kOps.end()) return file.error(e.line, "unknown operator '" + op + "' (>= > <= < == != in not_in has lacks)");
  c->op = it->second;
  const bool numeric_op = c->op <= DeepDiveCondition::Op::kNe;
  if (int i = deep_dive_number_index(feature); i >= 0) {
    if (!numeric_op || e.values.size() != 3 || !parse_number(e.values[2], &c->number))
      return file.error(e.line, "numeric feature '" + feature + "' needs one of >= > <= < == != and one number");
    c->kind = DeepDiveCondition::Kind::kNumber;
    c->feature = i;
    return {};
  }
  if (int i = index_of(kDeepDiveWords, feature); i >= 0) {
    if (c->op != DeepDiveCondition::Op::kIn && c->op != DeepDiveCondition::Op::kNotIn)
      return file.error(e.line, "word feature '" + feature + "' takes 'in' or 'not_in'");
    c->kind = DeepDiveCondition::Kind::kWord;
    c->feature = i;
    for (size_t k = 2; k < e.values.size(); ++k)
      c->words.push_back(feature == "task_type" ? upper(e.values[k]) : e.values[k]);
    return {};
  }
  if (int i = index_of(kDeepDiveLists, feature); i >= 0) {
    if (c->op != DeepDiveCondition::Op::kHas && c->op != DeepDiveCondition::Op::kLacks)
      return file.error(e.line, "list feature '" + feature + "' takes 'has' or 'lacks'");
    c->kind = DeepDiveCondition::Kind::kList;
    c->feature = i;
    for (size_t k = 2; k < e.values.size(); ++k) {
      if (feature == "categories") {
        const CategorySet under = vocab.categories_under(e.values[k]);
        if (under.none())
          return file.error(e.line, "category '" + e.values[k] + "' is not declared in vocabulary.rules");
        c->categories |= under;
      } else {
        c->words.push_back(dtype_key(e.values[k]));
      }
    }
    return {};
  }
  return file.error(e.line, "unknown feature '" + feature + "' (the features are listed in the file header)");
}

Status load_rule(const RuleFile& file, const RuleBlock& block, const Vocabulary& vocab, DeepDiveRule* r) {
  r->id = block.name;
  if (r->id.empty()) return file.error(block.line, "[rule] needs an id, e.g. [rule vector_scalar_heavy]");
  for (const auto& e : block.entries) {
    if (e.key == "when" || e.key == "test" || e.key == "high_when") {
      DeepDiveCondition c;
      ASCPROF_RETURN_IF_ERROR(parse_condition(file, e, vocab, &c));
      (e.key == "when" ? r->when : e.key == "test" ? r->test : r->high_when).push_back(std::move(c));
    } else if (e.key == "cite") {
      for (const auto& v : e.values) {
        const int i = deep_dive_number_index(v);
        if (i < 0) return file.error(e.line, "cite: unknown numeric feature '" + v + "'");
        r->cite.push_back(i);
      }
    } else if (e.key == "severity") {
      static const std::set<std::string> kSeverities = {"high", "medium", "low", "info"};
      if (e.values.size() != 1 || !kSeverities.count(e.values[0]))
        return file.error(e.line, "severity must be high, medium, low or info");
      r->severity = e.values[0];
    } else if (e.key == "title") {
      r->title = e.raw_value;
    } else if (e.key == "inference") {
      r->inference = e.raw_value;
    } else if (e.key == "cause") {
      r->cause = e.raw_value;
    } else if (e.key == "suggestion") {
      r->suggestion = e.raw_value;
    } else {
      return file.error(e.line, "unknown key '" + e.key + "' in [rule " + r->id + "]");
    }
  }
  for (std::string* text : {&r->title, &r->inference, &r->cause, &r->suggestion}) {
    if (text->size() >= 2 && text->front() == '"' && text->back() == '"') *text = text->substr(1, text->size() - 2);
  }
  if (r->test.empty()) return file.error(block.line, "[rule " + r->id + "] needs at least one 'test'");
  if (r->severity.empty() || r->title.empty() || r->cause.empty() || r->suggestion.empty() || r->inference.empty())
    return file.error(block.line, "[rule " + r->id + "] needs title, severity, inference, cause and suggestion");
  return {};
}

std::string unquote(const std::string& raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') return raw.substr(1, raw.size() - 2);
  return raw;
}

}  // namespace

int deep_dive_number_index(std::string_view name) { return index_of(kDeepDiveNumbers, name); }

const ChipSpec* DeepDiveRules::chip(std::string_view name) const {
  for (const auto& c : chips)
    if (c.name == name) return &c;
  return nullptr;
}

int DeepDiveRules::bytes_of(std::string_view dtype) const {
  const std::string key = dtype_key(dtype);
  for (const auto& [name, bytes] : dtype_bytes)
    if (name == key) return bytes;
  return 0;
}

Status DeepDiveRules::load(const RuleFile& file, const Vocabulary& vocab) {
  *this = DeepDiveRules{};
  std::set<std::string> seen_rules;
  bool has_selection = false;
  for (const auto& block : file.blocks) {
    if (block.kind == "selection") {
      has_selection = true;
      for (const auto& e : block.entries) {
        if (e.key == "coverage") {
          ASCPROF_RETURN_IF_ERROR(one_number(file, e, &coverage));
          if (coverage > 1) return file.error(e.line, "coverage is a share between 0 and 1");
        } else if (e.key == "min_operators") {
          ASCPROF_RETURN_IF_ERROR(one_count(file, e, &min_operators));
        } else if (e.key == "max_operators") {
          ASCPROF_RETURN_IF_ERROR(one_count(file, e, &max_operators));
        } else if (e.key == "evidence_rows") {
          ASCPROF_RETURN_IF_ERROR(one_count(file, e, &evidence_rows));
        } else {
          return file.error(e.line, "unknown key '" + e.key + "' in [selection]");
        }
      }
      if (max_operators == 0 || min_operators > max_operators)
        return file.error(block.line, "[selection] needs 0 < min_operators <= max_operators");
    } else if (block.kind == "defaults") {
      for (const auto& e : block.entries) {
        if (e.key != "chip" || e.values.size() != 1) return file.error(e.line, "[defaults] takes 'chip = NAME'");
        default_chip = e.values[0];
      }
    } else if (block.kind == "cores") {
      for (const auto& e : block.entries) {
        if (e.key != "cube" && e.key != "vector") return file.error(e.line, "[cores] takes 'cube = ...' and 'vector = ...'");
        auto& list = e.key == "cube" ? cube_task_types : vector_task_types;
        for (const auto& v : e.values) list.push_back(upper(v));
      }
    } else if (block.kind == "chip") {
      ChipSpec c;
      c.name = block.name;
      if (c.name.empty() || chip(c.name) != nullptr)
        return file.error(block.line, "[chip NAME] needs a name used once");
      std::map<std::string, double*> reals = {{"cube_cores", &c.cube_cores},
                                              {"vector_cores", &c.vector_cores},
                                              {"cube_tflops", &c.cube_tflops},
                                              {"hbm_gbps", &c.hbm_gbps}};
      std::set<std::string> got;
      for (const auto& e : block.entries) {
        if (e.key == "source") {
          c.source = unquote(e.raw_value);
          continue;
        }
        const auto it = reals.find(e.key);
        if (it == reals.end()) return file.error(e.line, "unknown key '" + e.key + "' in [chip " + c.name + "]");
        ASCPROF_RETURN_IF_ERROR(one_number(file, e, it->second));
        if (*it->second <= 0) return file.error(e.line, "'" + e.key + "' must be positive");
        got.insert(e.key);
      }
      if (got.size() != reals.size() || c.source.empty())
        return file.error(block.line, "[chip " + c.name + "] needs cube_cores, vector_cores, cube_tflops, hbm_gbps and source");
      chips.push_back(std::move(c));
    } else if (block.kind == "dtype_bytes") {
      for (const auto& e : block.entries) {
        double b = 0;
        if (!parse_number(e.key, &b) || b < 1 || b > 64 || b != std::floor(b))
          return file.error(e.line, "[dtype_bytes] keys are byte counts, e.g. '2 = FLOAT16 BF16'");
        for (const auto& v : e.values) dtype_bytes.emplace_back(dtype_key(v), static_cast<int>(b));
      }
    } else if (block.kind == "work") {
      WorkRule w;
      w.name = block.name;
      bool has_formula = false;
      for (const auto& e : block.entries) {
        if (e.key == "formula") {
          static const std::map<std::string, WorkRule::Formula> kFormulas = {
              {"matmul", WorkRule::Formula::kMatmul},
              {"grouped_matmul", WorkRule::Formula::kGroupedMatmul},
              {"bytes", WorkRule::Formula::kBytes}};
          const auto it = e.values.size() == 1 ? kFormulas.find(e.values[0]) : kFormulas.end();
          if (it == kFormulas.end()) return file.error(e.line, "formula must be matmul, grouped_matmul or bytes");
          w.formula = it->second;
          has_formula = true;
        } else if (e.key == "kernel_types") {
          w.kernel_types = e.values;
        } else if (e.key == "task_types") {
          for (const auto& v : e.values) w.task_types.push_back(upper(v));
        } else {
          return file.error(e.line, "unknown key '" + e.key + "' in [work " + w.name + "]");
        }
      }
      if (!has_formula || (w.kernel_types.empty() && w.task_types.empty()))
        return file.error(block.line, "[work " + w.name + "] needs a formula and kernel_types or task_types");
      work.push_back(std::move(w));
    } else if (block.kind == "host_rule") {
      HostRule h;
      h.id = block.name;
      bool has_share = false;
      for (const auto& e : block.entries) {
        if (e.key == "apis") {
          h.apis = e.values;
        } else if (e.key == "min_share") {
          ASCPROF_RETURN_IF_ERROR(one_number(file, e, &h.min_share));
          has_share = true;
        } else if (e.key == "title") {
          h.title = unquote(e.raw_value);
        } else if (e.key == "cause") {
          h.cause = unquote(e.raw_value);
        } else if (e.key == "suggestion") {
          h.suggestion = unquote(e.raw_value);
        } else {
          return file.error(e.line, "unknown key '" + e.key + "' in [host_rule " + h.id + "]");
        }
      }
      if (h.id.empty() || h.apis.empty() || !has_share || h.title.empty() || h.cause.empty() || h.suggestion.empty())
        return file.error(block.line, "[host_rule ID] needs apis, min_share, title, cause and suggestion");
      host_rules.push_back(std::move(h));
    } else if (block.kind == "rule") {
      DeepDiveRule r;
      ASCPROF_RETURN_IF_ERROR(load_rule(file, block, vocab, &r));
      if (!seen_rules.insert(r.id).second) return file.error(block.line, "rule '" + r.id + "' is defined twice");
      rules.push_back(std::move(r));
    } else {
      return file.error(block.line, "unknown block [" + block.kind + "]");
    }
  }
  if (!has_selection) return file.error(1, "missing [selection] block");
  if (chip(default_chip) == nullptr)
    return file.error(1, "[defaults] chip '" + default_chip + "' has no [chip " + default_chip + "] block");
  if (dtype_bytes.empty()) return file.error(1, "missing [dtype_bytes] block");
  if (cube_task_types.empty() || vector_task_types.empty()) return file.error(1, "missing [cores] cube / vector task types");
  return {};
}

}  // namespace ascprof::knowledge
