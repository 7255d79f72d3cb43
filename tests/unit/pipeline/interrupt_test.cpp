// A stop asked for while a rank runs (SIGTERM from Slurm, Ctrl-C) abandons the rank: its outcome
// says "interrupted", and nothing it was writing is left, neither the HDF5 file nor a temporary one.
// Without the stop the same task completes (the test would pass vacuously otherwise).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

size_t files_under(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    n += it->is_regular_file(ec) ? 1 : 0;
  return n;
}

TEST(Interrupt, RankInFlightIsAbandonedLeavingNoFile) {
  ascprof::testing::ScratchDir dir("interrupt");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "c";
  so.ranks = 1;
  so.steps = 2;
  ASSERT_TRUE(synth::generate_capture(so).ok());
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());

  const RootPlan stopped_plan = plan_root(so.out_dir.string(), (dir / "stopped").string(), 0);
  ASSERT_EQ(stopped_plan.tasks.size(), 1u);
  request_interrupt(SIGTERM);
  const RankOutcome stopped = run_rank_stages(stopped_plan.tasks[0], *kb);
  clear_interrupt_for_testing();
  EXPECT_FALSE(stopped.ok);
  EXPECT_EQ(stopped.error_class, "interrupted");
  EXPECT_NE(stopped.error.find("interrupted by SIGTERM"), std::string::npos) << stopped.error;
  EXPECT_NE(stopped.error.find(stopped_plan.tasks[0].rank_path), std::string::npos) << stopped.error;
  EXPECT_EQ(files_under(dir / "stopped"), 0u) << "an abandoned rank left files behind";

  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "whole").string(), 0);
  const RankOutcome done = run_rank_stages(plan.tasks[0], *kb);
  EXPECT_TRUE(done.ok) << done.error;
  EXPECT_TRUE(fs::exists(fs::path(plan.out_dir) / done.h5_file));
}

TEST(Interrupt, SignalNamesAndStatus) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  request_interrupt(SIGINT);
  EXPECT_TRUE(interrupted());
  request_interrupt(SIGTERM);  // the first signal is the one reported
  EXPECT_EQ(interrupt_signal(), SIGINT);
  const Status st = interrupted_status("rank0");
  EXPECT_EQ(st.code(), ErrorCode::kInterrupted);
  EXPECT_EQ(st.to_string(), "interrupted: rank0: interrupted by SIGINT");
  clear_interrupt_for_testing();
  EXPECT_FALSE(interrupted());
}

// The stop another process passed on (request_interrupt) is not a signal received here: the
// SIGTERM that Slurm then delivers to this process too must not count as a second one (it did, and
// killed process 0 before it wrote the result). Repeated SIGTERMs never end the process at once.
TEST(Interrupt, SigtermsAfterAnInBandStopDoNotKill) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        request_interrupt(SIGTERM);
        raise(SIGTERM);
        raise(SIGTERM);
        std::exit(interrupted() && interrupt_signal() == SIGTERM ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Interrupt, SecondCtrlCEndsTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        raise(SIGINT);
        if (!interrupted()) std::exit(3);
        raise(SIGINT);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace ascprof::pipeline
