// AI Core frequency (issue 21): kernel time below reduced_ratio x nominal MHz, from the counter's
// samples (each holds until the next), per rank and step; communication kernels and time before the
// first sample are left out; the finding's thresholds and evidence.
#include <gtest/gtest.h>

#include "ascprof/analysis/aicore_freq.hpp"
#include "ascprof/common/stable_id.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::DiagnosticsRules& rules() { return ascprof::testing::shipped_knowledge().diagnostics; }

struct Capture {
  StringPool pool;
  model::KernelTable k;
  model::AicoreFreqTable freq;
  model::RankStructure s;

  void kernel(int64_t start_us, int64_t dur_us, const char* core = "AI_CORE") {
    k.start_ns.push_back(start_us * 1000);
    k.dur_ns.push_back(dur_us * 1000);
    k.accelerator_core.push_back(pool.intern(core));
  }
  void sample(int64_t ts_us, uint32_t mhz) {
    freq.ts_ns.push_back(ts_us * 1000);
    freq.mhz.push_back(mhz);
  }
  void step(const char* id, uint32_t row_start, uint32_t row_end) {
    model::StepSegment g;
    g.segment_id = id;
    g.type = model::SegmentType::kStep;
    g.row_start = row_start;
    g.row_end = row_end;
    s.segments.push_back(g);
  }
  AicoreFreqStats stats() const { return aicore_freq_stats(k, pool, freq, s, rules()); }
};

TEST(AicoreFreq, KernelTimeBelowNominalIsCountedPerStep) {
  Capture c;
  c.sample(1000, 1800);
  c.sample(5000, 800);   // the idle governor's clock from 5 ms ...
  c.sample(7000, 1800);  // ... to 7 ms
  c.kernel(500, 1000);             // row 0: 500 us before the first sample, 500 us at 1800
  c.kernel(2000, 1000);            // row 1: nominal
  c.kernel(4500, 1000);            // row 2: 500 us at 1800, 500 us at 800
  c.kernel(5200, 300, "HCCL");     // row 3: communication, left out
  c.kernel(6000, 2000);            // row 4: 1000 us at 800, then 1000 us at 1800
  c.step("s0", 0, 1);
  c.step("s1", 2, 4);
  const auto st = c.stats();
  EXPECT_EQ(st.samples, 3u);
  EXPECT_EQ(st.min_mhz, 800u);
  EXPECT_EQ(st.max_mhz, 1800u);
  EXPECT_EQ(st.kernel_ns, (500 + 1000 + 1000 + 2000) * 1000);
  EXPECT_EQ(st.reduced_ns, (500 + 1000) * 1000);
  EXPECT_EQ(st.reduced_kernels, 2u);
  ASSERT_EQ(st.reduced_steps.size(), 1u);
  EXPECT_EQ(st.reduced_steps[0].segment_id, "s1");
  EXPECT_EQ(st.reduced_steps[0].kernel_ns, 3000 * 1000);
  EXPECT_EQ(st.reduced_steps[0].reduced_ns, 1500 * 1000);
  EXPECT_EQ(st.reduced_steps[0].min_mhz, 800u);

  const auto f = diagnose_aicore_freq("7", st, rules());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding_type, "aicore_frequency_reduced");
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"7"});
  EXPECT_EQ(f[0].severity, "high");  // a third of its kernel time
  EXPECT_EQ(f[0].evidence_ids.size(), 1u);
  EXPECT_NE(f[0].summary.find("1.500 ms of kernel time, 33.3 %"), std::string::npos) << f[0].summary;
}

TEST(AicoreFreq, NominalClocksSmallDipsAndNoSamplesGiveNothing) {
  Capture nominal;
  nominal.sample(0, 1800);
  nominal.sample(4000, 1750);  // within reduced_ratio of nominal
  nominal.kernel(1000, 5000);
  EXPECT_EQ(nominal.stats().reduced_ns, 0);
  EXPECT_TRUE(diagnose_aicore_freq("0", nominal.stats(), rules()).empty());

  Capture dip;  // 0.5 ms of 100 ms: below min_kernel_share
  dip.sample(0, 1800);
  dip.sample(50'000, 1000);
  dip.sample(50'500, 1800);
  dip.kernel(0, 100'000);
  EXPECT_EQ(dip.stats().reduced_ns, 500'000);
  EXPECT_TRUE(diagnose_aicore_freq("0", dip.stats(), rules()).empty());

  Capture none;  // no counter: nothing is known, nothing is said
  none.kernel(0, 1000);
  EXPECT_EQ(none.stats().samples, 0u);
  EXPECT_EQ(none.stats().kernel_ns, 0);
  EXPECT_TRUE(diagnose_aicore_freq("0", none.stats(), rules()).empty());
}

TEST(AicoreFreq, ARankWithoutStepsCitesItsRankWindow) {
  Capture c;
  c.sample(0, 1000);
  c.kernel(0, 5000);
  const auto f = diagnose_aicore_freq("3", c.stats(), rules());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence_ids, std::vector<std::string>{stable_id("evd", {"3", "rank_window"})});
}

TEST(AicoreFreq, SamplesAreSortedIntoStartOrder) {
  model::AicoreFreqTable t;
  t.ts_ns = {30, 10, 20, 10};
  t.mhz = {3, 1, 2, 4};
  model::sort_aicore_freq(t);
  EXPECT_EQ(t.ts_ns, (std::vector<int64_t>{10, 10, 20, 30}));
  EXPECT_EQ(t.mhz, (std::vector<uint32_t>{1, 4, 2, 3}));  // ties keep file order
}

}  // namespace
}  // namespace ascprof::analysis
