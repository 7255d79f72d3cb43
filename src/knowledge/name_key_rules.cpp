#include "ascprof/common/blake2b.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

Status NameKeyRules::load(const RuleFile& file, const Vocabulary& vocab) {
  for (const auto& block : file.blocks) {
    for (const auto& e : block.entries) {
      auto number = [&](size_t* out) -> Status {
        // Empty ("") or over 9 digits would make std::stoul throw (nothing may throw out of a loader).
        if (e.values.size() != 1 || e.values[0].empty() || e.values[0].size() > 9 ||
            e.values[0].find_first_not_of("0123456789") != std::string::npos)
          return file.error(e.line, "'" + e.key + "' needs one whole number (at most 9 digits)");
        *out = std::stoul(e.values[0]);
        return {};
      };
      if (block.kind == "name_key") {
        if (e.key == "hex_run_min") ASCPROF_RETURN_IF_ERROR(number(&hex_run_min_));
        else if (e.key == "max_length") ASCPROF_RETURN_IF_ERROR(number(&max_length_));
        else if (e.key == "empty") empty_key_ = e.raw_value;
        else return file.error(e.line, "unknown key '" + e.key + "' (expected hex_run_min, max_length, empty)");
      } else if (block.kind == "shape_signature") {
        if (e.key == "prefix") {
          shape_prefix_ = e.raw_value;
        } else if (e.key == "roles") {
          for (const auto& r : e.values) {
            const int i = vocab.role_index(r);
            if (i < 0) return file.error(e.line, "role '" + r + "' is not declared in vocabulary.rules");
            shape_roles_.set(static_cast<size_t>(i));
          }
        } else {
          return file.error(e.line, "unknown key '" + e.key + "' (expected roles, prefix)");
        }
      } else {
        return file.error(block.line, "unknown block [" + block.kind + "] (expected name_key, shape_signature)");
      }
    }
  }
  if (hex_run_min_ == 0 || max_length_ == 0) return file.error(1, "hex_run_min and max_length must be positive");
  return {};
}

std::string NameKeyRules::name_key(std::string_view name) const {
  auto is_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  std::string s;
  s.reserve(name.size());
  for (char c : name) s += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  // 1. delete 0x... hex literals
  std::string a;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '0' && i + 1 < s.size() && s[i + 1] == 'x') {
      size_t j = i + 2;
      while (j < s.size() && is_hex(s[j])) ++j;
      if (j > i + 2) {
        i = j;
        continue;
      }
    }
    a += s[i++];
  }
  // 2. delete runs of >= hex_run_min hex characters
  std::string b;
  for (size_t i = 0; i < a.size();) {
    size_t j = i;
    while (j < a.size() && is_hex(a[j])) ++j;
    if (j - i >= hex_run_min_) {
      i = j;
      continue;
    }
    if (j == i) {
      b += a[i++];
    } else {
      b.append(a, i, j - i);
      i = j;
    }
  }
  // 3. digit runs -> '#'; 4. every run outside [a-z_] -> '_' (so the '#' of step 3 becomes '_' too,
  // exactly as the reference's two regex substitutions do: MatMulV3 -> matmulv); 5. collapse '_'
  std::string c;
  for (size_t i = 0; i < b.size();) {
    const char ch = b[i];
    if ((ch >= 'a' && ch <= 'z') || ch == '_') {
      c += ch;
      ++i;
    } else {
      while (i < b.size() && !((b[i] >= 'a' && b[i] <= 'z') || b[i] == '_')) ++i;
      if (c.empty() || c.back() != '_') c += '_';
    }
  }
  // '_' itself is kept by step 4, so collapse again and trim.
  std::string d;
  for (char ch : c)
    if (!(ch == '_' && !d.empty() && d.back() == '_')) d += ch;
  size_t lo = d.find_first_not_of('_');
  if (lo == std::string::npos) return empty_key_;
  size_t hi = d.find_last_not_of('_');
  d = d.substr(lo, hi - lo + 1);
  if (d.size() > max_length_) d.resize(max_length_);
  return d.empty() ? empty_key_ : d;
}

std::string NameKeyRules::shape_signature(std::string_view joined_shapes) const {
  if (joined_shapes.empty()) return {};
  return shape_prefix_ + blake2b_hex(joined_shapes, 8);
}

}  // namespace ascprof::knowledge
