// In-kernel MoE trace reader (issue 20): both collector variants and bare arrays, B/E in any order
// or X events, threads by args rank/core (tid as fallback), FIFO pairing per core and name, and the
// broken traces: truncated, unmatched B/E, unmapped points, full buffers, events of other ranks.
#include <gtest/gtest.h>

#include <string>

#include "ascprof/importers/moe_trace.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

using ascprof::testing::ScratchDir;
using ascprof::testing::write_text;

// One B or E event of the skill collector.
std::string ev(const char* ph, double ts, const std::string& name, int core_type, int core_id, int rank = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                R"({"cat":"trace","ts":%.2f,"pid":0,"tid":"type%d_core%03d","ph":"%s","name":"%s","args":{"base_point_id":7,"extra_id":0,"rank_id":%d,"core_type":%d,"core_id":%d,"file":"f.h","line":3}})",
                ts, core_type, core_id, ph, name.c_str(), rank, core_type, core_id);
  return buf;
}

std::string skill_file(const std::vector<std::string>& events, int skipped = 0) {
  std::string s = R"({"traceEvents":[{"name":"process_name","ph":"M","pid":0,"args":{"name":"Rank"}})";
  for (const auto& e : events) s += ",\n" + e;
  s += R"(],"displayTimeUnit":"us","otherData":{"version":"1.0","total_events":)" + std::to_string(events.size()) +
       R"(,"total_ranks":1,"clock_divisor":50.0,"extra_mode":"seq","depth":0,"skipped_no_mapping":)" +
       std::to_string(skipped) + "}}";
  return s;
}

struct Read {
  StringPool pool;
  model::MoeTraceCall call;
  Stats stats;
  std::string label(size_t i) const { return std::string(pool.view(call.intervals[i].label)); }
};

void read(const std::filesystem::path& p, Read& r, int64_t rank = 0, uint32_t capacity = 1023) {
  import_moe_trace(p, rank, capacity, r.pool, r.call, r.stats);
}

TEST(MoeTraceImport, SkillVariantPairsOutOfOrderEventsPerCoreAndName) {
  ScratchDir dir;
  // E before B in the file, two cores, an expert-group index and an extra id; the B/E of group 1
  // come before group 0's
  write_text(dir / "trace_call3.json",
             skill_file({ev("B", 10.00, "dispatch-gmm1 moe-process [extra:0] #1", 0, 1),
                         ev("E", 18.50, "dispatch-gmm1 moe-process [extra:0] #1", 0, 1),
                         ev("E", 9.98, "dispatch-gmm1 moe-process [extra:0] #0", 0, 1),
                         ev("B", 2.02, "dispatch-gmm1 moe-process [extra:0] #0", 0, 1),
                         ev("B", 0.00, "processing [extra:0] #0", 0, 1), ev("E", 20.00, "processing [extra:0] #0", 0, 1),
                         ev("B", 1.00, "gmm2-combine combine-wait-status [extra:2] #0", 2, 0),
                         ev("E", 3.50, "gmm2-combine combine-wait-status [extra:2] #0", 2, 0)},
                        5));
  Read r;
  read(dir / "trace_call3.json", r);
  ASSERT_TRUE(r.call.error.empty()) << r.call.error;
  EXPECT_EQ(r.call.variant, "skill");
  EXPECT_EQ(r.call.call_index, 3);
  EXPECT_EQ(r.call.events, 8u);
  EXPECT_EQ(r.call.unmapped_points, 5u);
  EXPECT_EQ(r.stats.count(Stat::moe_trace_unmapped), 1u);
  ASSERT_EQ(r.call.intervals.size(), 4u);
  // sorted by core type, core, start (container first)
  EXPECT_EQ(r.label(0), "processing");
  EXPECT_EQ(r.call.intervals[0].end_ns, 20000);
  EXPECT_EQ(r.label(1), "dispatch-gmm1 moe-process");
  EXPECT_EQ(r.call.intervals[1].index, 0);
  EXPECT_EQ(r.call.intervals[1].start_ns, 2020);
  EXPECT_EQ(r.call.intervals[1].end_ns, 9980);
  EXPECT_EQ(r.call.intervals[2].index, 1);
  EXPECT_EQ(r.call.intervals[2].end_ns, 18500);
  EXPECT_EQ(r.label(3), "gmm2-combine combine-wait-status");
  EXPECT_EQ(r.call.intervals[3].core_type, 2u);
  EXPECT_EQ(r.call.intervals[3].extra_id, 2);
  ASSERT_EQ(r.call.cores.size(), 2u);
  EXPECT_EQ(r.call.cores[0].records, 6u);
  EXPECT_EQ(r.call.unmatched_begin + r.call.unmatched_end, 0u);
}

TEST(MoeTraceImport, UmdkVariantKeepsEachCoresT0AndSkippedEvents) {
  ScratchDir dir;
  const std::string b =
      R"({"cat":"trace","ts":1.00,"pid":0,"tid":"type1_core002","ph":"B","name":"dispatch-gmm1 recv-token [extra:0] #0","args":{"combined_id":"0x7","raw_timestamp":1000050,"initial_timestamp":1000000,"clock_divisor":50.0,"event_id":3,"extra_id":0,"extra_raw":0,"rank_id":4,"core_type":1,"core_id":2}})";
  const std::string e =
      R"({"cat":"trace","ts":4.00,"pid":0,"tid":"type1_core002","ph":"E","name":"dispatch-gmm1 recv-token [extra:0] #0","args":{"combined_id":"0x8","raw_timestamp":1000200,"initial_timestamp":1000000,"rank_id":4,"core_type":1,"core_id":2}})";
  write_text(dir / "t.json", "{\"traceEvents\":[" + b + "," + e +
                                 R"(],"otherData":{"version":"1.0","generator":"trace_collector_fifo_seq_sorted_us","total_events":2,"skipped_events":3,"unpaired_events":0,"b_events":1,"e_events":1,"total_ranks":1,"clock_divisor":50.0,"extra_mode":"seq","depth":0}})");
  Read r;
  read(dir / "t.json", r, 4);
  ASSERT_TRUE(r.call.error.empty()) << r.call.error;
  EXPECT_EQ(r.call.variant, "umdk");
  EXPECT_EQ(r.call.call_index, -1);
  EXPECT_EQ(r.call.trace_rank, 4);
  EXPECT_EQ(r.call.unmapped_points, 3u);
  ASSERT_EQ(r.call.intervals.size(), 1u);
  EXPECT_EQ(r.call.intervals[0].start_ns, 1000);
  EXPECT_EQ(r.call.intervals[0].end_ns, 4000);
  ASSERT_EQ(r.call.cores.size(), 1u);
  EXPECT_EQ(r.call.cores[0].t0_cycles, 1000000);
}

TEST(MoeTraceImport, BareArrayOfXEventsWithTidOnlyThreads) {
  ScratchDir dir;
  write_text(dir / "a.json",
             R"([{"ph":"X","ts":5.5,"dur":2.25,"tid":"type0_core007","pid":0,"name":"gmm2-combine moe-gmm2 [extra:0] #3"},
                 {"ph":"X","ts":1,"dur":10,"tid":"type0_core007","pid":0,"name":"gmm2-combine [extra:0] #0"},
                 {"ph":"X","ts":1,"tid":"type0_core007","name":"no dur"},
                 {"ph":"X","ts":1,"dur":1,"tid":"thread 3","name":"no core"}])");
  Read r;
  read(dir / "a.json", r);
  ASSERT_TRUE(r.call.error.empty()) << r.call.error;
  EXPECT_EQ(r.call.variant, "array");
  ASSERT_EQ(r.call.intervals.size(), 2u);
  EXPECT_EQ(r.label(0), "gmm2-combine");
  EXPECT_EQ(r.call.intervals[0].core_id, 7u);
  EXPECT_EQ(r.label(1), "gmm2-combine moe-gmm2");
  EXPECT_EQ(r.call.intervals[1].index, 3);
  EXPECT_EQ(r.call.intervals[1].start_ns, 5500);
  EXPECT_EQ(r.call.intervals[1].end_ns, 7750);
  EXPECT_EQ(r.call.bad_events, 2u);
  EXPECT_EQ(r.stats.count(Stat::moe_trace_bad_event), 2u);
}

TEST(MoeTraceImport, UnmatchedEventsAreCountedAndPairingIsFirstInFirstOut) {
  ScratchDir dir;
  // B B E E of one name pairs outer-B with the first E (the collector's FIFO), a lone E and a lone B
  write_text(dir / "t.json", skill_file({ev("B", 1, "x [extra:0] #0", 0, 0), ev("B", 2, "x [extra:0] #0", 0, 0),
                                         ev("E", 3, "x [extra:0] #0", 0, 0), ev("E", 4, "x [extra:0] #0", 0, 0),
                                         ev("E", 5, "lone-e [extra:0] #0", 0, 0), ev("B", 6, "lone-b [extra:0] #0", 0, 0)}));
  Read r;
  read(dir / "t.json", r);
  ASSERT_EQ(r.call.intervals.size(), 2u);
  EXPECT_EQ(r.call.intervals[0].start_ns, 1000);
  EXPECT_EQ(r.call.intervals[0].end_ns, 3000);
  EXPECT_EQ(r.call.intervals[1].start_ns, 2000);
  EXPECT_EQ(r.call.intervals[1].end_ns, 4000);
  EXPECT_EQ(r.call.unmatched_begin, 1u);
  EXPECT_EQ(r.call.unmatched_end, 1u);
  EXPECT_EQ(r.stats.count(Stat::moe_trace_unmatched), 2u);
}

TEST(MoeTraceImport, TruncatedOrForeignFilesAreAClearErrorNotACrash) {
  ScratchDir dir;
  const std::string whole = skill_file({ev("B", 1, "x [extra:0] #0", 0, 0), ev("E", 3, "x [extra:0] #0", 0, 0)});
  write_text(dir / "cut.json", whole.substr(0, whole.size() / 2));
  write_text(dir / "other.json", R"({"schema": 1})");
  write_text(dir / "empty.json", "");
  for (const char* name : {"cut.json", "other.json", "empty.json"}) {
    Read r;
    read(dir / name, r);
    EXPECT_NE(r.call.error.find(name), std::string::npos) << r.call.error;
    EXPECT_TRUE(r.call.intervals.empty());
    EXPECT_EQ(r.stats.count(Stat::moe_trace_unreadable), 1u) << name;
  }
  Read missing;
  read(dir / "nope.json", missing);
  EXPECT_FALSE(missing.call.error.empty());
}

TEST(MoeTraceImport, KeepsThisRanksEventsOrTheOnlyRank) {
  ScratchDir dir;
  write_text(dir / "two.json", skill_file({ev("B", 1, "x [extra:0] #0", 0, 0, 3), ev("E", 2, "x [extra:0] #0", 0, 0, 3),
                                           ev("B", 1, "x [extra:0] #0", 0, 0, 5), ev("E", 9, "x [extra:0] #0", 0, 0, 5)}));
  Read five;
  read(dir / "two.json", five, 5);
  ASSERT_EQ(five.call.intervals.size(), 1u);
  EXPECT_EQ(five.call.intervals[0].end_ns, 9000);
  EXPECT_EQ(five.call.other_rank_events, 2u);
  Read none;
  read(dir / "two.json", none, 7);  // two ranks, neither is 7
  EXPECT_TRUE(none.call.intervals.empty());
  EXPECT_EQ(none.stats.count(Stat::moe_trace_other_rank), 1u);
  write_text(dir / "one.json", skill_file({ev("B", 1, "x [extra:0] #0", 0, 0, 3), ev("E", 2, "x [extra:0] #0", 0, 0, 3)}));
  Read only;
  read(dir / "one.json", only, 7);  // the driver's rank numbering differs: the file's only rank is used
  EXPECT_EQ(only.call.intervals.size(), 1u);
  EXPECT_EQ(only.call.trace_rank, 3);
}

TEST(MoeTraceImport, ACoreThatFilledItsBufferIsFlagged) {
  ScratchDir dir;
  std::vector<std::string> events;
  for (int i = 0; i < 3; ++i) {
    events.push_back(ev("B", i * 2, "x [extra:0] #" + std::to_string(i), 0, 0));
    events.push_back(ev("E", i * 2 + 1, "x [extra:0] #" + std::to_string(i), 0, 0));
  }
  events.push_back(ev("B", 0, "y [extra:0] #0", 0, 1));
  events.push_back(ev("E", 1, "y [extra:0] #0", 0, 1));
  write_text(dir / "t.json", skill_file(events));
  Read r;
  read(dir / "t.json", r, 0, 6);  // a 6-record buffer: core 0 is full, core 1 is not
  EXPECT_EQ(r.call.full_cores, 1u);
  EXPECT_EQ(r.stats.count(Stat::moe_trace_core_buffer_full), 1u);
  EXPECT_EQ(r.call.intervals.size(), 4u);
}

TEST(MoeTraceImport, FindsTheRanksTraceFilesInNameOrder) {
  ScratchDir dir;
  write_text(dir / "rank0" / "moe_trace" / "b_call2.json", "[]");
  write_text(dir / "rank0" / "moe_trace" / "a_call10.json", "[]");
  write_text(dir / "rank0" / "moe_trace" / "notes.txt", "x");
  const auto files = find_moe_traces(dir / "rank0", "moe_trace");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), "a_call10.json");
  EXPECT_EQ(moe_trace_call_index(files[0]), 10);
  EXPECT_EQ(moe_trace_call_index(files[1]), 2);
  EXPECT_TRUE(find_moe_traces(dir / "rank1", "moe_trace").empty());
}

}  // namespace
}  // namespace ascprof::importers
