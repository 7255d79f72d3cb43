// Rank side of the critical path (critical_path.hpp): each step reduced to its communication ops and
// the rank's own walk back from each of them.
#include "ascprof/analysis/critical_path.hpp"

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/trace_tables.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace ascprof::analysis {

const char* path_kind_name(PathKind k) {
  switch (k) {
    case PathKind::kCompute: return "compute";
    case PathKind::kTransfer: return "transfer";
    case PathKind::kWaiting: return "waiting";
    case PathKind::kHostGap: return "host_gap";
  }
  return "compute";
}

namespace {

constexpr uint32_t kNotComm = UINT32_MAX;

// The communicator's name: trace_view's group thread "Group <name> Communication" and the database's
// group name say the same thing, so both exports give the same tables.
std::string communicator_name(std::string_view thread) {
  constexpr std::string_view head = "Group ", tail = " Communication";
  if (thread.size() > head.size() + tail.size() && thread.substr(0, head.size()) == head &&
      thread.substr(thread.size() - tail.size()) == tail)
    thread = thread.substr(head.size(), thread.size() - head.size() - tail.size());
  return std::string(thread);
}

// (group, seq) of every communication row of the rank, numbered as collective_marks numbers trace_view's
// communication ops: per group thread, in start order. The k-th row of a name is the name's k-th op.
struct CommRows {
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> of_row;  // row -> (group index, seq)
};

CommRows communication_rows(const model::KernelTable& k, const NormalizedKernels& norm, const StringPool& pool,
                            const model::CommOpTable& ops, const knowledge::Vocabulary& vocab, RankPathSkeleton& out) {
  std::unordered_map<std::string, uint32_t> group_index;
  auto group_of = [&](std::string name) {
    auto [it, fresh] = group_index.emplace(name, static_cast<uint32_t>(out.groups.size()));
    if (fresh) out.groups.push_back(std::move(name));
    return it->second;
  };
  // trace_view's ops of each name, in start order, with their group and sequence number
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&ops](size_t a, size_t b) { return ops.start_ns[a] < ops.start_ns[b]; });
  std::unordered_map<StrId, uint32_t> next_seq;
  std::unordered_map<StrId, std::vector<std::pair<uint32_t, uint32_t>>> by_name;  // one pool: trace and kernel names share ids
  for (const size_t i : order) {
    const uint32_t seq = next_seq[ops.group[i]]++;
    by_name[ops.name[i]].emplace_back(group_of(communicator_name(pool.view(ops.group[i]))), seq);
  }
  const int comm_type = vocab.op_type_index("communication");
  const int comm_aiv_type = vocab.op_type_index("mix_comm_aiv");
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < k.size(); ++r) {
    const int t = norm.op_type[r];
    if (by_name.count(k.name[r]) || t == comm_type || t == comm_aiv_type) rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [&k](uint32_t a, uint32_t b) { return k.start_ns[a] < k.start_ns[b]; });
  CommRows out_rows;
  std::unordered_map<StrId, uint32_t> occurrence;
  for (const uint32_t r : rows) {
    const uint32_t nth = occurrence[k.name[r]]++;
    const auto it = by_name.find(k.name[r]);
    if (it != by_name.end() && nth < it->second.size()) out_rows.of_row[r] = it->second[nth];
    else out_rows.of_row[r] = {group_of("name:" + std::string(pool.view(k.name[r]))), nth};  // no trace: the name is the op
  }
  return out_rows;
}

struct Task {
  int64_t start, end;
  uint32_t row;
  uint32_t op = kNotComm;  // index into the step's ops
  int32_t stream;
};

// Indices of tasks sorted by end, for "the task that ended last at or before t".
struct ByEnd {
  std::vector<uint32_t> idx;
  void sort(const std::vector<Task>& t) {
    std::sort(idx.begin(), idx.end(), [&t](uint32_t a, uint32_t b) {
      return t[a].end != t[b].end ? t[a].end < t[b].end : t[a].start != t[b].start ? t[a].start < t[b].start : t[a].row < t[b].row;
    });
  }
  int64_t last_at_or_before(const std::vector<Task>& t, int64_t at) const {
    auto it = std::upper_bound(idx.begin(), idx.end(), at, [&t](int64_t v, uint32_t i) { return v < t[i].end; });
    return it == idx.begin() ? -1 : static_cast<int64_t>(*(it - 1));
  }
};

StepSkeleton step_skeleton(const model::KernelTable& k, const model::StepSegment& seg, const CommRows& comm,
                           RankPathSkeleton& out, std::unordered_map<StrId, uint32_t>& name_index,
                           const StringPool& pool) {
  StepSkeleton st;
  st.segment_id = seg.segment_id;
  st.start_ns = seg.start_ns;
  st.end_ns = seg.end_ns;
  std::vector<Task> tasks;
  for (uint32_t r = seg.row_start; r <= seg.row_end && r < k.size(); ++r) {
    if (k.dur_ns[r] <= 0) continue;  // takes no time: no task can wait for it
    tasks.push_back({k.start_ns[r], k.start_ns[r] + k.dur_ns[r], r, kNotComm, k.stream_id[r]});
  }
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
    return a.start != b.start ? a.start < b.start : a.end != b.end ? a.end < b.end : a.row < b.row;
  });
  ByEnd all, comm_ops;
  std::unordered_map<int32_t, ByEnd> stream;
  for (uint32_t i = 0; i < tasks.size(); ++i) {
    Task& t = tasks[i];
    all.idx.push_back(i);
    stream[t.stream].idx.push_back(i);
    const auto c = comm.of_row.find(t.row);
    if (c == comm.of_row.end()) continue;
    t.op = static_cast<uint32_t>(st.ops.size());
    comm_ops.idx.push_back(i);
    PathOp op;
    op.group = c->second.first;
    op.seq = c->second.second;
    op.row = t.row;
    const auto [it, fresh] = name_index.emplace(k.name[t.row], static_cast<uint32_t>(out.names.size()));
    if (fresh) out.names.emplace_back(pool.view(k.name[t.row]));
    op.name = it->second;
    op.start_ns = t.start;
    op.end_ns = t.end;
    st.ops.push_back(op);
  }
  all.sort(tasks);
  comm_ops.sort(tasks);
  for (auto& [id, s] : stream) s.sort(tasks);

  // The task a task waited for: a communication op waits for whatever ended last before it (its input
  // comes from any stream); a kernel waits for the previous task of its own stream or a communication
  // op, whichever ended later (compute streams wait on communication through events; other compute
  // streams are not its dependencies).
  auto predecessor = [&](int64_t at, const Task* of) -> int64_t {
    if (of == nullptr || of->op != kNotComm) return all.last_at_or_before(tasks, at);
    const int64_t a = stream.at(of->stream).last_at_or_before(tasks, at);
    const int64_t b = comm_ops.last_at_or_before(tasks, at);
    if (a < 0) return b;
    if (b < 0) return a;
    return tasks[static_cast<size_t>(b)].end > tasks[static_cast<size_t>(a)].end ? b : a;
  };
  // before[i]: the walk back from task i's start. A predecessor ends at or before i starts and lasts > 0,
  // so it starts earlier and its own walk is already known (tasks are in start order).
  std::vector<LocalStretch> before(tasks.size());
  auto walk_from = [&](int64_t at, const Task* of) {
    LocalStretch s;
    const int64_t j = predecessor(at, of);
    if (j < 0) {
      s.start_ns = at;
      return s;
    }
    const Task& p = tasks[static_cast<size_t>(j)];
    const int64_t gap = at - p.end;
    if (p.op != kNotComm) {
      s.prev = static_cast<int32_t>(p.op);
      s.start_ns = p.end;
    } else {
      s = before[static_cast<size_t>(j)];
      s.compute_ns += p.end - p.start;
      ++s.kernels;
      if (p.end - p.start > s.longest_ns || s.kernels == 1) {
        s.longest_ns = p.end - p.start;
        s.longest_row = p.row;
      }
    }
    s.gap_ns += gap;
    return s;
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    before[i] = walk_from(tasks[i].start, &tasks[i]);
    if (tasks[i].op != kNotComm) st.ops[tasks[i].op].before = before[i];
  }
  st.tail = walk_from(st.end_ns, nullptr);
  return st;
}

}  // namespace

RankPathSkeleton step_path_skeleton(const model::KernelTable& kernels, const NormalizedKernels& norm,
                                    const StringPool& pool, const model::CommOpTable& comm_ops,
                                    const model::RankStructure& structure, const knowledge::Knowledge& kb) {
  RankPathSkeleton out;
  const size_t max_steps = kb.diagnostics.critical_path_max_steps;
  size_t steps = 0;
  for (const auto& seg : structure.segments) steps += seg.type == model::SegmentType::kStep ? 1 : 0;
  if (steps == 0 || max_steps == 0) return out;
  const CommRows comm = communication_rows(kernels, norm, pool, comm_ops, kb.vocab, out);
  std::unordered_map<StrId, uint32_t> name_index;
  for (const auto& seg : structure.segments) {
    if (seg.type != model::SegmentType::kStep) continue;
    if (out.steps.size() >= max_steps) break;
    out.steps.push_back(step_skeleton(kernels, seg, comm, out, name_index, pool));
  }
  return out;
}

void attach_comm_waits(RankPathSkeleton& skeleton, const model::CommStatTable& comm, const StringPool& pool) {
  std::unordered_map<std::string_view, std::vector<int64_t>> waits;  // op name -> waits in file order
  for (size_t i = 0; i < comm.size(); ++i) {
    if (comm.is_total[i]) continue;
    const double ms = comm.wait_ms[i];
    waits[pool.view(comm.op_name[i])].push_back(std::isfinite(ms) && ms >= 0 ? std::llround(ms * 1e6) : -1);
  }
  if (waits.empty()) return;
  std::vector<uint32_t> seen(skeleton.names.size(), 0);
  for (auto& st : skeleton.steps)
    for (auto& op : st.ops) {
      const auto it = waits.find(skeleton.names[op.name]);
      const uint32_t nth = seen[op.name]++;
      op.wait_ns = it != waits.end() && nth < it->second.size() ? it->second[nth] : -1;
    }
}

}  // namespace ascprof::analysis
