#include "ascprof/common/json_writer.hpp"

#include "ascprof/common/utf8.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ascprof {

void json_escape_append(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;  // safe to embed in HTML <script>
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
}

void JsonWriter::newline() {
  if (!pretty_) return;
  out_ += '\n';
  out_.append(first_.size() * 2, ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline();
  }
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
}
void JsonWriter::end_object() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ += '}';
}
void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
}
void JsonWriter::end_array() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ += ']';
}
void JsonWriter::key(std::string_view k) {
  before_value();
  out_ += '"';
  json_escape_append(out_, k);
  out_ += pretty_ ? "\": " : "\":";
  after_key_ = true;
}
void JsonWriter::value(std::string_view v) {
  before_value();
  out_ += '"';
  json_escape_append(out_, v);
  out_ += '"';
}
void JsonWriter::value(int64_t v) {
  before_value();
  out_ += std::to_string(v);
}
void JsonWriter::value(uint64_t v) {
  before_value();
  out_ += std::to_string(v);
}
void JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
}
void JsonWriter::value(bool v) {
  before_value();
  out_ += v ? "true" : "false";
}
void JsonWriter::null() {
  before_value();
  out_ += "null";
}
void JsonWriter::raw(std::string_view json) {
  before_value();
  out_.append(json);
}

void JsonWriter::members(std::string_view object_json) {
  const size_t open = object_json.find('{'), close = object_json.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open) return;
  std::string_view inner = object_json.substr(open + 1, close - open - 1);
  while (!inner.empty() && (inner.front() == ' ' || inner.front() == '\n')) inner.remove_prefix(1);
  while (!inner.empty() && (inner.back() == ' ' || inner.back() == '\n')) inner.remove_suffix(1);
  if (inner.empty()) return;
  before_value();  // the separator, as before a key
  out_.append(inner);
}

}  // namespace ascprof
