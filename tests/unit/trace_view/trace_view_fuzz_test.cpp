// Randomly damaged traces: the importer must never crash or hang, and the batched and per-event parse
// modes must agree exactly (the batched mode falls back to per-event parsing on any error). This test
// found that parsing events in place (padding = the next event's bytes) let simdjson accept some
// malformed events, so every event is now parsed from a space-padded copy.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ascprof/importers/trace_view.hpp"

namespace ascprof::importers {
namespace {

std::string sample_trace() {
  std::string s = "[";
  s += R"j({"ph": "X", "name": "aten::add", "pid": 10, "tid": 10, "ts": "100.500", "dur": 2.5, "cat": "cpu_op", "args": {"Sequence number": -1, "Input Dims": ";\r\n", "Call stack": "a.py(1): f;\r\nb.py(\"2\"): g"}})j";
  s += R"j(, {"ph": "s", "bp": "e", "name": "torch_to_npu", "id": 12345, "pid": 10, "tid": 10, "ts": "100.600", "cat": "async_npu"})j";
  s += R"j(, {"name": "MatMul_1", "pid": 20, "tid": 2, "ts": "101.000", "dur": 3.25, "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 7, "connection_id": 12}, "ph": "X"})j";
  s += R"j(, {"name": "HostToDevice12", "ph": "f", "id": "12", "ts": "101.000", "cat": "HostToDevice", "pid": 20, "tid": 2, "bp": "e"})j";
  s += R"j(, {"name": "hcom_allReduce__1_0_1", "pid": 30, "tid": 0, "ts": "102.000", "dur": 9, "args": {"connection_id": 3, "data_type": "FP32", "alg_type": "RING", "count": 64}, "ph": "X"})j";
  s += R"j(, {"name": "Memcpy", "pid": 30, "tid": 1, "ts": "102.500", "dur": 1, "args": {"task type": "Memcpy", "src rank": 0, "dst rank": 1, "transport type": "SDMA", "size(Byte)": 256, "link type": "HCCS", "bandwidth(GB/s)": 1.5}, "ph": "X"})j";
  s += R"j(, {"name": "Computing", "pid": 40, "tid": 0, "ts": "101.000", "dur": 3.25, "ph": "X"})j";
  s += R"j(, {"name": "AI Core Freq", "ts": "100.000", "pid": 50, "tid": 0, "args": {"MHz": 1800}, "ph": "C"})j";
  s += R"j(, {"ph": "X", "name": "ProfilerStep#3", "pid": 10, "tid": 10, "ts": "100.000", "dur": 10, "cat": "cpu_op", "args": {}})j";
  s += R"j(, {"name": "process_name", "pid": 20, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"})j";
  s += R"j(, {"name": "thread_name", "pid": 20, "tid": 2, "args": {"name": "Stream 2"}, "ph": "M"})j";
  s += R"j(, {"name": "process_name", "pid": 30, "tid": 0, "args": {"name": "HCCL"}, "ph": "M"})j";
  s += R"j(, {"name": "thread_name", "pid": 30, "tid": 0, "args": {"name": "Group 0 Communication"}, "ph": "M"})j";
  s += R"j(, {"name": "thread_name", "pid": 30, "tid": 1, "args": {"name": "Plane 0"}, "ph": "M"})j";
  s += R"j(, {"name": "process_name", "pid": 40, "tid": 0, "args": {"name": "Overlap Analysis"}, "ph": "M"})j";
  s += R"j(, {"name": "process_name", "pid": 50, "tid": 0, "args": {"name": "AI Core Freq"}, "ph": "M"})j";
  s += R"j(, {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "Python"}})j";
  return s + "]";
}

struct Result {
  Status status;
  uint64_t total = 0;
  size_t host = 0, device = 0, comm = 0, plane = 0, overlap = 0, flows = 0, steps = 0, damaged = 0;
  std::vector<uint64_t> counters;
};

Result run(const std::string& text, TraceViewParseMode mode) {
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  TraceViewOptions opts;
  opts.parse_mode = mode;
  opts.max_event_bytes = 400;  // some mutated events exceed it
  Result r;
  r.status = import_trace_view(text, "fuzz.json", pool, t, stats, opts);
  r.total = t.events_total;
  r.host = t.host_ops.size();
  r.device = t.device_tasks.size();
  r.comm = t.comm_ops.size();
  r.plane = t.comm_plane_tasks.size();
  r.overlap = t.overlap.size();
  r.flows = t.flows.size();
  r.steps = t.steps.size();
  r.damaged = t.damaged_spans.size();
  for (size_t i = 0; i < kStatCount; ++i) r.counters.push_back(stats.count(static_cast<Stat>(i)));
  for (const auto& d : t.damaged_spans) EXPECT_LE(d.offset + d.length, text.size());
  return r;
}

TEST(TraceViewFuzz, MutatedTracesNeverCrashAndModesAgree) {
  const std::string base = sample_trace();
  {
    const Result clean = run(base, TraceViewParseMode::kBatched);
    ASSERT_TRUE(clean.status.ok());
    EXPECT_EQ(clean.total, 17u);
    EXPECT_EQ(clean.host, 2u);
    EXPECT_EQ(clean.device, 1u);
    EXPECT_EQ(clean.comm, 1u);
    EXPECT_EQ(clean.plane, 1u);
    EXPECT_EQ(clean.overlap, 1u);
    EXPECT_EQ(clean.flows, 2u);
    EXPECT_EQ(clean.steps, 1u);
  }
  std::mt19937_64 rng(20250109);
  const std::string alphabet = "{}[]\",:\\ \nax0.-";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(pos, 1 + rng() % 40); break;
        case 2: s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 60)); break;
        case 3: s.resize(pos); break;
        default: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    const Result a = run(s, TraceViewParseMode::kBatched);
    const Result b = run(s, TraceViewParseMode::kPerEvent);
    ASSERT_EQ(a.status.to_string(), b.status.to_string()) << s;
    if (!a.status.ok()) {
      EXPECT_TRUE(a.status.code() == ErrorCode::kParse || a.status.code() == ErrorCode::kSchema) << a.status.to_string();
      continue;
    }
    for (const Result* o : {&b}) {
      ASSERT_EQ(a.total, o->total) << s;
      ASSERT_EQ(a.host, o->host) << s;
      ASSERT_EQ(a.device, o->device) << s;
      ASSERT_EQ(a.comm, o->comm) << s;
      ASSERT_EQ(a.plane, o->plane) << s;
      ASSERT_EQ(a.overlap, o->overlap) << s;
      ASSERT_EQ(a.flows, o->flows) << s;
      ASSERT_EQ(a.damaged, o->damaged) << s;
      ASSERT_EQ(a.counters, o->counters) << s;
    }
  }
}

}  // namespace
}  // namespace ascprof::importers
