#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/communication.hpp"
#include "ascprof/model/kernel_table.hpp"

namespace ascprof::importers {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

bool iends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && istarts_with(s.substr(s.size() - suffix.size()), suffix);
}

// "\"<key>\"<tail>" built by appending (GCC 12 warns falsely on chained operator+ here).
std::string quoted(std::string_view key, std::string_view tail) {
  std::string out;
  out.reserve(key.size() + tail.size() + 2);
  out += '"';
  out += key;
  out += '"';
  out += tail;
  return out;
}

// Columns of one op row before they are appended, so a failure part-way never leaves the table ragged.
struct Row {
  int32_t step = -1;
  uint8_t is_p2p = 0;
  uint8_t is_total = 0;
  std::string_view name;
  uint64_t hash = 0;
  int64_t start_ns = model::kAbsentI64;
  double time[7] = {0, 0, 0, 0, 0, 0, 0};  // elapse, transit, wait, sync, idle, wait_ratio, sync_ratio
  // size, time, bandwidth, large packet ratio; NaN until read (an absent transport stays NaN)
  double transport[model::kTransportCount][4];
  Row() {
    for (auto& t : transport)
      for (double& x : t) x = kNaN;
  }
};

constexpr std::string_view kTimeKeys[7] = {"Elapse Time(ms)",         "Transit Time(ms)", "Wait Time(ms)",
                                           "Synchronization Time(ms)", "Idle Time(ms)",    "Wait Time Ratio",
                                           "Synchronization Time Ratio"};
constexpr std::string_view kTimeInfo = "Communication Time Info";
constexpr std::string_view kBandwidthInfo = "Communication Bandwidth Info";
constexpr std::string_view kStartKey = "Start Timestamp(us)";
constexpr std::string_view kTransportKeys[4] = {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)",
                                                "Large Packet Ratio"};

// Where in the document we are, joined into "step50.collective.op@1.Communication Time Info" only
// when a note or error needs it (no string building per op).
struct KeyPath {
  std::string_view parts[5];
  size_t n = 0;
  KeyPath with(std::string_view part) const {
    KeyPath k = *this;
    if (k.n < 5) k.parts[k.n++] = part;
    return k;
  }
  std::string str() const {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      if (i) out += '.';
      out += parts[i];
    }
    return out;
  }
};

class Importer {
 public:
  Importer(std::string_view label, const simdjson::padded_string& buf, od::document& doc, StringPool& pool,
           model::CommStatTable& out, Stats& stats)
      : label_(label), buf_(buf), doc_(doc), pool_(pool), out_(out), stats_(stats) {}

  Status run() {
    od::object top;
    if (auto e = doc_.get_object().get(top)) {
      if (e == simdjson::INCORRECT_TYPE)
        return file_error(ErrorCode::kSchema, label_, "byte 0", "top level is not a JSON object");
      return fail(e, KeyPath{});
    }
    for (auto f : top) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, KeyPath{});
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e, KeyPath{});
      // Unescaped keys stay valid until the parser is reused, so views are safe to keep.
      KeyPath step_path = KeyPath{}.with(key);
      int32_t step = 0;
      if (!parse_step(key, &step)) {
        note(Stat::comm_unexpected_key, step_path, "top-level key is not step<N>");
        continue;
      }
      ASCPROF_RETURN_IF_ERROR(read_step(field.value(), step, step_path));
    }
    return Status::ok_status();
  }

 private:
  static bool parse_step(std::string_view key, int32_t* step) {
    if (key.substr(0, 4) != "step") return false;
    std::string_view digits = key.substr(4);
    if (digits.empty()) {
      *step = -1;
      return true;
    }
    int32_t v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || p != digits.data() + digits.size() || v < 0) return false;
    *step = v;
    return true;
  }

  Status read_step(od::value v, int32_t step, const KeyPath& step_path) {
    od::object obj;
    if (!get_object(v, &obj, step_path)) return status_;
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, step_path);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e, step_path);
      uint8_t p2p = 0;
      if (key == "collective") {
        p2p = 0;
      } else if (key == "p2p") {
        p2p = 1;
      } else {
        note(Stat::comm_unexpected_key, step_path.with(key), "expected collective or p2p");
        continue;
      }
      ASCPROF_RETURN_IF_ERROR(read_section(field.value(), step, p2p, step_path.with(key)));
    }
    return Status::ok_status();
  }

  Status read_section(od::value v, int32_t step, uint8_t p2p, const KeyPath& path) {
    od::object obj;
    if (!get_object(v, &obj, path)) return status_;
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, path);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e, path);
      Row row;
      row.step = step;
      row.is_p2p = p2p;
      KeyPath op_path = path.with(key);
      od::object op;
      if (!get_object(field.value(), &op, op_path)) {
        if (!status_.ok()) return status_;
        continue;  // not an object: counted, no row
      }
      split_key(key, op_path, &row);
      ASCPROF_RETURN_IF_ERROR(read_op(op, op_path, &row));
      append(row);
    }
    return Status::ok_status();
  }

  void split_key(std::string_view key, const KeyPath& path, Row* row) {
    size_t at = key.rfind('@');
    row->name = at == std::string_view::npos ? key : key.substr(0, at);
    row->is_total = istarts_with(row->name, "total") ? 1 : 0;
    if (at != std::string_view::npos) {
      std::string_view digits = key.substr(at + 1);
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), row->hash);
      if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
        row->hash = 0;
        note(Stat::comm_bad_value, path, "group hash after '@' is not an unsigned integer; read as 0");
      }
    }
  }

  Status read_op(od::object& obj, const KeyPath& op_path, Row* row) {
    bool have_time = false, have_bw = false;
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, op_path);
      const od::raw_json_string key = field.key();  // compared raw: no unescaping of known keys
      if (key == kTimeInfo) {
        have_time = true;
        ASCPROF_RETURN_IF_ERROR(read_time(field.value(), op_path.with(kTimeInfo), row));
      } else if (key == kBandwidthInfo) {
        have_bw = true;
        ASCPROF_RETURN_IF_ERROR(read_bandwidth(field.value(), op_path.with(kBandwidthInfo), row));
      }
    }
    if (!have_time) note(Stat::comm_missing_key, op_path, "no \"Communication Time Info\"; times read as 0");
    if (!have_bw) note(Stat::comm_missing_key, op_path, "no \"Communication Bandwidth Info\"; transports read as NaN");
    return Status::ok_status();
  }

  Status read_time(od::value v, const KeyPath& path, Row* row) {
    od::object obj;
    if (!get_object(v, &obj, path)) return status_;
    bool seen[7] = {};
    bool seen_start = false;
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, path);
      const od::raw_json_string key = field.key();
      if (key == kStartKey) {
        seen_start = true;
        ASCPROF_RETURN_IF_ERROR(read_start(field.value(), path, row));
        continue;
      }
      for (size_t i = 0; i < 7; ++i) {
        if (key == kTimeKeys[i]) {
          seen[i] = true;
          ASCPROF_RETURN_IF_ERROR(read_number(field.value(), path, kTimeKeys[i], &row->time[i]));
          break;
        }
      }
    }
    if (!seen_start && !row->is_total)
      note(Stat::comm_missing_key, path, "no \"Start Timestamp(us)\"; start left absent");
    for (size_t i = 0; i < 7; ++i)
      if (!seen[i]) note(Stat::comm_missing_key, path, "no " + quoted(kTimeKeys[i], "; read as 0"));
    return Status::ok_status();
  }

  Status read_start(od::value v, const KeyPath& path, Row* row) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e, path);
    std::string_view text;
    if (type == od::json_type::number) {
      text = v.raw_json_token();
    } else if (type == od::json_type::string) {
      if (auto e = v.get_string().get(text)) return fail(e, path);
      note(Stat::comm_bad_value, path, "\"Start Timestamp(us)\" is a string, expected a number");
    } else {
      note(Stat::comm_bad_value, path, "\"Start Timestamp(us)\" is not a number; start left absent");
      return Status::ok_status();
    }
    if (auto ns = parse_us_to_ns(text)) {
      row->start_ns = *ns;
    } else {
      note(Stat::comm_bad_value, path, "\"Start Timestamp(us)\" is not a number; start left absent");
    }
    return Status::ok_status();
  }

  Status read_bandwidth(od::value v, const KeyPath& path, Row* row) {
    od::object obj;
    if (!get_object(v, &obj, path)) return status_;
    bool seen[model::kTransportCount] = {};
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, path);
      const od::raw_json_string key = field.key();
      for (size_t t = 0; t < model::kTransportCount; ++t) {
        if (key == std::string_view(model::kTransportNames[t])) {
          seen[t] = true;
          ASCPROF_RETURN_IF_ERROR(read_transport(field.value(), path.with(model::kTransportNames[t]), row, t));
          break;
        }
      }
    }
    for (size_t t = 0; t < model::kTransportCount; ++t)
      if (!seen[t]) stats_.inc(Stat::comm_transport_absent);
    return Status::ok_status();
  }

  Status read_transport(od::value v, const KeyPath& path, Row* row, size_t t) {
    od::object obj;
    double* cols = row->transport[t];
    if (!get_object(v, &obj, path)) return status_;
    bool seen[4] = {};
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e, path);
      const od::raw_json_string key = field.key();
      for (size_t i = 0; i < 4; ++i) {
        if (key == kTransportKeys[i]) {
          seen[i] = true;
          ASCPROF_RETURN_IF_ERROR(read_number(field.value(), path, kTransportKeys[i], &cols[i]));
          break;
        }
      }
    }
    for (size_t i = 0; i < 4; ++i) {
      if (seen[i]) continue;
      // Total Op Info rows carry only sizes and times per transport: the rest is legitimately absent.
      if (row->is_total && i >= 2) {
        cols[i] = kNaN;
      } else {
        cols[i] = 0;
        note(Stat::comm_missing_key, path, "no " + quoted(kTransportKeys[i], "; read as 0"));
      }
    }
    return Status::ok_status();
  }

  Status read_number(od::value v, const KeyPath& path, std::string_view key, double* out) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e, path);
    if (type == od::json_type::number) {
      if (auto e = v.get_double().get(*out)) return fail(e, path);
      return Status::ok_status();
    }
    *out = 0;
    if (type == od::json_type::string) {
      std::string_view text;
      if (auto e = v.get_string().get(text)) return fail(e, path);
      if (auto d = parse_double(text)) {
        *out = *d;
        note(Stat::comm_bad_value, path, quoted(key, " is a string; parsed as a number"));
        return Status::ok_status();
      }
    }
    note(Stat::comm_bad_value, path, quoted(key, " is not a number; read as 0"));
    return Status::ok_status();
  }

  // False when `v` is not an object: a non-object value is counted and skipped (status_ ok), a
  // broken document sets status_ to the parse error.
  bool get_object(od::value& v, od::object* obj, const KeyPath& path) {
    status_ = Status::ok_status();
    od::json_type type;
    if (auto e = v.type().get(type)) {
      status_ = fail(e, path);
      return false;
    }
    if (type != od::json_type::object) {
      note(Stat::comm_unexpected_key, path, "expected an object; skipped");
      return false;
    }
    if (auto e = v.get_object().get(*obj)) {
      status_ = fail(e, path);
      return false;
    }
    return true;
  }

  void append(const Row& r) {
    out_.step.push_back(r.step);
    out_.is_p2p.push_back(r.is_p2p);
    out_.is_total.push_back(r.is_total);
    out_.op_name.push_back(pool_.intern(r.name));
    out_.group_hash.push_back(r.hash);
    out_.op_kind.push_back(pool_.intern(comm_op_kind(r.name)));
    out_.start_ns.push_back(r.is_total ? model::kAbsentI64 : r.start_ns);
    out_.elapse_ms.push_back(r.time[0]);
    out_.transit_ms.push_back(r.time[1]);
    out_.wait_ms.push_back(r.time[2]);
    out_.sync_ms.push_back(r.time[3]);
    out_.idle_ms.push_back(r.time[4]);
    out_.wait_ratio.push_back(r.time[5]);
    out_.sync_ratio.push_back(r.time[6]);
    for (size_t t = 0; t < model::kTransportCount; ++t) {
      out_.transport[t].size_mb.push_back(r.transport[t][0]);
      out_.transport[t].time_ms.push_back(r.transport[t][1]);
      out_.transport[t].bandwidth_gbps.push_back(r.transport[t][2]);
      out_.transport[t].large_packet_ratio.push_back(r.transport[t][3]);
    }
  }

  void note(Stat s, const KeyPath& path, std::string_view reason) {
    std::string detail(label_);
    detail += ":key ";
    detail += path.str();
    detail += ": ";
    detail += reason;
    stats_.note(s, std::move(detail));
  }

  Status fail(error_code e, const KeyPath& path) {
    size_t offset = buf_.size();
    const char* loc = nullptr;
    const bool at_end = e == simdjson::UNCLOSED_STRING || e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT;
  if (!at_end && doc_.current_location().get(loc) == simdjson::SUCCESS && loc != nullptr && loc >= buf_.data() &&
        loc <= buf_.data() + buf_.size())
      offset = static_cast<size_t>(loc - buf_.data());
    std::string reason = simdjson::error_message(e);
    if (offset >= buf_.size()) reason += " (file ends early: truncated?)";
    if (path.n > 0) reason += " in key " + path.str();
    return file_error(ErrorCode::kParse, label_, "byte " + std::to_string(offset), reason);
  }

  std::string_view label_;
  const simdjson::padded_string& buf_;
  od::document& doc_;
  StringPool& pool_;
  model::CommStatTable& out_;
  Stats& stats_;
  Status status_;
};

void truncate_table(model::CommStatTable& t, size_t n) {
  t.step.resize(n);
  t.is_p2p.resize(n);
  t.is_total.resize(n);
  t.op_name.resize(n);
  t.group_hash.resize(n);
  t.op_kind.resize(n);
  t.start_ns.resize(n);
  t.elapse_ms.resize(n);
  t.transit_ms.resize(n);
  t.wait_ms.resize(n);
  t.sync_ms.resize(n);
  t.idle_ms.resize(n);
  t.wait_ratio.resize(n);
  t.sync_ratio.resize(n);
  for (auto& c : t.transport) {
    c.size_mb.resize(n);
    c.time_ms.resize(n);
    c.bandwidth_gbps.resize(n);
    c.large_packet_ratio.resize(n);
  }
}

// Errors found by the whole-file structural pass (unclosed string, unbalanced braces) have no
// position of their own; they almost always mean the file was cut short, so point at its end.
Status iterate_error(error_code e, std::string_view label, size_t size) {
  std::string reason = simdjson::error_message(e);
  if (e == simdjson::UNCLOSED_STRING || e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    reason += " (file ends early: truncated?)";
    return file_error(ErrorCode::kParse, label, "byte " + std::to_string(size), reason);
  }
  return file_error(ErrorCode::kParse, label, "byte 0", reason);
}

// read() straight into simdjson's padded buffer: measured ~25% less CPU than mmap + copy on a 47 MB
// file (the copy paid a page fault per 4 KiB), and communication.json is at most tens of MB.
Result<simdjson::padded_string> read_padded(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string why = S_ISREG(st.st_mode) ? std::strerror(errno) : "not a regular file";
    ::close(fd);
    return file_error(ErrorCode::kIo, path.string(), "", why);
  }
  simdjson::padded_string buf(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + done, buf.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "file shrank while being read";
      ::close(fd);
      return file_error(ErrorCode::kIo, path.string(), "byte " + std::to_string(done), why);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return buf;
}

Status import_padded(const simdjson::padded_string& buf, std::string_view label, StringPool& pool,
                     model::CommStatTable& table, Stats& stats) {
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(buf).get(doc)) return iterate_error(e, label, buf.size());
  const size_t before = table.size();
  // Counters are merged only on success so a rejected file leaves no half-counted trace.
  Stats local;
  Importer importer(label, buf, doc, pool, table, local);
  Status st = importer.run();
  if (!st.ok()) {
    truncate_table(table, before);
    return st;
  }
  stats.merge(local);
  return st;
}

}  // namespace

std::string comm_op_kind(std::string_view name) {
  if (istarts_with(name, "total")) return {};
  if (!istarts_with(name, "hcom_")) {
    std::string lower_name = to_lower(name);
    if (lower_name.find("matmul") != std::string::npos || lower_name.find("moedistribute") != std::string::npos)
      return "mc2";
    return "other";
  }
  std::string_view rest = name.substr(5);
  size_t n = 0;
  while (n < rest.size() && ((rest[n] >= 'a' && rest[n] <= 'z') || (rest[n] >= 'A' && rest[n] <= 'Z'))) ++n;
  std::string_view kind = rest.substr(0, n);
  for (std::string_view suffix : {"AicpuKernel", "AivKernel", "Aicpu", "Aiv"}) {
    if (kind.size() > suffix.size() && iends_with(kind, suffix)) {
      kind.remove_suffix(suffix.size());
      break;
    }
  }
  if (kind.empty()) return "other";
  return to_lower(kind);
}

Status import_communication_text(std::string_view json, std::string_view file_label, StringPool& pool,
                                 model::CommStatTable& table, Stats& stats) {
  simdjson::padded_string buf(json);
  return import_padded(buf, file_label, pool, table, stats);
}

Status import_communication(const std::filesystem::path& path, StringPool& pool, model::CommStatTable& table,
                            Stats& stats) {
  auto buf = read_padded(path);
  if (!buf.ok()) return buf.status();
  return import_padded(*buf, path.string(), pool, table, stats);
}

}  // namespace ascprof::importers
