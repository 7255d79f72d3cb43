// Table order after import (stable by time, whatever shape the input order has) and batches of events
// separated by unusual but valid separators.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ascprof/importers/trace_view.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

struct Imported {
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  Status status;
};

std::unique_ptr<Imported> import_text(std::string_view text, TraceViewParseMode mode = TraceViewParseMode::kBatched) {
  auto r = std::make_unique<Imported>();
  TraceViewOptions opts;
  opts.parse_mode = mode;
  r->status = import_trace_view(text, "mem.json", r->pool, r->t, r->stats, opts);
  return r;
}

struct Flow {
  int64_t ts_us;
  int64_t id;
  char phase;
};

// A trace of flow events in the given order; returns each event's byte offset.
std::string flow_trace(const std::vector<Flow>& flows, std::vector<uint64_t>* offsets) {
  std::string s = "[";
  for (size_t i = 0; i < flows.size(); ++i) {
    if (i != 0) s += ", ";
    offsets->push_back(s.size());
    s += "{\"ph\": \"" + std::string(1, flows[i].phase) + "\", \"name\": \"HostToDevice" +
         std::to_string(flows[i].id) + "\", \"id\": \"" + std::to_string(flows[i].id) +
         "\", \"pid\": 7, \"tid\": 8, \"ts\": \"" + std::to_string(flows[i].ts_us) + "\", \"cat\": \"HostToDevice\"}";
  }
  return s + "]";
}

// Checks that the flow table is the input stably sorted by ts, with every column moved along.
void expect_stable_time_order(const std::vector<Flow>& flows) {
  std::vector<uint64_t> offsets;
  const std::string text = flow_trace(flows, &offsets);
  const auto r = import_text(text);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  const model::FlowTable& f = r->t.flows;
  ASSERT_EQ(f.size(), flows.size());
  std::vector<size_t> order(flows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return flows[a].ts_us < flows[b].ts_us; });
  for (size_t k = 0; k < order.size(); ++k) {
    const Flow& want = flows[order[k]];
    ASSERT_EQ(f.ts_ns[k], want.ts_us * 1000) << "row " << k;
    ASSERT_EQ(f.source_offset[k], offsets[order[k]]) << "row " << k;
    ASSERT_EQ(f.id[k], want.id) << "row " << k;
    ASSERT_EQ(f.phase[k], static_cast<uint8_t>(want.phase)) << "row " << k;
    ASSERT_EQ(r->pool.view(f.cat[k]), "HostToDevice");
  }
}

TEST(TraceViewOrder, InterleavedStartAndFinishFlowsAreStablySorted) {
  // Each 's' is followed by its 'f' a little later: two sorted sequences interleaved, with equal times
  // across them (ties must keep file order).
  std::vector<Flow> flows;
  for (int64_t i = 0; i < 500; ++i) {
    flows.push_back({i * 10, i, 's'});
    flows.push_back({i * 10 + (i % 3 == 0 ? 10 : 25), i, 'f'});
  }
  expect_stable_time_order(flows);
}

TEST(TraceViewOrder, FewDescendingRunsAreStablySorted) {
  // Four interleaved ascending sequences with duplicate times inside and across them.
  std::vector<Flow> flows;
  for (int64_t i = 0; i < 400; ++i)
    for (int64_t r = 0; r < 4; ++r) flows.push_back({(i / 2) * 4 + (3 - r) * 100, i * 4 + r, 's'});
  expect_stable_time_order(flows);
}

TEST(TraceViewOrder, RandomOrderIsStablySorted) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> ts(0, 300);
  std::vector<Flow> flows;
  for (int64_t i = 0; i < 2000; ++i) flows.push_back({ts(rng), i, i % 2 == 0 ? 's' : 'f'});
  expect_stable_time_order(flows);
}

std::string py_event(int i) {
  return "{\"ph\": \"X\", \"name\": \"op" + std::to_string(i) + "\", \"pid\": 100, \"tid\": 100, \"ts\": \"" +
         std::to_string(1000 + i) + "\", \"dur\": 1, \"cat\": \"cpu_op\"}";
}

TEST(TraceViewOrder, BatchesKeepOffsetsAcrossVariedSeparators) {
  // Separators of every valid shape (and one far longer than usual), with a malformed event in between:
  // each event keeps its own byte offset and the bad one is reported at its own offset.
  const std::vector<std::string> seps = {",", ", ", ",\n  ", " ,\t", ",\r\n" + std::string(200, ' '), "\n,\n"};
  std::string s = R"([{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}})";
  std::vector<uint64_t> offsets;
  size_t bad_at = 0;
  for (int i = 0; i < 60; ++i) {
    s += seps[static_cast<size_t>(i) % seps.size()];
    if (i == 31) {
      bad_at = s.size();
      s += R"({"ph": "X", "name" "bad", "pid": 100, "ts": "1", "dur": 1})";
      s += seps[0];
    }
    offsets.push_back(s.size());
    s += py_event(i);
  }
  s += "\n]";
  for (TraceViewParseMode mode : {TraceViewParseMode::kBatched, TraceViewParseMode::kPerEvent}) {
    const auto r = import_text(s, mode);
    ASSERT_TRUE(r->status.ok()) << r->status.to_string();
    EXPECT_EQ(r->t.events_total, 62u);
    EXPECT_EQ(r->t.host_ops.source_offset, offsets);
    EXPECT_TRUE(r->t.damaged_spans.empty());
    ASSERT_EQ(r->stats.count(Stat::tv_event_bad_json), 1u);
    EXPECT_NE(r->stats.samples(Stat::tv_event_bad_json)[0].find("mem.json:byte " + std::to_string(bad_at) + ":"),
              std::string::npos)
        << r->stats.samples(Stat::tv_event_bad_json)[0];
    EXPECT_EQ(r->pool.view(r->t.host_ops.name[59]), "op59");
  }
}

}  // namespace
}  // namespace ascprof::importers
