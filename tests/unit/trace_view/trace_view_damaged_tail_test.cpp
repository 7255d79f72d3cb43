// A trace_view.json whose events are followed by a long stretch of bytes that are no JSON (the hole of
// zeros a killed writer leaves in a preallocated file; the corpus test uses a 4 GiB one). The events
// before it are kept, the stretch is one damaged span plus the truncation, and the skipped bytes are
// released as they are passed: before the fix the whole stretch stayed resident (4 GiB RSS for 4 GiB).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ascprof/importers/trace_view.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;

// Peak resident set (kB) since the last reset_peak_rss(), or -1 when /proc cannot tell.
long peak_rss_kb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
  std::fclose(f);
  return kb;
}

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

TEST(TraceViewDamagedTail, LongHoleOfZerosIsSkippedWithoutStayingResident) {
  ascprof::testing::ScratchDir dir("tv-hole");
  const fs::path p = dir / "trace_view.json";
  std::string head = "[";
  for (int i = 0; i < 100; ++i) {
    if (i > 0) head += ", ";
    head += R"({"ph": "X", "name": "k)" + std::to_string(i) + R"(", "pid": 7, "tid": 1, "ts": ")" +
            std::to_string(1000 + i * 10) + R"(", "dur": 5, "args": {}})";
  }
  head += ", ";  // no closing bracket: the zeros follow the last event
  ascprof::testing::write_text(p, head);
  constexpr uint64_t kSize = uint64_t{768} << 20;  // sparse: no disk space, no write time
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(kSize)), 0);

  const bool can_measure = reset_peak_rss();
  const long before = peak_rss_kb();
  StringPool pool;
  model::TraceTables t;
  Stats stats;
  const Status st = import_trace_view(p, pool, t, stats);
  const long after = peak_rss_kb();

  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(t.events_total, 100u);
  EXPECT_EQ(stats.count(Stat::tv_truncated), 1u);
  EXPECT_EQ(stats.count(Stat::tv_damaged_span), 1u);
  ASSERT_EQ(t.damaged_spans.size(), 1u);
  EXPECT_EQ(t.damaged_spans[0].offset, head.size() - 2);  // from the ", " after the last event
  EXPECT_EQ(t.damaged_spans[0].length, kSize - (head.size() - 2));
  if (can_measure && before > 0 && after > 0) {
    // the release runs every 64 MiB: far below the 768 MiB of the hole
    EXPECT_LT(after - before, 256L * 1024) << "peak RSS grew by " << (after - before) / 1024 << " MiB";
  }
}

}  // namespace
}  // namespace ascprof::importers
