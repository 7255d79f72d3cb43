// analysis.db: communication statistics (CommAnalyzerTime / CommAnalyzerBandwidth) and the step
// trace (StepTraceTime), as the rows communication.json and step_trace_time.csv give.
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "ascprof/importers/communication.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "sqlite_file.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;

namespace {

// Decimal digits as a non-negative int32; -2 when empty, not all digits or too large.
int32_t digits_value(std::string_view s) {
  if (s.empty()) return -2;
  int64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9' || v > INT32_MAX / 10) return -2;
    v = v * 10 + (c - '0');
  }
  return static_cast<int32_t>(v);
}

// "step12" -> 12, "step" -> -1 (communication.json's rule), "12" -> 12 (StepTraceTime writes the
// bare number); anything else -> -2 (bad).
int32_t step_number(std::string_view s) {
  if (s.rfind("step", 0) != 0) return digits_value(s);
  s.remove_prefix(4);
  return s.empty() ? -1 : digits_value(s);
}

int transport_index(std::string_view name) {
  for (size_t i = 0; i < model::kTransportCount; ++i)
    if (name == model::kTransportNames[i]) return static_cast<int>(i);
  return -1;
}

double round4(double v) { return std::round(v * 10000.0) / 10000.0; }

using OpKey = std::tuple<std::string, std::string, std::string, std::string>;  // op, group, step, type
using TransportValues = std::array<std::array<double, 4>, model::kTransportCount>;  // size, time, bw, lpr

Status read_bandwidth(const db::SqliteFile& f, std::map<OpKey, TransportValues>& out) {
  if (!f.has_table("CommAnalyzerBandwidth")) return {};
  auto q = f.prepare("SELECT hccl_op_name, group_name, step, type, transport_type, transit_size, transit_time, bandwidth, "
                     "large_packet_ratio FROM CommAnalyzerBandwidth",
                     "CommAnalyzerBandwidth");
  if (!q.ok()) return q.status();
  while (q->step()) {
    const int t = transport_index(q->text(4));
    if (t < 0) continue;  // LOCAL and other transports communication.json does not list
    OpKey key{std::string(q->text(0)), std::string(q->text(1)), std::string(q->text(2)), std::string(q->text(3))};
    auto [it, fresh] = out.try_emplace(std::move(key));
    if (fresh)
      for (auto& v : it->second) v = {0, 0, 0, 0};
    // one row per packet-size bin; the size, time, bandwidth and ratio repeat on each
    auto& v = it->second[static_cast<size_t>(t)];
    v = {q->f64(5), q->f64(6), q->f64(7), q->f64(8)};
    for (double& x : v)
      if (std::isnan(x)) x = 0;
  }
  return q->status();
}

}  // namespace

Status import_analysis_db_communication(const fs::path& path, StringPool& pool, model::CommStatTable& out,
                                        Stats& stats) {
  out = model::CommStatTable{};
  auto opened = db::SqliteFile::open(path);
  if (!opened.ok()) return opened.status();
  const db::SqliteFile& f = *opened;
  if (!f.has_table("CommAnalyzerTime")) {
    stats.note(Stat::db_table_absent, f.path() + ":table CommAnalyzerTime: absent");
    return {};
  }
  std::map<OpKey, TransportValues> bandwidth;
  ASCPROF_RETURN_IF_ERROR(read_bandwidth(f, bandwidth));
  auto q = f.prepare("SELECT rowid, hccl_op_name, group_name, start_timestamp, elapse_time, transit_time, wait_time, "
                     "synchronization_time, idle_time, step, type FROM CommAnalyzerTime",
                     "CommAnalyzerTime");
  if (!q.ok()) return q.status();
  Stats local;
  model::CommStatTable& c = out;
  while (q->step()) {
    const int64_t rowid = q->i64(0, -1);
    const std::string op(q->text(1)), group(q->text(2)), step_text(q->text(9)), type(q->text(10));
    const int32_t step = step_number(step_text);
    uint64_t hash = 0;
    bool hash_ok = !group.empty();
    for (const char ch : group) {
      if (ch < '0' || ch > '9') hash_ok = false;
      else hash = hash * 10 + static_cast<uint64_t>(ch - '0');
    }
    if (op.empty() || step == -2 || !hash_ok) {
      local.note(Stat::db_bad_row, f.path() + ":table CommAnalyzerTime: rowid " + std::to_string(rowid) +
                                       ": op name, numeric group_name or step<N> missing; row skipped");
      continue;
    }
    c.step.push_back(step);
    c.is_p2p.push_back(type == "p2p" ? 1 : 0);
    c.is_total.push_back(0);
    c.op_name.push_back(pool.intern(op));
    c.group_hash.push_back(hash);
    c.op_kind.push_back(pool.intern(comm_op_kind(op)));
    c.start_ns.push_back(q->scaled_i64(3, 1000, model::kAbsentI64));  // µs
    const double elapse = q->f64(4), transit = q->f64(5), wait = q->f64(6), sync = q->f64(7), idle = q->f64(8);
    c.elapse_ms.push_back(elapse);
    c.transit_ms.push_back(transit);
    c.wait_ms.push_back(wait);
    c.sync_ms.push_back(sync);
    c.idle_ms.push_back(idle);
    // communication.json's ratios, which analysis.db does not store: rounded to 4 places as there
    c.wait_ratio.push_back(wait + transit > 0 ? round4(wait / (wait + transit)) : 0);
    c.sync_ratio.push_back(sync + transit > 0 ? round4(sync / (sync + transit)) : 0);
    const auto it = bandwidth.find(OpKey{op, group, step_text, type});
    for (size_t t = 0; t < model::kTransportCount; ++t) {
      const std::array<double, 4> v = it == bandwidth.end() ? std::array<double, 4>{0, 0, 0, 0} : it->second[t];
      c.transport[t].size_mb.push_back(v[0]);
      c.transport[t].time_ms.push_back(v[1]);
      c.transport[t].bandwidth_gbps.push_back(v[2]);
      c.transport[t].large_packet_ratio.push_back(v[3]);
    }
  }
  if (!q->status().ok()) {
    out = model::CommStatTable{};
    return q->status();
  }
  stats.merge(local);
  return {};
}

Status import_analysis_db_step_trace(const fs::path& path, model::StepTraceTable& out, Stats& stats) {
  out = model::StepTraceTable{};
  auto opened = db::SqliteFile::open(path);
  if (!opened.ok()) return opened.status();
  const db::SqliteFile& f = *opened;
  const std::vector<std::string> cols = f.columns("StepTraceTime");
  if (cols.empty()) {
    stats.note(Stat::db_table_absent, f.path() + ":table StepTraceTime: absent");
    return {};
  }
  auto q = f.prepare("SELECT " + db::column_or_null(cols, "deviceId") +
                         ", step, computing, communication_not_overlapped, overlapped, communication, free, stage, bubble, " +
                         db::column_or_null(cols, "communication_not_overlapped_and_exclude_receive") + ", " +
                         db::column_or_null(cols, "preparing") + " FROM StepTraceTime",
                     "StepTraceTime");
  if (!q.ok()) return q.status();
  model::StepTraceTable& s = out;
  while (q->step()) {
    const int64_t dev = q->i64(0, -1);
    s.device_id.push_back(dev >= 0 && dev <= INT32_MAX ? static_cast<int32_t>(dev) : -1);
    const std::string_view step = q->text(1);
    const int32_t n = step_number(step);
    s.step.push_back(n < 0 ? -1 : n);
    std::vector<double>* cols_out[] = {&s.computing, &s.comm_not_overlapped, &s.overlapped, &s.communication, &s.free,
                                       &s.stage,     &s.bubble,              &s.comm_not_overlapped_excl_receive,
                                       &s.preparing};
    for (int i = 0; i < 9; ++i) cols_out[i]->push_back(q->f64(2 + i));
  }
  if (!q->status().ok()) {
    out = model::StepTraceTable{};
    return q->status();
  }
  return {};
}

}  // namespace ascprof::importers
