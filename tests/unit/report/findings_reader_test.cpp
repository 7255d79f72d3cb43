// The report's one reader of diagnosis_findings.json: every key the diagnostics stage writes comes
// back into its model::Finding field; no file is "no diagnostics" (not an error); a broken file is an
// error naming it, which fails the report rather than rendering it without findings.
#include <gtest/gtest.h>

#include "report/findings_reader.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

using ascprof::testing::ScratchDir;
using ascprof::testing::write_text;

TEST(FindingsReader, EveryWrittenKeyReadsIntoItsField) {
  ScratchDir dir("findings-reader");
  write_text(dir / "diagnosis_findings.json", R"({"schema_version": 1, "analysis_stage": "diagnostics",
    "diagnosis_findings": [
      {"claim_id": "claim_1", "claim_type": "slow_rank_suspected", "finding_type": "slow_rank_suspected",
       "scope": "cross_rank", "summary": "rank 3 is \u00e9 slow", "severity": "high", "confidence": "medium",
       "rank_ids": ["0", "3"], "suspected_ranks": ["3"], "alignment_ids": ["align_a"],
       "evidence_ids": ["evd_1", "evt_3_17"], "counter_evidence_ids": ["evd_2"], "limitations": ["one step"],
       "magnitude_ms": 12.5, "metrics": {"share": 0.8, "votes": [1, 2]}},
      {"finding_type": "device_idle_bubble", "rank_ids": ["0", 7]}
    ],
    "counts": {"finding_count": 2, "refused_without_evidence": 4}})");
  auto r = read_findings_file(dir.path());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->present);
  EXPECT_EQ(r->refused_without_evidence, 4u);
  ASSERT_EQ(r->findings.size(), 2u);
  const model::Finding& f = r->findings[0];
  EXPECT_EQ(f.claim_id, "claim_1");
  EXPECT_EQ(f.finding_type, "slow_rank_suspected");
  EXPECT_EQ(f.scope, "cross_rank");
  EXPECT_EQ(f.summary, "rank 3 is \xC3\xA9 slow");
  EXPECT_EQ(f.severity, "high");
  EXPECT_EQ(f.confidence, "medium");
  EXPECT_EQ(f.rank_ids, (std::vector<std::string>{"0", "3"}));
  EXPECT_EQ(f.suspected_ranks, (std::vector<std::string>{"3"}));
  EXPECT_EQ(f.alignment_ids, (std::vector<std::string>{"align_a"}));
  EXPECT_EQ(f.evidence_ids, (std::vector<std::string>{"evd_1", "evt_3_17"}));
  EXPECT_EQ(f.counter_evidence_ids, (std::vector<std::string>{"evd_2"}));
  EXPECT_EQ(f.limitations, (std::vector<std::string>{"one step"}));
  EXPECT_DOUBLE_EQ(f.magnitude_ms, 12.5);
  EXPECT_EQ(f.metrics_json, R"({"share":0.8,"votes":[1,2]})");
  // missing keys read as defaults; a non-string list entry is skipped
  const model::Finding& g = r->findings[1];
  EXPECT_EQ(g.finding_type, "device_idle_bubble");
  EXPECT_EQ(g.rank_ids, (std::vector<std::string>{"0"}));
  EXPECT_TRUE(g.summary.empty());
  EXPECT_TRUE(g.evidence_ids.empty());
  EXPECT_EQ(g.magnitude_ms, 0.0);
}

TEST(FindingsReader, NoFileIsNoDiagnosticsAndABrokenFileIsAnError) {
  ScratchDir dir("findings-reader");
  auto none = read_findings_file(dir.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->present);
  EXPECT_TRUE(none->findings.empty());

  write_text(dir / "diagnosis_findings.json", R"({"diagnosis_findings": [{"finding_type": "x"})");  // truncated
  auto truncated = read_findings_file(dir.path());
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().to_string().find("diagnosis_findings.json"), std::string::npos) << truncated.status().to_string();

  write_text(dir / "diagnosis_findings.json", R"({"findings": []})");  // another document
  auto other = read_findings_file(dir.path());
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().to_string().find("key diagnosis_findings"), std::string::npos) << other.status().to_string();
}

}  // namespace
}  // namespace ascprof::report
