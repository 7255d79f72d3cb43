// Module breakdown (issue 21) on hand-made trace tables with exact expected times: nested modules,
// repeated calls, a task launched on the Python thread outside every module, one without a launch, one
// launched from torch_npu's dequeue thread (followed back to its Enqueue), one placed at its torch op.
#include "ascprof/analysis/module_breakdown.hpp"

#include <gtest/gtest.h>

#include "ascprof/analysis/host_bound.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

constexpr int64_t kDevicePid = 900, kCannPid = 800, kPythonPid = 700;
constexpr int64_t kPy = 10, kDequeue = 20, kOther = 30;  // threads

const knowledge::ModuleRules& rules() {
  static const knowledge::Knowledge k = std::move(knowledge::Knowledge::load(ascprof::testing::knowledge_dir())).value();
  return k.modules;
}

class ModuleBreakdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model::ProcessInfo dev, cann, py;
    dev.pid = kDevicePid;
    dev.kind = model::ProcessKind::kAscendHardware;
    cann.pid = kCannPid;
    cann.kind = model::ProcessKind::kCann;
    py.pid = kPythonPid;
    py.kind = model::ProcessKind::kPython;
    tr.processes = {dev, cann, py};
    tr.threads.push_back({kDevicePid, 1, pool.intern("Stream 1"), -1});
  }
  void host(const std::string& name, const char* cat, int64_t tid, int64_t start, int64_t dur, bool cann = false) {
    auto& h = tr.host_ops;
    h.name.push_back(pool.intern(name));
    h.cat.push_back(pool.intern(cat));
    h.is_cann.push_back(cann ? 1 : 0);
    h.pid.push_back(cann ? kCannPid : kPythonPid);
    h.tid.push_back(tid);
    h.start_ns.push_back(start);
    h.dur_ns.push_back(dur);
    h.source_offset.push_back(static_cast<uint64_t>(start));
    h.connection_id.push_back(-1);
  }
  void module(const std::string& name, int64_t start, int64_t end, int64_t tid = kPy) {
    any_module_ = true;
    host("nn.Module: " + name, "python_function", tid, start, end - start);
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
  // A device task on stream 1 starting at `start`; launched (HostToDevice flow from the CANN thread
  // `tid` at `launch_ts`) unless tid < 0.
  void task(int64_t start, int64_t dur, int64_t tid, int64_t launch_ts) {
    auto& d = tr.device_tasks;
    d.name.push_back(0);
    d.task_type.push_back(0);
    d.stream_id.push_back(1);
    d.task_id.push_back(-1);
    d.connection_id.push_back(-1);
    d.start_ns.push_back(start);
    d.dur_ns.push_back(dur);
    d.source_offset.push_back(0);
    if (tid < 0) return;
    const int64_t id = static_cast<int64_t>(d.size());
    flow("HostToDevice", id, 's', kCannPid, tid, launch_ts);
    flow("HostToDevice", id, 'f', kDevicePid, 1, start);
  }
  // Host ops and flows in start order, as the importers leave them.
  ModuleBreakdown run() {
    auto& h = tr.host_ops;
    std::vector<size_t> o(h.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = i;
    std::stable_sort(o.begin(), o.end(), [&h](size_t a, size_t b) { return h.start_ns[a] < h.start_ns[b]; });
    model::HostOpTable s;
    for (const size_t i : o) {
      s.name.push_back(h.name[i]);
      s.cat.push_back(h.cat[i]);
      s.is_cann.push_back(h.is_cann[i]);
      s.pid.push_back(h.pid[i]);
      s.tid.push_back(h.tid[i]);
      s.start_ns.push_back(h.start_ns[i]);
      s.dur_ns.push_back(h.dur_ns[i]);
      s.source_offset.push_back(h.source_offset[i]);
      s.connection_id.push_back(h.connection_id[i]);
    }
    h = std::move(s);
    EXPECT_EQ(has_module_ranges(tr, pool, rules()), tr.host_ops.size() > 0 && any_module_);
    return module_breakdown(tr, pool, bind_launches(tr, pool, /*with_torch_ops=*/true), rules());
  }
  const ModuleRow* row(const ModuleBreakdown& b, const std::string& path) {
    for (const auto& r : b.summary.rows)
      if (r.path == path) return &r;
    ADD_FAILURE() << "no row " << path;
    return nullptr;
  }
  StringPool pool;
  model::TraceTables tr;
  bool any_module_ = false;
};

TEST_F(ModuleBreakdownTest, NestedModulesGetExactSelfAndTotalTime) {
  module("Net_0", 100, 1000);
  module("Conv_0", 200, 400);
  module("Block_0", 500, 900);
  module("Linear_0", 600, 700);
  module("Net_0", 2000, 2500);  // second call
  module("Conv_0", 2100, 2200);
  host("aten::mm", "cpu_op", kPy, 605, 20);  // a torch op inside Linear_0: not a module
  host("nn.Module: Fake_0", "cpu_op", kPy, 150, 10);  // the module prefix on another category: not one
  // torch_npu's task queue: a Dequeue slice on thread 20 whose flow comes from an Enqueue at 650 (Linear_0)
  host("Dequeue@MatMul", "dequeue", kDequeue, 3000, 100);
  flow("async_task_queue", 5, 's', kPythonPid, kPy, 650);
  flow("async_task_queue", 5, 'f', kPythonPid, kDequeue, 3000);
  task(10000, 10, kPy, 150);      // Net_0 itself
  task(10100, 20, kPy, 250);      // Conv_0
  task(10200, 30, kPy, 610);      // Linear_0
  task(10300, 40, kPy, 550);      // Block_0 itself
  task(10400, 50, kPy, 1500);     // the Python thread between modules: outside
  task(10500, 60, -1, 0);         // no launch
  task(10600, 70, kDequeue, 3050);  // dequeue thread -> the Enqueue at 650: Linear_0
  task(10700, 80, kPy, 2150);     // Conv_0, second call
  task(10800, 90, kOther, 5);     // a thread without modules, but its torch op ran in Net_0's second call
  flow("async_npu", 1, 's', kPythonPid, kPy, 2050);
  flow("async_npu", 1, 'f', kDevicePid, 1, 10800);
  task(10900, 100, kOther, 6);    // a thread without modules, no torch op: outside
  task(11000, 5, kPy, 400);       // at Conv_0's end ([start, end)): Net_0 itself

  const ModuleBreakdown b = run();
  const ModuleRankSummary& s = b.summary;
  ASSERT_TRUE(s.present());
  EXPECT_EQ(s.ranges, 6u);
  EXPECT_EQ(s.threads, 1u);
  EXPECT_EQ(s.improperly_nested, 0u);
  ASSERT_EQ(s.rows.size(), 4u);
  EXPECT_EQ(s.rows[0].path, "Net_0");  // by first call, parents first
  EXPECT_EQ(s.rows[1].path, "Net_0/Conv_0");
  EXPECT_EQ(s.rows[2].path, "Net_0/Block_0");
  EXPECT_EQ(s.rows[3].path, "Net_0/Block_0/Linear_0");
  EXPECT_EQ(s.rows[3].module, "Linear_0");
  EXPECT_EQ(s.rows[3].depth, 2u);

  const ModuleRow* net = row(b, "Net_0");
  EXPECT_EQ(net->calls, 2u);
  EXPECT_EQ(net->host_ns, 900 + 500);
  EXPECT_EQ(net->self_device_ns, 10 + 90 + 5);
  EXPECT_EQ(net->self_tasks, 3u);
  EXPECT_EQ(net->total_device_ns, 105 + 100 + 140);
  EXPECT_EQ(net->tasks, 8u);
  const ModuleRow* conv = row(b, "Net_0/Conv_0");
  EXPECT_EQ(conv->calls, 2u);
  EXPECT_EQ(conv->host_ns, 200 + 100);
  EXPECT_EQ(conv->self_device_ns, 20 + 80);
  EXPECT_EQ(conv->total_device_ns, 100);
  const ModuleRow* block = row(b, "Net_0/Block_0");
  EXPECT_EQ(block->self_device_ns, 40);
  EXPECT_EQ(block->total_device_ns, 40 + 30 + 70);
  EXPECT_EQ(block->tasks, 3u);
  const ModuleRow* linear = row(b, "Net_0/Block_0/Linear_0");
  EXPECT_EQ(linear->self_device_ns, 30 + 70);
  EXPECT_EQ(linear->total_device_ns, 100);
  EXPECT_EQ(linear->self_tasks, 2u);

  // every task is somewhere: in a module, outside every module, or without a launch
  EXPECT_EQ(s.tasks, 11u);
  EXPECT_EQ(s.device_ns, 555);
  EXPECT_EQ(s.module_tasks, 8u);
  EXPECT_EQ(s.module_ns, 345);
  EXPECT_EQ(s.outside_tasks, 2u);
  EXPECT_EQ(s.outside_ns, 50 + 100);
  EXPECT_EQ(s.unlaunched_tasks, 1u);
  EXPECT_EQ(s.unlaunched_ns, 60);
  EXPECT_EQ(s.by_launch_thread, 7u);
  EXPECT_EQ(s.by_task_queue, 1u);
  EXPECT_EQ(s.by_torch_op, 1u);

  // the calls, in start order, each with its own device time
  ASSERT_EQ(b.calls.size(), 6u);
  EXPECT_EQ(b.calls[0].start_ns, 100);
  EXPECT_EQ(b.calls[0].row, 0u);
  EXPECT_EQ(b.calls[0].total_device_ns, 10 + 5 + 20 + 140);
  EXPECT_EQ(b.calls[4].start_ns, 2000);
  EXPECT_EQ(b.calls[4].self_device_ns, 90);
  EXPECT_EQ(b.calls[4].total_device_ns, 90 + 80);
  EXPECT_EQ(b.calls[5].source_offset, 2100u);
}

// A collective's Notify_Wait inside a module counts in its device time and, apart, in its wait time:
// busy = total - wait is what ranks are compared on.
TEST_F(ModuleBreakdownTest, WaitingTasksAreCountedApart) {
  module("Net_0", 0, 1000);
  module("Attn_0", 100, 500);
  task(2000, 40, kPy, 200);  // a kernel in Attn_0
  task(2100, 300, kPy, 300); // its allReduce waiting for a peer
  tr.device_tasks.task_type.back() = pool.intern("Notify_Wait");
  task(2500, 7, kPy, 50);    // Net_0 itself
  const ModuleBreakdown b = run();
  const ModuleRow* attn = row(b, "Net_0/Attn_0");
  EXPECT_EQ(attn->self_device_ns, 340);
  EXPECT_EQ(attn->self_wait_ns, 300);
  EXPECT_EQ(attn->busy_ns(), 40);
  const ModuleRow* net = row(b, "Net_0");
  EXPECT_EQ(net->total_device_ns, 347);
  EXPECT_EQ(net->self_wait_ns, 0);
  EXPECT_EQ(net->total_wait_ns, 300);
  EXPECT_EQ(net->busy_ns(), 47);
}

TEST_F(ModuleBreakdownTest, ModuleThreadsAreMatchedByTid) {
  module("Fwd_0", 0, 100, kPy);
  module("Bwd_0", 0, 100, kOther);  // same time, another thread
  task(1000, 7, kPy, 50);
  task(1100, 9, kOther, 50);
  const ModuleBreakdown b = run();
  EXPECT_EQ(b.summary.threads, 2u);
  EXPECT_EQ(row(b, "Fwd_0")->total_device_ns, 7);
  EXPECT_EQ(row(b, "Bwd_0")->total_device_ns, 9);
}

TEST_F(ModuleBreakdownTest, ARangeOverlappingWithoutNestingIsCountedAndClosed) {
  module("A_0", 0, 100);
  module("B_0", 50, 150);  // starts inside A_0, ends after it
  task(1000, 3, kPy, 120);
  const ModuleBreakdown b = run();
  EXPECT_EQ(b.summary.improperly_nested, 1u);
  EXPECT_EQ(row(b, "B_0")->depth, 0u);
  EXPECT_EQ(row(b, "B_0")->total_device_ns, 3);
}

TEST_F(ModuleBreakdownTest, ACaptureWithoutModuleRangesHasNone) {
  host("aten::mm", "cpu_op", kPy, 0, 10);
  host("python_fn", "python_function", kPy, 0, 10);
  task(100, 10, kPy, 5);
  const ModuleBreakdown b = run();
  EXPECT_FALSE(b.summary.present());
  EXPECT_TRUE(b.summary.rows.empty());
  EXPECT_TRUE(b.calls.empty());
}

// The binding both analyses share: host-bound's figures come from the same launches, and each launch
// keeps its thread.
TEST_F(ModuleBreakdownTest, HostBoundReadsTheSameBinding) {
  task(0, 100, kPy, -50);
  task(300, 100, kDequeue, 250);
  const LaunchBinding links = bind_launches(tr, pool, /*with_torch_ops=*/true);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links.link[1], LaunchLink::kHostToDevice);
  EXPECT_EQ(links.launch[1].tid, kDequeue);
  EXPECT_EQ(links.launch[1].ts_ns, 250);
  EXPECT_FALSE(links.torch_op[1].found());
  const HostBoundStats a = host_bound_stats(tr, pool), b = host_bound_stats(tr, links);
  EXPECT_EQ(a.host_bound_ns, 150);
  EXPECT_EQ(b.host_bound_ns, 150);
  EXPECT_EQ(a.by_host_to_device, b.by_host_to_device);
}

}  // namespace
}  // namespace ascprof::analysis
