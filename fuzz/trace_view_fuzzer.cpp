// libFuzzer target: the trace_view.json event scanner and walker, through the in-memory entry point.
//
// The first input byte picks the parse mode (batched / per event) and a small max_event_bytes bound;
// the rest is the file text. Besides sanitizer findings it checks the table invariants the header
// promises: columns of one table have equal length, tables are sorted by start time, string ids are
// valid pool ids, damaged spans lie inside the file.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "fuzz_check.hpp"

namespace {

template <typename T>
void check_len(const std::vector<T>& col, size_t n, const char* what) {
  FUZZ_CHECK(col.size() == n, what);
}

void check_ids(const std::vector<ascprof::StrId>& col, const ascprof::StringPool& pool, const char* what) {
  for (ascprof::StrId id : col) FUZZ_CHECK(id < pool.size(), what);
}

void check_sorted(const std::vector<int64_t>& start, const char* what) {
  for (size_t i = 1; i < start.size(); ++i) FUZZ_CHECK(start[i - 1] <= start[i], what);
}

void check_tables(const ascprof::model::TraceTables& t, const ascprof::StringPool& pool, size_t file_size) {
  const auto& h = t.host_ops;
  const size_t nh = h.size();
  check_len(h.name, nh, "host_ops.name length");
  check_len(h.cat, nh, "host_ops.cat length");
  check_len(h.is_cann, nh, "host_ops.is_cann length");
  check_len(h.pid, nh, "host_ops.pid length");
  check_len(h.tid, nh, "host_ops.tid length");
  check_len(h.dur_ns, nh, "host_ops.dur_ns length");
  check_len(h.source_offset, nh, "host_ops.source_offset length");
  check_ids(h.name, pool, "host_ops.name id");
  check_ids(h.cat, pool, "host_ops.cat id");
  check_sorted(h.start_ns, "host_ops sorted");

  const auto& s = t.steps;
  check_len(s.start_ns, s.size(), "steps.start_ns length");
  check_len(s.end_ns, s.size(), "steps.end_ns length");
  check_len(s.source_offset, s.size(), "steps.source_offset length");
  check_sorted(s.start_ns, "steps sorted");

  const auto& d = t.device_tasks;
  const size_t nd = d.size();
  check_len(d.name, nd, "device_tasks.name length");
  check_len(d.task_type, nd, "device_tasks.task_type length");
  check_len(d.stream_id, nd, "device_tasks.stream_id length");
  check_len(d.task_id, nd, "device_tasks.task_id length");
  check_len(d.connection_id, nd, "device_tasks.connection_id length");
  check_len(d.dur_ns, nd, "device_tasks.dur_ns length");
  check_len(d.source_offset, nd, "device_tasks.source_offset length");
  check_ids(d.name, pool, "device_tasks.name id");
  check_ids(d.task_type, pool, "device_tasks.task_type id");
  check_sorted(d.start_ns, "device_tasks sorted");

  const auto& c = t.comm_ops;
  const size_t nc = c.size();
  check_len(c.name, nc, "comm_ops.name length");
  check_len(c.group, nc, "comm_ops.group length");
  check_len(c.data_type, nc, "comm_ops.data_type length");
  check_len(c.alg_type, nc, "comm_ops.alg_type length");
  check_len(c.count, nc, "comm_ops.count length");
  check_len(c.connection_id, nc, "comm_ops.connection_id length");
  check_len(c.dur_ns, nc, "comm_ops.dur_ns length");
  check_len(c.source_offset, nc, "comm_ops.source_offset length");
  check_ids(c.name, pool, "comm_ops.name id");
  check_ids(c.group, pool, "comm_ops.group id");
  check_sorted(c.start_ns, "comm_ops sorted");

  const auto& p = t.comm_plane_tasks;
  const size_t np = p.size();
  check_len(p.name, np, "plane.name length");
  check_len(p.plane, np, "plane.plane length");
  check_len(p.task_type, np, "plane.task_type length");
  check_len(p.transport, np, "plane.transport length");
  check_len(p.link_type, np, "plane.link_type length");
  check_len(p.src_rank, np, "plane.src_rank length");
  check_len(p.dst_rank, np, "plane.dst_rank length");
  check_len(p.size_bytes, np, "plane.size_bytes length");
  check_len(p.bandwidth_gbps, np, "plane.bandwidth_gbps length");
  check_len(p.dur_ns, np, "plane.dur_ns length");
  check_len(p.source_offset, np, "plane.source_offset length");
  check_ids(p.name, pool, "plane.name id");
  check_sorted(p.start_ns, "plane sorted");

  const auto& o = t.overlap;
  check_len(o.kind, o.size(), "overlap.kind length");
  check_len(o.dur_ns, o.size(), "overlap.dur_ns length");
  check_len(o.source_offset, o.size(), "overlap.source_offset length");
  check_sorted(o.start_ns, "overlap sorted");

  const auto& f = t.flows;
  const size_t nf = f.size();
  check_len(f.cat, nf, "flows.cat length");
  check_len(f.name, nf, "flows.name length");
  check_len(f.id, nf, "flows.id length");
  check_len(f.phase, nf, "flows.phase length");
  check_len(f.pid, nf, "flows.pid length");
  check_len(f.tid, nf, "flows.tid length");
  check_len(f.source_offset, nf, "flows.source_offset length");
  check_ids(f.cat, pool, "flows.cat id");
  check_ids(f.name, pool, "flows.name id");

  for (const auto& pr : t.processes) {
    FUZZ_CHECK(pr.name < pool.size(), "process name id");
    FUZZ_CHECK(pr.label < pool.size(), "process label id");
  }
  for (const auto& th : t.threads) FUZZ_CHECK(th.name < pool.size(), "thread name id");
  for (const auto& span : t.damaged_spans) {
    FUZZ_CHECK(span.offset <= file_size, "damaged span offset beyond file");
    FUZZ_CHECK(span.length <= file_size - span.offset, "damaged span beyond file");
  }
  for (uint64_t off : h.source_offset) FUZZ_CHECK(off < file_size, "host op offset beyond file");
  for (uint64_t off : d.source_offset) FUZZ_CHECK(off < file_size, "device task offset beyond file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  ascprof::importers::TraceViewOptions opts;
  opts.parse_mode = (mode & 1) ? ascprof::importers::TraceViewParseMode::kPerEvent
                               : ascprof::importers::TraceViewParseMode::kBatched;
  if (mode & 2) opts.max_event_bytes = 256 + (mode >> 2) * 64;

  ascprof::Stats stats;
  ascprof::StringPool pool;
  ascprof::model::TraceTables tables;
  const ascprof::Status st = ascprof::importers::import_trace_view(text, "trace_view.json", pool, tables, stats, opts);
  if (st.ok()) check_tables(tables, pool, text.size());
  return 0;
}
