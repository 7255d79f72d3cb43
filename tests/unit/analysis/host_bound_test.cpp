// Host-bound idle time: a gap counts as host-bound up to the moment the next kernel was launched.
#include "ascprof/analysis/host_bound.hpp"

#include <gtest/gtest.h>

#include "ascprof/analysis/diagnose.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

TEST(HostBound, GapBeforeALateLaunchIsHostBound) {
  StringPool pool;
  model::TraceTables tr;
  auto task = [&tr](int64_t start, int64_t dur, int64_t conn) {
    tr.device_tasks.name.push_back(0);
    tr.device_tasks.task_type.push_back(0);
    tr.device_tasks.stream_id.push_back(1);
    tr.device_tasks.task_id.push_back(-1);
    tr.device_tasks.connection_id.push_back(conn);
    tr.device_tasks.start_ns.push_back(start);
    tr.device_tasks.dur_ns.push_back(dur);
    tr.device_tasks.source_offset.push_back(0);
  };
  auto launch = [&tr, &pool](int64_t id, int64_t ts) {
    tr.flows.cat.push_back(pool.intern("HostToDevice"));
    tr.flows.name.push_back(0);
    tr.flows.id.push_back(id);
    tr.flows.phase.push_back('s');
    tr.flows.pid.push_back(0);
    tr.flows.tid.push_back(0);
    tr.flows.ts_ns.push_back(ts);
    tr.flows.source_offset.push_back(0);
  };
  task(0, 100, 1);      // busy 0-100
  task(300, 100, 2);    // gap 100-300, launched at 250: 150 ns host-bound
  task(500, 100, 3);    // gap 400-500, launched at 50 (early): not host-bound
  task(550, 100, 4);    // overlaps: no gap
  launch(1, -10);
  launch(2, 250);
  launch(3, 50);
  const auto st = host_bound_stats(tr, pool);
  EXPECT_EQ(st.device_wall_ns, 650);
  EXPECT_EQ(st.gaps, 2u);
  EXPECT_EQ(st.idle_ns, 300);
  EXPECT_EQ(st.host_bound_gaps, 1u);
  EXPECT_EQ(st.host_bound_ns, 150);
  EXPECT_EQ(st.tasks, 4u);
  EXPECT_EQ(st.tasks_with_launch, 3u);
}

// A trace as torch_npu writes it: flow ids that equal no connection_id (one beyond 64 bits, kept as
// an interned string id), bound by their 'f' end at the task's stream and start; an async_npu link
// where a task has no HostToDevice one; a connection-id match only as the last resort.
class FlowBinding : public ::testing::Test {
 protected:
  static constexpr int64_t kDevicePid = 3254508960, kHostPid = 3254508768;
  void SetUp() override {
    model::ProcessInfo dev;
    dev.pid = kDevicePid;
    dev.kind = model::ProcessKind::kAscendHardware;
    model::ProcessInfo host;
    host.pid = kHostPid;
    host.kind = model::ProcessKind::kCann;
    tr.processes = {dev, host};
    tr.threads.push_back({kDevicePid, 77, pool.intern("Stream 2"), -1});  // thread 77 is stream 2
  }
  void task(int64_t start, int64_t dur, int64_t conn, int32_t stream = 2) {
    auto& d = tr.device_tasks;
    d.name.push_back(0);
    d.task_type.push_back(0);
    d.stream_id.push_back(stream);
    d.task_id.push_back(-1);
    d.connection_id.push_back(conn);
    d.start_ns.push_back(start);
    d.dur_ns.push_back(dur);
    d.source_offset.push_back(0);
  }
  void flow(const char* cat, int64_t id, char phase, int64_t pid, int64_t tid, int64_t ts) {
    auto& f = tr.flows;
    f.cat.push_back(pool.intern(cat));
    f.name.push_back(0);
    f.id.push_back(id);
    f.phase.push_back(static_cast<uint8_t>(phase));
    f.pid.push_back(pid);
    f.tid.push_back(tid);
    f.ts_ns.push_back(ts);
    f.source_offset.push_back(0);
  }
  StringPool pool;
  model::TraceTables tr;
};

TEST_F(FlowBinding, FlowsBindAtTheTaskNotByConnectionId) {
  const int64_t big_id = -static_cast<int64_t>(pool.intern("40004631069296951295")) - 1;
  task(0, 100, 263);
  task(1000, 100, 990);  // launched at 950 through a 20-digit flow id: host-bound from 100 to 950
  task(2000, 100, 991);  // only an async_npu link, from a torch op at 1990: host-bound from 1100 to 1990
  task(3000, 100, 5);    // no flow at all, connection_id 5 = a HostToDevice id launched at 100: early
  flow("HostToDevice", 263, 's', kHostPid, 9, 0);
  flow("HostToDevice", 263, 'f', kDevicePid, 77, 0);
  flow("HostToDevice", big_id, 's', kHostPid, 9, 950);
  flow("HostToDevice", big_id, 'f', kDevicePid, 77, 1000);
  flow("async_npu", 1736412474725417508, 's', 1, 1, 1990);
  flow("async_npu", 1736412474725417508, 'f', kDevicePid, 77, 2000);
  flow("HostToDevice", 5, 's', kHostPid, 9, 100);
  // an 'f' end on another stream at the same time binds to nothing here
  flow("HostToDevice", 6, 's', kHostPid, 9, 2999);
  flow("HostToDevice", 6, 'f', kDevicePid, 78, 3000);
  const auto st = host_bound_stats(tr, pool);
  EXPECT_EQ(st.tasks_with_launch, 4u);
  EXPECT_EQ(st.by_host_to_device, 2u);
  EXPECT_EQ(st.by_torch_to_npu, 1u);
  EXPECT_EQ(st.by_connection_id, 1u);
  EXPECT_EQ(st.gaps, 3u);
  EXPECT_EQ(st.host_bound_gaps, 2u);
  EXPECT_EQ(st.host_bound_ns, 850 + 890);
  EXPECT_EQ(launch_links_text(st),
            "2 by HostToDevice flows, 1 by async_npu torch_to_npu flows, 1 by a HostToDevice id equal to the task's "
            "connection_id");
}

// A task no flow ends at is launched by the CANN events carrying its connection_id: the latest of
// them (the Node@launch inside the AscendCL call).
TEST_F(FlowBinding, CannEventsWithTheTaskConnectionIdAreItsLaunch) {
  task(0, 100, 10);
  task(1000, 100, 11);  // AscendCL@ call at 300, its Node@launch at 960: host-bound from 100 to 960
  auto host = [this](int64_t start, int64_t conn) {
    auto& h = tr.host_ops;
    h.name.push_back(0);
    h.cat.push_back(0);
    h.is_cann.push_back(1);
    h.pid.push_back(kHostPid);
    h.tid.push_back(9);
    h.start_ns.push_back(start);
    h.dur_ns.push_back(10);
    h.source_offset.push_back(0);
    h.connection_id.push_back(conn);
  };
  host(-50, 10);
  host(300, 11);
  host(960, 11);
  const auto st = host_bound_stats(tr, pool);
  EXPECT_EQ(st.tasks_with_launch, 2u);
  EXPECT_EQ(st.by_cann_launch, 2u);
  EXPECT_EQ(st.host_bound_ns, 860);
}

TEST_F(FlowBinding, NoLinkAtAllLeavesEveryTaskUnlaunched) {
  task(0, 100, -1);
  task(1000, 100, -1);
  const auto st = host_bound_stats(tr, pool);
  EXPECT_EQ(st.tasks, 2u);
  EXPECT_EQ(st.tasks_with_launch, 0u);
  EXPECT_EQ(st.host_bound_gaps, 0u);
  EXPECT_EQ(launch_links_text(st), "none");
}

// A rank whose capture links no device task to a launch is reported as not testable, not left silent;
// a rank with links and no late launches gets nothing.
TEST(HostBoundDiagnosis, UntestedRankIsSaidNotSilent) {
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  HostBoundStats none;
  none.tasks = 533;
  none.device_wall_ns = 120'000'000;
  none.idle_ns = 80'000'000;
  HostBoundStats linked = none;
  linked.tasks_with_launch = 500;
  linked.by_host_to_device = 500;
  const auto found = diagnose_host_bound({"0", "1"}, {none, linked}, *kb);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].finding_type, "host_bound_untested");
  EXPECT_EQ(found[0].severity, "info");
  EXPECT_EQ(found[0].rank_ids, std::vector<std::string>{"0"});
  EXPECT_TRUE(found[0].suspected_ranks.empty());
  EXPECT_FALSE(found[0].evidence_ids.empty());
  EXPECT_NE(found[0].summary.find("links none of its 533 device tasks"), std::string::npos) << found[0].summary;
}

}  // namespace
}  // namespace ascprof::analysis
