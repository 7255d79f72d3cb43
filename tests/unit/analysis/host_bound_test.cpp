// Host-bound idle time: a gap counts as host-bound up to the moment the next kernel was launched.
#include "ascprof/analysis/host_bound.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ascprof::analysis
