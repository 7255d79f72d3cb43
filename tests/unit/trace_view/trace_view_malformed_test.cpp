// Broken and unusual trace_view.json inputs, generated in the tests (real files are cut or spliced where
// a real shape matters).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <vector>
#include <sstream>
#include <string>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;

struct Imported {
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  Status status;
};

std::unique_ptr<Imported> import_one(std::string_view text, const TraceViewOptions& opts) {
  auto r = std::make_unique<Imported>();
  r->status = import_trace_view(text, "mem.json", r->pool, r->t, r->stats, opts);
  return r;
}

// Imports with the default (batched) parse mode and checks that the per-event modes agree exactly on
// status, counts, table sizes, damaged spans and every counter.
std::unique_ptr<Imported> import_text(std::string_view text, TraceViewOptions opts = {}) {
  auto r = import_one(text, opts);
  for (TraceViewParseMode mode : {TraceViewParseMode::kPerEvent}) {
    opts.parse_mode = mode;
    const auto o = import_one(text, opts);
    EXPECT_EQ(o->status.to_string(), r->status.to_string());
    EXPECT_EQ(o->t.events_total, r->t.events_total);
    EXPECT_EQ(o->t.metadata_events, r->t.metadata_events);
    EXPECT_EQ(o->t.host_ops.source_offset, r->t.host_ops.source_offset);
    EXPECT_EQ(o->t.device_tasks.source_offset, r->t.device_tasks.source_offset);
    EXPECT_EQ(o->t.comm_ops.size(), r->t.comm_ops.size());
    EXPECT_EQ(o->t.comm_plane_tasks.size(), r->t.comm_plane_tasks.size());
    EXPECT_EQ(o->t.overlap.size(), r->t.overlap.size());
    EXPECT_EQ(o->t.flows.source_offset, r->t.flows.source_offset);
    EXPECT_EQ(o->t.damaged_spans.size(), r->t.damaged_spans.size());
    for (size_t i = 0; i < std::min(o->t.damaged_spans.size(), r->t.damaged_spans.size()); ++i) {
      EXPECT_EQ(o->t.damaged_spans[i].offset, r->t.damaged_spans[i].offset);
      EXPECT_EQ(o->t.damaged_spans[i].length, r->t.damaged_spans[i].length);
    }
    for (size_t s = 0; s < kStatCount; ++s)
      EXPECT_EQ(o->stats.count(static_cast<Stat>(s)), r->stats.count(static_cast<Stat>(s)))
          << stat_info(static_cast<Stat>(s)).name << " mode " << static_cast<int>(mode);
  }
  return r;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A Python-process X event as torch_npu writes it (ph first).
std::string py_event(int i, int64_t pid = 100, int64_t tid = 100) {
  return "{\"ph\": \"X\", \"name\": \"aten::op" + std::to_string(i) + "\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ", \"ts\": \"1736408883688" + std::to_string(100 + i) +
         ".930\", \"dur\": 1.5, \"cat\": \"cpu_op\", \"args\": {\"Sequence number\": -1, \"Fwd thread id\": 0}}";
}
const char* kPyMeta = R"({"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}})";

std::string py_trace(int n) {
  std::string s = "[";
  s += kPyMeta;
  for (int i = 0; i < n; ++i) s += ", " + py_event(i);
  return s + "]";
}

const char* kLevel1 = "e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
constexpr size_t kLevel1Events = 10112;
// Start of the 5001st event of that file (Python raw_decode walk); the two bytes before it are ", ".
constexpr size_t kBoundary = 1322248;

TEST(TraceViewMalformed, EmptyFileIsParseErrorWithOffset) {
  const auto r = import_text("");
  ASSERT_FALSE(r->status.ok());
  EXPECT_EQ(r->status.code(), ErrorCode::kParse);
  EXPECT_NE(r->status.message().find("mem.json:byte 0:"), std::string::npos) << r->status.message();
  const auto ws = import_text("  \n\t ");
  EXPECT_EQ(ws->status.code(), ErrorCode::kParse);
  EXPECT_NE(ws->status.message().find("mem.json:byte 5:"), std::string::npos) << ws->status.message();
}

TEST(TraceViewMalformed, EmptyFileOnDiskNamesTheFile) {
  testing::ScratchDir dir("tv");
  testing::write_text(dir / "trace_view.json", "");
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  const Status st = import_trace_view(dir / "trace_view.json", pool, t, stats);
  EXPECT_EQ(st.code(), ErrorCode::kParse);
  EXPECT_NE(st.message().find("trace_view.json:byte 0: empty file"), std::string::npos) << st.message();
  const Status missing = import_trace_view(dir / "nope.json", pool, t, stats);
  EXPECT_EQ(missing.code(), ErrorCode::kIo);
  EXPECT_NE(missing.message().find("nope.json"), std::string::npos);
}

TEST(TraceViewMalformed, NotJsonIsParseError) {
  const auto r = import_text("hello world");
  EXPECT_EQ(r->status.code(), ErrorCode::kParse);
  EXPECT_NE(r->status.message().find("byte 0"), std::string::npos);
  EXPECT_NE(r->status.message().find("found 'h'"), std::string::npos);
}

TEST(TraceViewMalformed, EmptyObjectIsSchemaError) {
  const auto r = import_text("{}");
  EXPECT_EQ(r->status.code(), ErrorCode::kSchema);
  EXPECT_NE(r->status.message().find("no traceEvents array"), std::string::npos) << r->status.message();
  const auto other = import_text(R"({"displayTimeUnit": "ms", "other": [1, {"a": "}"}]})");
  EXPECT_EQ(other->status.code(), ErrorCode::kSchema);
  EXPECT_NE(other->status.message().find("no traceEvents array"), std::string::npos);
  const auto not_array = import_text(R"({"traceEvents": {}})");
  EXPECT_EQ(not_array->status.code(), ErrorCode::kSchema);
  EXPECT_NE(not_array->status.message().find("traceEvents is not an array"), std::string::npos);
}

TEST(TraceViewMalformed, EmptyArrayIsFine) {
  const auto r = import_text(" [ ] ");
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  EXPECT_EQ(r->t.events_total, 0u);
  EXPECT_EQ(r->stats.count(Stat::tv_truncated), 0u);
}

TEST(TraceViewMalformed, ObjectFormWithOtherKeys) {
  std::string s = R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "x}]"}], "traceEvents": [)";
  s += kPyMeta;
  s += ", " + py_event(1) + ", " + py_event(2);
  s += R"(], "displayTimeUnit": "ms", "more": [{"ph": "X"}]})";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  EXPECT_EQ(r->t.events_total, 3u);
  EXPECT_EQ(r->t.host_ops.size(), 2u);
  EXPECT_TRUE(r->t.damaged_spans.empty());
}

TEST(TraceViewMalformed, TruncatedMidEventKeepsCompleteEvents) {
  std::string s = py_trace(100);
  s.pop_back();  // ']'
  s += ", " + py_event(100).substr(0, 40);
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  EXPECT_EQ(r->t.host_ops.size(), 100u);
  EXPECT_EQ(r->t.events_total, 101u);
  EXPECT_EQ(r->stats.count(Stat::tv_truncated), 1u);
  ASSERT_EQ(r->stats.samples(Stat::tv_truncated).size(), 1u);
  const size_t cut_event = s.rfind("{\"ph\": \"X\", \"name\": \"aten::op100");
  EXPECT_NE(r->stats.samples(Stat::tv_truncated)[0].find("mem.json:byte " + std::to_string(cut_event) + ":"),
            std::string::npos)
      << r->stats.samples(Stat::tv_truncated)[0];
  EXPECT_TRUE(r->t.damaged_spans.empty());
}

TEST(TraceViewMalformed, TruncatedAfterLastEventCountsMissingBracket) {
  std::string s = py_trace(3);
  s.pop_back();
  const auto r = import_text(s + "  ");
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), 3u);
  EXPECT_EQ(r->stats.count(Stat::tv_truncated), 1u);
  EXPECT_NE(r->stats.samples(Stat::tv_truncated)[0].find("closing ']'"), std::string::npos);
}

// The real level1 file cut at half its size (byte 1109412, inside the event at byte 1109298):
// Python raw_decode of the prefix finds 3713 complete events (X 2461, C 800, s 186, f 186, M 80).
TEST(TraceViewMalformed, RealFileTruncatedInTheMiddle) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const std::string full = read_all(testing::real_fixtures_dir() / kLevel1);
  ASSERT_EQ(full.size(), 2218825u);
  testing::ScratchDir dir("tv");
  testing::write_text(dir / "cut.json", full.substr(0, full.size() / 2));
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  ASSERT_TRUE(import_trace_view(dir / "cut.json", pool, t, stats).ok());
  EXPECT_EQ(t.events_total, 3713u);
  EXPECT_EQ(t.metadata_events, 80u);
  EXPECT_EQ(t.counter_events, 800u);
  EXPECT_EQ(t.flows.size(), 372u);
  EXPECT_EQ(t.host_ops.size() + t.device_tasks.size() + t.comm_ops.size() + t.comm_plane_tasks.size() +
                t.overlap.size(),
            2461u);
  EXPECT_EQ(stats.count(Stat::tv_truncated), 1u);
  EXPECT_NE(stats.samples(Stat::tv_truncated)[0].find("cut.json:byte 1109298:"), std::string::npos)
      << stats.samples(Stat::tv_truncated)[0];
}

class RealSplice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::real_fixtures_dir().empty()) GTEST_SKIP() << "real fixtures not found";
    full_ = read_all(testing::real_fixtures_dir() / kLevel1);
    ASSERT_EQ(full_.substr(kBoundary - 3, 4), "}, {");
    base_ = import_text(full_);
    ASSERT_TRUE(base_->status.ok());
    ASSERT_EQ(base_->t.events_total, kLevel1Events);
  }
  // Replaces the ", " before the boundary event with `sep`.
  std::string splice(std::string_view sep) const {
    return full_.substr(0, kBoundary - 2) + std::string(sep) + full_.substr(kBoundary);
  }
  void expect_all_events_kept(const Imported& r) const {
    EXPECT_EQ(r.t.events_total, kLevel1Events);
    EXPECT_EQ(r.t.host_ops.size(), base_->t.host_ops.size());
    EXPECT_EQ(r.t.device_tasks.size(), base_->t.device_tasks.size());
    EXPECT_EQ(r.t.comm_plane_tasks.size(), base_->t.comm_plane_tasks.size());
    EXPECT_EQ(r.t.flows.size(), base_->t.flows.size());
    EXPECT_EQ(r.t.counter_events, base_->t.counter_events);
    EXPECT_EQ(r.t.device_tasks.start_ns, base_->t.device_tasks.start_ns);
  }
  std::string full_;
  std::unique_ptr<Imported> base_;
};

TEST_F(RealSplice, ArrayClosedAndReopened) {
  const auto r = import_text(splice("]\n["));
  ASSERT_TRUE(r->status.ok());
  expect_all_events_kept(*r);
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, kBoundary - 2);
  EXPECT_EQ(r->t.damaged_spans[0].length, 3u);
  EXPECT_NE(r->t.damaged_spans[0].reason.find("concatenation"), std::string::npos);
  EXPECT_EQ(r->stats.count(Stat::tv_damaged_span), 1u);
  EXPECT_NE(r->stats.samples(Stat::tv_damaged_span)[0].find("byte " + std::to_string(kBoundary - 2)), std::string::npos);
}

TEST_F(RealSplice, MissingComma) {
  const auto r = import_text(splice(""));
  ASSERT_TRUE(r->status.ok());
  expect_all_events_kept(*r);
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, kBoundary - 2);
  EXPECT_EQ(r->t.damaged_spans[0].length, 0u);
  EXPECT_NE(r->t.damaged_spans[0].reason.find("missing ','"), std::string::npos);
}

TEST_F(RealSplice, GarbageWithQuotesBetweenEvents) {
  const std::string garbage = ", #garbage \"x\n, ";
  const auto r = import_text(splice(garbage));
  ASSERT_TRUE(r->status.ok());
  expect_all_events_kept(*r);
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, kBoundary - 2);
  EXPECT_EQ(r->t.damaged_spans[0].length, garbage.size());
}

TEST_F(RealSplice, TruncatedEventFollowedByANewArray) {
  // torch_npu wrote part of an event, then the next writer started a new array.
  const std::string frag = ", {\"ph\": \"X\", \"name\": \"trunc";
  const auto r = import_text(splice(frag + "]\n["));
  ASSERT_TRUE(r->status.ok());
  expect_all_events_kept(*r);
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, kBoundary);  // the fragment's '{'
  EXPECT_EQ(r->t.damaged_spans[0].length, frag.size() - 2 + 3);
}

TEST_F(RealSplice, TrailingGarbageAfterArray) {
  const auto r = import_text(full_ + "\nxyz");
  ASSERT_TRUE(r->status.ok());
  expect_all_events_kept(*r);
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, full_.size() - 1);  // from the ']' on
}

TEST(TraceViewMalformed, FragmentThenNewArrayBetweenSmallEvents) {
  std::string s = "[";
  s += kPyMeta;
  s += ", " + py_event(0) + ", " + py_event(1) + ", ";
  const size_t frag_at = s.size();
  s += "{\"ph\": \"X\", \"name\": \"tr]\n[" + py_event(2) + ", " + py_event(3) + "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), 4u);
  EXPECT_EQ(r->pool.view(r->t.host_ops.name[3]), "aten::op3");
  ASSERT_EQ(r->t.damaged_spans.size(), 1u);
  EXPECT_EQ(r->t.damaged_spans[0].offset, frag_at);
  EXPECT_EQ(r->t.damaged_spans[0].length, s.find("[{", frag_at) + 1 - frag_at);
  EXPECT_EQ(r->stats.count(Stat::tv_event_bad_json), 0u);
}

TEST(TraceViewMalformed, BadJsonEventSkippedWithOffset) {
  std::string s = "[";
  s += kPyMeta;
  s += ", " + py_event(1);
  const size_t bad_at = s.size() + 2;
  s += R"(, {"ph": "X", "name" "bad", "pid": 100, "ts": "1", "dur": 1}, )" + py_event(2) + "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), 2u);
  EXPECT_EQ(r->stats.count(Stat::tv_event_bad_json), 1u);
  EXPECT_NE(r->stats.samples(Stat::tv_event_bad_json)[0].find("mem.json:byte " + std::to_string(bad_at)),
            std::string::npos)
      << r->stats.samples(Stat::tv_event_bad_json)[0];
}

TEST(TraceViewMalformed, NumbersAsStringsAndStringsAsNumbers) {
  const std::string s = R"([
    {"ph": "M", "name": "process_name", "pid": "4294967297", "tid": "0", "args": {"name": "Python"}},
    {"ph": "X", "name": "a", "pid": "4294967297", "tid": 7, "ts": 1736408883688177.930, "dur": "12.5", "cat": "cpu_op"},
    {"ph": "X", "name": "b", "pid": 4294967297, "tid": "8", "ts": "1736408883688178.000", "dur": 3},
    {"ph": "X", "name": "c", "pid": 4294967297.0, "tid": "main", "ts": 1736408883688179, "dur": 0.0004},
    {"ph": "X", "name": "d", "pid": 4294967297, "tid": 1, "ts": [1], "dur": 1},
    {"ph": "X", "name": "e", "pid": 4294967297, "tid": 1, "ts": "12:00", "dur": 1},
    {"ph": "X", "name": "f", "pid": 4294967297, "tid": 1, "ts": "1", "dur": null},
    {"ph": "s", "name": "fl", "id": "abc", "pid": 4294967297, "tid": 1, "ts": "5", "cat": "x"},
    {"ph": "f", "name": "fl", "id": 18446744073709551615, "pid": 4294967297, "tid": 1, "ts": 6.5, "cat": "x"},
    {"ph": "f", "name": "fl", "id": "77", "pid": 4294967297, "tid": 1, "ts": 7, "cat": "x"}
  ])";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  const auto& h = r->t.host_ops;
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(r->pool.view(h.name[0]), "a");
  EXPECT_EQ(h.pid[0], 4294967297);
  EXPECT_EQ(h.tid[0], 7);
  EXPECT_EQ(h.start_ns[0], 1736408883688177930);  // exact: from the number's text, not a double
  EXPECT_EQ(h.dur_ns[0], 12500);
  EXPECT_EQ(h.tid[1], 8);
  EXPECT_EQ(h.dur_ns[1], 3000);
  EXPECT_EQ(h.start_ns[2], 1736408883688179000);
  EXPECT_EQ(h.dur_ns[2], 0);  // 0.4 ns rounds to 0
  ASSERT_LT(h.tid[2], 0);
  EXPECT_EQ(r->pool.view(static_cast<StrId>(-h.tid[2] - 1)), "main");
  EXPECT_EQ(r->stats.count(Stat::tv_bad_ts), 2u);               // d, e
  EXPECT_EQ(r->stats.count(Stat::tv_event_missing_field), 1u);  // f: dur null
  const auto& f = r->t.flows;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(r->pool.view(static_cast<StrId>(-f.id[0] - 1)), "abc");
  EXPECT_EQ(f.ts_ns[0], 5000);
  EXPECT_EQ(r->pool.view(static_cast<StrId>(-f.id[1] - 1)), "18446744073709551615");
  EXPECT_EQ(f.ts_ns[1], 6500);
  EXPECT_EQ(f.id[2], 77);
  EXPECT_EQ(f.phase[0], 's');
  EXPECT_EQ(f.phase[2], 'f');
}

// The importer's fast decimal path must give exactly what parse_us_to_ns gives (and skip exactly the
// events it rejects), for times as strings and as JSON numbers.
TEST(TraceViewMalformed, TimesMatchParseUsToNs) {
  std::mt19937_64 rng(7);
  std::vector<std::string> texts = {"0",      "0.0005",  "0.0004999", "12.",          "1736408883688177.930",
                                    "9999999999999999.999", "99999999999999999", "123.4565", "1.5E+3", "+5.25",
                                    "-3.5",   " 7.25 ",  "1e400",     "abc",          "12.3.4",
                                    "",       "00012.000100", "9223372036854775.807", "79089.52021875"};
  for (int i = 0; i < 300; ++i) {
    std::string t = std::to_string(rng() % 10000000000000000ULL);
    if (rng() % 4 != 0) {
      t += '.';
      const int decimals = static_cast<int>(rng() % 9);
      for (int d = 0; d < decimals; ++d) t += static_cast<char>('0' + rng() % 10);
    }
    texts.push_back(t);
  }
  std::string s = "[";
  s += kPyMeta;
  size_t kept_expected = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string& t = texts[i];
    const bool as_number = !t.empty() && t.find_first_not_of("0123456789.") == std::string::npos &&
                           t.back() != '.' && t.front() != '.' && std::count(t.begin(), t.end(), '.') <= 1 &&
                           (t.size() == 1 || t[0] != '0' || t[1] == '.');
    const std::string ts = (as_number && i % 2 == 0) ? t : "\"" + t + "\"";
    s += ", {\"ph\": \"X\", \"name\": \"t" + std::to_string(i) + "\", \"pid\": 100, \"tid\": 1, \"ts\": " + ts +
         ", \"dur\": " + ts + "}";
    if (parse_us_to_ns(t).has_value()) ++kept_expected;
  }
  s += "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), kept_expected);
  EXPECT_EQ(r->stats.count(Stat::tv_bad_ts), texts.size() - kept_expected);
  for (size_t i = 0; i < r->t.host_ops.size(); ++i) {
    const std::string_view name = r->pool.view(r->t.host_ops.name[i]);
    const std::string& t = texts[static_cast<size_t>(std::stoul(std::string(name.substr(1))))];
    const auto ns = parse_us_to_ns(t);
    ASSERT_TRUE(ns.has_value()) << t;
    EXPECT_EQ(r->t.host_ops.start_ns[i], *ns) << t;
    EXPECT_EQ(r->t.host_ops.dur_ns[i], *ns) << t;
  }
}

// The AI Core Freq counter is kept; a counter without a name is not taken for it (the previous
// event's name must not leak into it: found by the trace_view fuzzer as a read of a freed buffer),
// nor one without MHz or ts; samples come out in time order.
TEST(TraceViewMalformed, OnlyNamedAicoreFreqCountersAreKept) {
  std::string s = "[";
  s += kPyMeta;
  s += R"(, {"name": "AI Core Freq", "pid": 5, "tid": 0, "ts": "3", "args": {"MHz": 800}, "ph": "C"})";
  s += R"(, {"pid": 5, "tid": 0, "ts": "2", "args": {"MHz": 900}, "ph": "C"})";
  s += R"(, {"name": "AI Core Freq", "pid": 5, "tid": 0, "args": {"MHz": 700}, "ph": "C"})";
  s += R"(, {"name": "AI Core Freq", "pid": 5, "tid": 0, "ts": "4", "args": {"value": 1}, "ph": "C"})";
  s += R"(, {"name": "HBM 0/Read", "pid": 6, "tid": 0, "ts": "1", "args": {"MHz": 600}, "ph": "C"})";
  s += R"(, {"name": "AI Core Freq", "pid": 5, "tid": 0, "ts": "1", "args": {"MHz": 1800}, "ph": "C"})";
  s += ", " + py_event(1) + "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.counter_events, 6u);
  EXPECT_EQ(r->stats.count(Stat::tv_event_missing_field), 2u);  // the named samples without ts or MHz
  EXPECT_EQ(r->t.aicore_freq.ts_ns, (std::vector<int64_t>{1000, 3000}));
  EXPECT_EQ(r->t.aicore_freq.mhz, (std::vector<uint32_t>{1800, 800}));
}

TEST(TraceViewMalformed, UnknownPhCountedAndSkipped) {
  std::string s = "[";
  s += kPyMeta;
  s += R"(, {"ph": "i", "name": "mark", "pid": 100, "tid": 1, "ts": "1"})";
  s += R"(, {"ph": "B", "name": "b", "pid": 100, "tid": 1, "ts": "1"})";
  s += R"(, {"ph": "XX", "name": "b", "pid": 100, "tid": 1, "ts": "1"})";
  s += R"(, {"name": "no ph", "pid": 100, "tid": 1, "ts": "1"})";
  s += ", " + py_event(1) + "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->stats.count(Stat::tv_unknown_ph), 3u);
  EXPECT_EQ(r->stats.count(Stat::tv_event_missing_field), 1u);
  EXPECT_EQ(r->t.host_ops.size(), 1u);
  EXPECT_EQ(r->t.events_total, 6u);
}

TEST(TraceViewMalformed, DeeplyNestedArgsDoNotOverflowTheStack) {
  constexpr int kDepth = 200000;
  std::string deep = "{\"ph\": \"X\", \"name\": \"deep\", \"pid\": 100, \"tid\": 1, \"ts\": \"5\", \"dur\": 1, \"args\": {\"a\": ";
  for (int i = 0; i < kDepth; ++i) deep += (i % 2 == 0) ? "{\"k\": " : "[";
  deep += "1";
  for (int i = kDepth - 1; i >= 0; --i) deep += (i % 2 == 0) ? "}" : "]";
  deep += "}}";
  std::string s = "[";
  s += kPyMeta;
  s += ", " + deep + ", " + py_event(1) + "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  // The neighbour is always kept; the deep event is either kept (args skipped) or reported as bad JSON.
  EXPECT_EQ(r->t.events_total, 3u);
  EXPECT_EQ(r->t.host_ops.size() + r->stats.count(Stat::tv_event_bad_json), 2u);
  EXPECT_TRUE(r->t.damaged_spans.empty());

  // Same with the process unknown when the event is read (args are then inspected).
  std::string s2 = "[" + deep + ", " + py_event(1) + ", " + kPyMeta + "]";
  const auto r2 = import_text(s2);
  ASSERT_TRUE(r2->status.ok());
  EXPECT_EQ(r2->t.host_ops.size() + r2->stats.count(Stat::tv_event_bad_json), 2u);
}

TEST(TraceViewMalformed, MetadataAfterEvents) {
  // msprof key order (ph last) and all metadata at the end; thread names decide stream / group / plane / overlap.
  const std::string s = R"json([
    {"name": "k1", "pid": 900, "tid": 5, "ts": "20.000", "dur": 1.0, "args": {"Task Type": "AI_CORE", "Physic Stream Id": 99, "Task Id": 3, "connection_id": 11}, "ph": "X"},
    {"name": "k0", "pid": 900, "tid": 5, "ts": "10.000", "dur": 2.0, "args": {"Task Type": "AI_VECTOR_CORE", "Task Id": 2}, "ph": "X"},
    {"name": "hcom_allReduce__1_0_1", "pid": 901, "tid": 0, "ts": "30.000", "dur": 5, "args": {"connection_id": 7, "data_type": "BF16", "alg_type": "RING", "count": 12}, "ph": "X"},
    {"name": "Memcpy", "pid": 901, "tid": 1, "ts": "31.000", "dur": 1, "args": {"task type": "Memcpy", "src rank": 1, "dst rank": 0, "transport type": "RDMA", "size(Byte)": 1024, "link type": "ROCE", "bandwidth(GB/s)": 12.5}, "ph": "X"},
    {"name": "Free", "pid": 902, "tid": 3, "ts": "40.000", "dur": 1, "ph": "X"},
    {"name": "Computing", "pid": 902, "tid": 0, "ts": "39.000", "dur": 1, "ph": "X"},
    {"ph": "X", "name": "ProfilerStep#7", "pid": 100, "tid": 100, "ts": "5.000", "dur": 100, "cat": "cpu_op", "args": {}},
    {"name": "AI Core Freq", "ts": "1.000", "pid": 903, "tid": 0, "args": {"MHz": 1800}, "ph": "C"},
    {"name": "odd", "pid": 903, "tid": 0, "ts": "1.000", "dur": 1, "ph": "X"},
    {"name": "process_name", "pid": 900, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
    {"name": "process_labels", "pid": 900, "tid": 0, "args": {"labels": "NPU 4"}, "ph": "M"},
    {"name": "thread_name", "pid": 900, "tid": 5, "args": {"name": "Stream 42"}, "ph": "M"},
    {"name": "process_name", "pid": 901, "tid": 0, "args": {"name": "Communication"}, "ph": "M"},
    {"name": "thread_name", "pid": 901, "tid": 0, "args": {"name": "Group tp-0-1 Communication"}, "ph": "M"},
    {"name": "thread_name", "pid": 901, "tid": 1, "args": {"name": "Plane 3"}, "ph": "M"},
    {"name": "process_name", "pid": 902, "tid": 0, "args": {"name": "Overlap Analysis"}, "ph": "M"},
    {"name": "thread_name", "pid": 902, "tid": 3, "args": {"name": "Free"}, "ph": "M"},
    {"name": "process_name", "pid": 903, "tid": 0, "args": {"name": "AI Core Freq"}, "ph": "M"},
    {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "Python"}}
  ])json";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok()) << r->status.to_string();
  const auto& pool = r->pool;
  const auto& d = r->t.device_tasks;
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(pool.view(d.name[0]), "k0");  // sorted by start
  EXPECT_EQ(d.stream_id[0], 42);          // thread name wins over args and tid
  EXPECT_EQ(d.task_id[0], 2);
  EXPECT_EQ(d.connection_id[0], -1);
  EXPECT_EQ(pool.view(d.task_type[1]), "AI_CORE");
  EXPECT_EQ(d.connection_id[1], 11);
  EXPECT_EQ(r->stats.count(Stat::tv_events_out_of_order), 1u);
  ASSERT_EQ(r->t.comm_ops.size(), 1u);
  EXPECT_EQ(pool.view(r->t.comm_ops.group[0]), "Group tp-0-1 Communication");
  EXPECT_EQ(pool.view(r->t.comm_ops.data_type[0]), "BF16");
  EXPECT_EQ(r->t.comm_ops.count[0], 12);
  ASSERT_EQ(r->t.comm_plane_tasks.size(), 1u);
  EXPECT_EQ(r->t.comm_plane_tasks.plane[0], 3);
  EXPECT_EQ(pool.view(r->t.comm_plane_tasks.transport[0]), "RDMA");
  EXPECT_EQ(r->t.comm_plane_tasks.size_bytes[0], 1024);
  EXPECT_DOUBLE_EQ(r->t.comm_plane_tasks.bandwidth_gbps[0], 12.5);
  ASSERT_EQ(r->t.overlap.size(), 2u);
  EXPECT_EQ(r->t.overlap.kind[0], static_cast<uint8_t>(model::OverlapKind::kComputing));  // by event name
  EXPECT_EQ(r->t.overlap.kind[1], static_cast<uint8_t>(model::OverlapKind::kFree));       // by thread name
  ASSERT_EQ(r->t.steps.size(), 1u);
  EXPECT_EQ(r->t.steps.step[0], 7);
  EXPECT_EQ(r->t.steps.start_ns[0], 5000);
  EXPECT_EQ(r->t.steps.end_ns[0], 105000);
  EXPECT_EQ(r->t.host_ops.size(), 1u);
  EXPECT_EQ(r->t.counter_events, 1u);
  EXPECT_EQ(r->stats.count(Stat::tv_unused_process_event), 1u);  // X on the counter process
  EXPECT_EQ(r->stats.count(Stat::tv_unnamed_process), 0u);
  bool found = false;
  for (const auto& p : r->t.processes)
    if (p.pid == 900) {
      found = true;
      EXPECT_EQ(p.device_id, 4);
      EXPECT_EQ(p.kind, model::ProcessKind::kAscendHardware);
    }
  EXPECT_TRUE(found);
  // Offsets point at each event's '{'.
  EXPECT_EQ(s.substr(d.source_offset[0], 14), "{\"name\": \"k0\",");
}

TEST(TraceViewMalformed, LateNamesCorrectEarlyPlacement) {
  // Events with "cat" from a pid not named yet are first taken as host ops; the names that arrive later
  // decide. pid 7 turns out to be Ascend Hardware (its args must survive), pid 8 CANN, pid 9 is never
  // named, and the stream thread of pid 5 is named after its device task was placed.
  const std::string s = R"json([
    {"ph": "M", "name": "process_name", "pid": 5, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"name": "k5", "pid": 5, "tid": 3, "ts": "1.000", "dur": 1, "args": {"Task Type": "AI_CORE", "Physic Stream Id": 77}, "ph": "X"},
    {"name": "k6", "pid": 5, "tid": 4, "ts": "1.500", "dur": 1, "args": {"Task Type": "AI_CORE"}, "ph": "X"},
    {"ph": "X", "name": "dev", "pid": 7, "tid": 1, "ts": "2.000", "dur": 1, "cat": "odd", "args": {"Task Type": "SDMA", "Task Id": 4}},
    {"ph": "X", "name": "api", "pid": 8, "tid": 1, "ts": "3.000", "dur": 1, "cat": "x"},
    {"ph": "X", "name": "lost", "pid": 9, "tid": 1, "ts": "4.000", "dur": 1, "cat": "cpu_op"},
    {"ph": "X", "name": "py", "pid": 10, "tid": 1, "ts": "5.000", "dur": 1, "cat": "cpu_op"},
    {"ph": "M", "name": "thread_name", "pid": 5, "tid": 3, "args": {"name": "Stream 12"}},
    {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"ph": "M", "name": "process_name", "pid": 8, "tid": 0, "args": {"name": "CANN"}},
    {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "Python"}},
    {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "Renamed"}}
  ])json";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  const auto& h = r->t.host_ops;
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(r->pool.view(h.name[0]), "api");
  EXPECT_EQ(h.is_cann[0], 1);
  EXPECT_EQ(r->pool.view(h.name[1]), "py");  // first process_name wins
  EXPECT_EQ(h.is_cann[1], 0);
  const auto& d = r->t.device_tasks;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(r->pool.view(d.name[0]), "k5");
  EXPECT_EQ(d.stream_id[0], 12);  // thread name that came later beats the args stream id
  EXPECT_EQ(r->pool.view(d.name[1]), "k6");
  EXPECT_EQ(d.stream_id[1], 4);  // no name, no args stream: tid
  EXPECT_EQ(r->pool.view(d.name[2]), "dev");
  EXPECT_EQ(r->pool.view(d.task_type[2]), "SDMA");
  EXPECT_EQ(d.task_id[2], 4);
  EXPECT_EQ(r->stats.count(Stat::tv_unnamed_process), 1u);
  EXPECT_NE(r->stats.samples(Stat::tv_unnamed_process)[0].find("pid 9 "), std::string::npos);
}

TEST(TraceViewMalformed, EventLargerThanBoundSkipped) {
  std::string big = py_event(1);
  big.insert(big.find("\"args\": {") + 9, "\"Call stack\": \"" + std::string(5000, 'x') + "\", ");
  std::string s = "[";
  s += kPyMeta;
  s += ", " + py_event(0) + ", " + big + ", " + py_event(2) + "]";
  TraceViewOptions opts;
  opts.max_event_bytes = 1000;
  const auto r = import_text(s, opts);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), 2u);
  EXPECT_EQ(r->stats.count(Stat::tv_event_too_large), 1u);
  EXPECT_NE(r->stats.samples(Stat::tv_event_too_large)[0].find("bound of 1000 bytes"), std::string::npos);
  EXPECT_EQ(import_text(s)->t.host_ops.size(), 3u);  // default bound keeps it
}

TEST(TraceViewMalformed, OutOfOrderTablesAreSorted) {
  std::string s = "[";
  s += kPyMeta;
  for (int i = 9; i >= 0; --i) s += ", " + py_event(i);
  s += "]";
  const auto r = import_text(s);
  ASSERT_TRUE(r->status.ok());
  ASSERT_EQ(r->t.host_ops.size(), 10u);
  EXPECT_TRUE(std::is_sorted(r->t.host_ops.start_ns.begin(), r->t.host_ops.start_ns.end()));
  EXPECT_EQ(r->pool.view(r->t.host_ops.name[0]), "aten::op0");
  EXPECT_EQ(r->stats.count(Stat::tv_events_out_of_order), 9u);
  // source_offset moved with its row.
  EXPECT_EQ(s.substr(r->t.host_ops.source_offset[0], py_event(0).size()), py_event(0));
}

TEST(TraceViewMalformed, EventAtVeryEndOfBufferWithoutPadding) {
  // The last event ends at the last byte: it must be copied to a padded buffer, not read past the end.
  std::string s = py_trace(2);
  s.pop_back();
  auto heap = std::make_unique<char[]>(s.size());
  std::memcpy(heap.get(), s.data(), s.size());
  auto r = std::make_unique<Imported>();
  r->status = import_trace_view(std::string_view(heap.get(), s.size()), "end.json", r->pool, r->t, r->stats);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->t.host_ops.size(), 2u);
  EXPECT_EQ(r->stats.count(Stat::tv_truncated), 1u);
}

}  // namespace
}  // namespace ascprof::importers
