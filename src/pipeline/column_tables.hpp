#pragma once
// The compact-JSON cells of the column tables, and reading a table of a rank's HDF5 file (the
// store's layout: one compound dataset per table, read whole; or an older group of equal-length
// 1-D columns with `row_count`) with every damage reported as kSchema naming file, table and row.
// Private to the pipeline module; used by structure_store.cpp and summary_store.cpp.
#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/store/h5_reader.hpp"

namespace ascprof::pipeline {

using simdjson::dom::element;

// ["a","b"]: a list of strings as one cell.
inline std::string json_strings(const std::vector<std::string>& v) {
  JsonWriter w(false);
  w.begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
  return w.take();
}

// [1,2]: a list of row indices as one cell.
inline std::string json_indices(const std::vector<uint32_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
  return out;
}

// "row 3": a place in an error message.
inline std::string at(const char* what, size_t i) { return std::string(what) + " " + std::to_string(i); }

// The enum value whose name (as `to_name` spells it) is `name`; false if none of the `count` values.
template <class E>
inline bool parse_enum(std::string_view name, const char* (*to_name)(E), int count, E* out) {
  for (int i = 0; i < count; ++i) {
    const E e = static_cast<E>(i);
    if (name == to_name(e)) {
      *out = e;
      return true;
    }
  }
  return false;
}

// Reads the columns of one table, keeping the first error (later calls then return empty vectors).
class TableReader {
 public:
  TableReader(const store::H5Reader& r, std::string group) : r_(r), group_(std::move(group)) {
    // TableWriter's compound table: one open and one read (the root reads every rank's tables, so
    // no lookups beyond that)
    if (auto d = r_.read_table(group_); d.ok()) {
      rows_ = d->rows();
      data_.emplace(std::move(d).value());
      return;
    } else if (r_.kind(group_) == store::ObjectKind::kDataset) {
      st_ = d.status();  // a damaged table
      return;
    }
    // an older file's table: a group of columns with row_count
    if (!r_.is_table(group_)) {
      fail("missing table");
      return;
    }
    auto rows = r_.uint_attr(group_, "row_count");
    if (!rows.ok()) {
      st_ = rows.status();
      return;
    }
    rows_ = *rows;
  }

  uint64_t rows() const { return rows_; }
  const Status& status() const { return st_; }
  bool ok() const { return st_.ok(); }
  const std::string& group() const { return group_; }

  template <class T>
  std::vector<T> num(const std::string& name) {
    if (!present(name)) return {};
    auto v = data_ ? data_->column<T>(name) : r_.read_column<T>(group_ + "/" + name);
    if (!v.ok()) {
      st_ = v.status();
      return {};
    }
    if (!check_len(name, v->size())) return {};
    return std::move(v).value();
  }

  std::vector<std::string> str(const std::string& name) {
    if (!present(name)) return {};
    auto v = data_ ? data_->strings(name) : r_.read_strings(group_ + "/" + name);
    if (!v.ok()) {
      st_ = v.status();
      return {};
    }
    if (!check_len(name, v->size())) return {};
    return std::move(v).value();
  }

  // A column of JSON cells parsed by `parse` (nullptr or the reason); with `blank_is_empty` an
  // empty cell stands for a default T.
  template <class T>
  std::vector<T> json(const std::string& name, const char* (*parse)(element, T*), bool blank_is_empty = false) {
    std::vector<std::string> raw = str(name);
    std::vector<T> out(raw.size());
    for (size_t i = 0; i < raw.size() && st_.ok(); ++i) {
      if (blank_is_empty && raw[i].empty()) continue;
      element doc;
      if (parser_.parse(raw[i]).get(doc) != simdjson::SUCCESS) {
        fail(name, i, "not JSON");
        break;
      }
      if (const char* why = parse(doc, &out[i])) fail(name, i, why);
    }
    return st_.ok() ? out : std::vector<T>{};
  }

  // A column of compact JSON arrays of strings.
  std::vector<std::vector<std::string>> str_lists(const std::string& name) {
    std::vector<std::string> raw = str(name);
    std::vector<std::vector<std::string>> out(raw.size());
    for (size_t i = 0; i < raw.size() && st_.ok(); ++i) {
      simdjson::dom::array arr;
      if (parser_.parse(raw[i]).get_array().get(arr) != simdjson::SUCCESS) {
        fail(name, i, "not a JSON array");
        break;
      }
      for (simdjson::dom::element e : arr) {
        std::string_view s;
        if (e.get_string().get(s) != simdjson::SUCCESS) {
          fail(name, i, "JSON array element is not a string");
          break;
        }
        out[i].emplace_back(s);
      }
    }
    return st_.ok() ? out : std::vector<std::vector<std::string>>{};
  }

  // A column of compact JSON arrays of row indices.
  std::vector<std::vector<uint32_t>> index_lists(const std::string& name) {
    std::vector<std::string> raw = str(name);
    std::vector<std::vector<uint32_t>> out(raw.size());
    for (size_t i = 0; i < raw.size() && st_.ok(); ++i) {
      simdjson::dom::array arr;
      if (parser_.parse(raw[i]).get_array().get(arr) != simdjson::SUCCESS) {
        fail(name, i, "not a JSON array");
        break;
      }
      for (simdjson::dom::element e : arr) {
        uint64_t v = 0;
        if (e.get_uint64().get(v) != simdjson::SUCCESS || v > UINT32_MAX) {
          fail(name, i, "JSON array element is not a row index");
          break;
        }
        out[i].push_back(static_cast<uint32_t>(v));
      }
    }
    return st_.ok() ? out : std::vector<std::vector<uint32_t>>{};
  }

  template <class E>
  std::vector<E> enums(const std::string& name, const char* (*to_name)(E), int count) {
    std::vector<std::string> raw = str(name);
    std::vector<E> out(raw.size());
    for (size_t i = 0; i < raw.size() && st_.ok(); ++i)
      if (!parse_enum(raw[i], to_name, count, &out[i])) fail(name, i, "unknown value '" + raw[i] + "'");
    return st_.ok() ? out : std::vector<E>{};
  }

  void fail(const std::string& column, size_t row, const std::string& reason) {
    if (st_.ok())
      st_ = file_error(ErrorCode::kSchema, r_.path().string(), group_ + "/" + column, at("row", row) + ": " + reason);
  }
  void fail(const std::string& reason) {
    if (st_.ok()) st_ = file_error(ErrorCode::kSchema, r_.path().string(), group_, reason);
  }

 private:
  // The store's reader reports a missing dataset as kIo; here it is a damaged (kSchema) table.
  bool present(const std::string& name) {
    if (!st_.ok()) return false;
    if (data_ ? data_->has(name) : r_.kind(group_ + "/" + name) == store::ObjectKind::kDataset) return true;
    st_ = file_error(ErrorCode::kSchema, r_.path().string(), group_ + "/" + name, "missing column");
    return false;
  }
  bool check_len(const std::string& name, size_t n) {
    if (n == rows_) return true;
    st_ = file_error(ErrorCode::kSchema, r_.path().string(), group_ + "/" + name,
                     std::to_string(n) + " rows, the table has " + std::to_string(rows_));
    return false;
  }

  const store::H5Reader& r_;
  std::string group_;
  std::optional<store::TableData> data_;  // a compound table, read whole
  uint64_t rows_ = 0;
  Status st_;
  simdjson::dom::parser parser_;
};

}  // namespace ascprof::pipeline
