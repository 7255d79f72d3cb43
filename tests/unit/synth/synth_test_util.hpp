#pragma once
/// Independent readers for checking synthetic captures in tests: a strict little JSON DOM parser and
/// an RFC-4180 CSV reader. Deliberately separate from the project's importers, so the generator is
/// checked against the formats, not against our own parsers.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ascprof::synth::testutil {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool b = false;
  double num = 0;
  std::string text;  ///< string value, or the number's literal text
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* find(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
  const Json& at(std::string_view key) const {
    static const Json kNull;
    const Json* j = find(key);
    return j != nullptr ? *j : kNull;
  }
  bool is_string() const { return type == Type::kString; }
  bool is_number() const { return type == Type::kNumber; }
};

/// Strict JSON (RFC 8259) parser; `error` is set (with a byte offset) on failure.
class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}
  bool parse(Json& out, std::string& error) {
    ws();
    if (!value(out, 0)) {
      error = err_ + " at byte " + std::to_string(i_);
      return false;
    }
    ws();
    if (i_ != s_.size()) {
      error = "trailing data at byte " + std::to_string(i_);
      return false;
    }
    return true;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool fail(const char* m) {
    err_ = m;
    return false;
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return fail("bad literal");
    i_ += w.size();
    return true;
  }
  bool value(Json& v, int depth) {
    if (depth > 64) return fail("too deep");
    if (i_ >= s_.size()) return fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.type = Json::Type::kString;
      return string(v.text);
    }
    if (c == 't') { v.type = Json::Type::kBool; v.b = true; return lit("true"); }
    if (c == 'f') { v.type = Json::Type::kBool; return lit("false"); }
    if (c == 'n') return lit("null");
    return number(v);
  }
  bool number(Json& v) {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !isdigit(s_[i_])) return fail("bad number");
    if (s_[i_] == '0') ++i_;
    else while (i_ < s_.size() && isdigit(s_[i_])) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !isdigit(s_[i_])) return fail("bad fraction");
      while (i_ < s_.size() && isdigit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !isdigit(s_[i_])) return fail("bad exponent");
      while (i_ < s_.size() && isdigit(s_[i_])) ++i_;
    }
    v.type = Json::Type::kNumber;
    v.text.assign(s_.substr(start, i_ - start));
    v.num = std::strtod(v.text.c_str(), nullptr);
    return true;
  }
  static bool isdigit(char c) { return c >= '0' && c <= '9'; }
  bool string(std::string& out) {
    ++i_;  // opening quote
    out.clear();
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return fail("bad escape");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) return fail("bad \\u escape");
          for (int k = 0; k < 4; ++k)
            if (!std::isxdigit(static_cast<unsigned char>(s_[i_ + static_cast<size_t>(k)]))) return fail("bad \\u escape");
          out += '?';
          i_ += 4;
          break;
        }
        default: return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }
  bool array(Json& v, int depth) {
    v.type = Json::Type::kArray;
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      ws();
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
      ws();
      if (i_ >= s_.size()) return fail("unterminated array");
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == ']') { ++i_; return true; }
      return fail("expected , or ]");
    }
  }
  bool object(Json& v, int depth) {
    v.type = Json::Type::kObject;
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      ws();
      if (i_ >= s_.size() || s_[i_] != '"') return fail("expected key");
      std::string key;
      if (!string(key)) return false;
      ws();
      if (i_ >= s_.size() || s_[i_] != ':') return fail("expected :");
      ++i_;
      ws();
      v.members.emplace_back(std::move(key), Json());
      if (!value(v.members.back().second, depth + 1)) return false;
      ws();
      if (i_ >= s_.size()) return fail("unterminated object");
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == '}') { ++i_; return true; }
      return fail("expected , or }");
    }
  }
  std::string_view s_;
  size_t i_ = 0;
  std::string err_;
};

inline bool parse_json(std::string_view text, Json& out, std::string& error) { return JsonParser(text).parse(out, error); }

/// RFC-4180 CSV: quoted fields with "" escapes; rows end with CRLF or LF. `crlf_only` reports
/// whether every line ended with CRLF.
inline std::vector<std::vector<std::string>> parse_csv(std::string_view s, bool* crlf_only = nullptr) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, all_crlf = true;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < s.size() && s[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (field.empty() || field.back() != '\r') all_crlf = false;
      else field.pop_back();
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
    all_crlf = false;
  }
  if (crlf_only != nullptr) *crlf_only = all_crlf;
  return rows;
}

}  // namespace ascprof::synth::testutil
