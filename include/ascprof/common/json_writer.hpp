#pragma once
/// A small streaming JSON writer for manifests and results (not for hot loops).
/// Escapes every string (control characters, quotes, backslashes; invalid UTF-8 bytes become U+FFFD)
/// so kernel names and paths from input can never break the document.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ascprof {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void value(std::string_view v);
  void value(const char* v) { value(std::string_view(v)); }
  void value(const std::string& v) { value(std::string_view(v)); }
  void value(int64_t v);
  void value(uint64_t v);
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(unsigned v) { value(static_cast<uint64_t>(v)); }
  void value(long long v) { value(static_cast<int64_t>(v)); }
  void value(unsigned long long v) { value(static_cast<uint64_t>(v)); }
  /// Non-finite doubles are written as null (JSON has no NaN).
  void value(double v);
  void value(bool v);
  void null();
  /// Inserts an already-serialised JSON value verbatim.
  void raw(std::string_view json);
  /// Inserts the members of an already-serialised object ("{...}") into the open object, as if each
  /// had been written here (a finding's own metrics, then its row's other columns).
  void members(std::string_view object_json);

  template <typename T>
  void kv(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

  const std::string& str() const { return out_; }
  /// Bytes of text not yet taken.
  size_t size() const { return out_.size(); }
  /// The text so far; the writer goes on after it (a long document can be written out in pieces).
  std::string take() {
    std::string text = std::move(out_);
    out_.clear();
    return text;
  }

 private:
  void before_value();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
  bool pretty_;
};

/// Appends `s` JSON-escaped (without quotes) to `out`.
void json_escape_append(std::string& out, std::string_view s);

}  // namespace ascprof
