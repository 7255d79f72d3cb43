// Coordinator side of the critical path (critical_path.hpp): the walk over the ranks' skeletons.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "ascprof/analysis/critical_path.hpp"

namespace ascprof::analysis {

namespace {

// One member of an alignment: the rank (index into the views) and its step skeleton.
struct Member {
  uint32_t rank;
  const StepSkeleton* step;
  int64_t offset;
};

class StepWalk {
 public:
  StepWalk(const std::vector<PathRankView>& ranks, std::vector<Member> members)
      : ranks_(ranks), members_(std::move(members)) {
    // the members' ops of each collective (group, seq): a collective is the same on every member. Each
    // rank numbers its groups itself: its numbers are mapped once to the walk's, and a collective is
    // keyed by (walk group, seq) as one integer.
    std::unordered_map<std::string_view, uint32_t> walk_group;
    group_of_.resize(members_.size());
    for (uint32_t m = 0; m < members_.size(); ++m) {
      const RankPathSkeleton& sk = *ranks_[members_[m].rank].skeleton;
      for (const auto& g : sk.groups)
        group_of_[m].push_back(walk_group.emplace(g, static_cast<uint32_t>(walk_group.size())).first->second);
      for (uint32_t i = 0; i < members_[m].step->ops.size(); ++i) collective_[key(m, members_[m].step->ops[i])].emplace_back(m, i);
    }
  }

  // Walks back from the end of the member whose step ended last; elements in time order.
  std::vector<PathElement> walk(uint32_t step_index) {
    uint32_t m = 0;
    for (uint32_t i = 1; i < members_.size(); ++i)
      if (end_of(i) > end_of(m)) m = i;
    end_member_ = m;
    std::vector<PathElement> back;
    LocalStretch stretch = members_[m].step->tail;
    int64_t point = members_[m].step->end_ns;
    std::set<std::pair<uint32_t, uint32_t>> visited;  // (member, op): a clock that disagrees could loop
    for (;;) {
      local(back, step_index, m, stretch, point);
      if (stretch.prev < 0) break;
      const uint32_t op_index = static_cast<uint32_t>(stretch.prev);
      if (!visited.insert({m, op_index}).second) break;
      const Member& here = members_[m];
      const PathOp& op = here.step->ops[op_index];
      const auto& list = collective_.at(key(m, op));
      if (list.size() < 2) {  // no other member shares it: its partner is outside the walk
        PathElement e = op_element(step_index, m, op, PathKind::kWaiting);
        e.start_ns = op.start_ns - here.offset;
        e.waiting_ns = e.end_ns - e.start_ns;
        back.push_back(std::move(e));
        stretch = op.before;
        point = op.start_ns;
        continue;
      }
      // the member that arrived last released the collective; the first to arrive waited for it
      const Release rel = release(list);
      const uint32_t last = list[rel.last].first, last_op = list[rel.last].second;
      const PathOp& released = members_[last].step->ops[last_op];
      PathElement e = op_element(step_index, last, released, PathKind::kTransfer);
      e.end_ns = op.end_ns - here.offset;  // the path arrived at this member's end of the op
      // the release on this member's clock: its own arrival plus its own wait, when it knows its wait
      const int64_t released_at = rel.by_wait ? op.start_ns + op.wait_ns - here.offset : arrival(last, last_op);
      e.start_ns = std::clamp(released_at, op.start_ns - here.offset, e.end_ns);
      e.transfer_ns = e.end_ns - e.start_ns;
      e.waited_ns = rel.first_waited;
      e.members = static_cast<uint32_t>(list.size());
      back.push_back(std::move(e));
      if (last != m) {
        if (!visited.insert({last, last_op}).second) break;
        ++hops_;
      }
      m = last;
      stretch = released.before;
      point = released.start_ns;
    }
    std::reverse(back.begin(), back.end());
    return back;
  }

  uint32_t end_member() const { return end_member_; }
  uint32_t hops() const { return hops_; }
  const std::vector<Member>& members() const { return members_; }

 private:
  // Who released a collective (index into `list`) and how long its first member waited for it: the
  // member that waited least when every member knows its wait (its own clock only), else the latest
  // arrival on the corrected clocks (ties: the first in member order).
  struct Release {
    size_t last = 0;
    int64_t first_waited = 0;
    bool by_wait = false;
  };
  Release release(const std::vector<std::pair<uint32_t, uint32_t>>& list) const {
    Release r;
    r.by_wait = true;
    for (const auto& [mm, oi] : list) r.by_wait = r.by_wait && members_[mm].step->ops[oi].wait_ns >= 0;
    if (r.by_wait) {
      int64_t most = 0;
      for (size_t i = 0; i < list.size(); ++i) {
        const int64_t w = members_[list[i].first].step->ops[list[i].second].wait_ns;
        most = std::max(most, w);
        if (w < members_[list[r.last].first].step->ops[list[r.last].second].wait_ns) r.last = i;
      }
      r.first_waited = most - members_[list[r.last].first].step->ops[list[r.last].second].wait_ns;
      return r;
    }
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < list.size(); ++i) {
      const int64_t a = arrival(list[i].first, list[i].second);
      first = std::min(first, a);
      if (a > arrival(list[r.last].first, list[r.last].second)) r.last = i;
    }
    r.first_waited = arrival(list[r.last].first, list[r.last].second) - first;
    return r;
  }

  uint64_t key(uint32_t member, const PathOp& op) const {
    return static_cast<uint64_t>(group_of_[member][op.group]) << 32 | op.seq;
  }
  int64_t end_of(uint32_t m) const { return members_[m].step->end_ns - members_[m].offset; }
  int64_t arrival(uint32_t m, uint32_t op) const { return members_[m].step->ops[op].start_ns - members_[m].offset; }

  PathElement op_element(uint32_t step_index, uint32_t m, const PathOp& op, PathKind kind) const {
    const RankPathSkeleton& sk = *ranks_[members_[m].rank].skeleton;
    PathElement e;
    e.step = step_index;
    e.rank = members_[m].rank;
    e.kind = kind;
    e.end_ns = op.end_ns - members_[m].offset;
    e.op_name = sk.names[op.name];
    e.group = sk.groups[op.group];
    e.seq = op.seq;
    e.evidence_id = model::event_id(ranks_[members_[m].rank].ordinal, op.row);
    return e;
  }

  // The rank's own stretch from its start to `point`, as one element (compute and host gaps summed).
  void local(std::vector<PathElement>& back, uint32_t step_index, uint32_t m, const LocalStretch& s, int64_t point) const {
    if (point <= s.start_ns && s.kernels == 0) return;
    PathElement e;
    e.step = step_index;
    e.rank = members_[m].rank;
    e.start_ns = s.start_ns - members_[m].offset;
    e.end_ns = point - members_[m].offset;
    e.compute_ns = s.compute_ns;
    e.gap_ns = s.gap_ns;
    e.kernels = s.kernels;
    e.kind = s.compute_ns >= s.gap_ns ? PathKind::kCompute : PathKind::kHostGap;
    if (s.kernels > 0) e.evidence_id = model::event_id(ranks_[members_[m].rank].ordinal, s.longest_row);
    back.push_back(std::move(e));
  }

  const std::vector<PathRankView>& ranks_;
  std::vector<Member> members_;
  std::vector<std::vector<uint32_t>> group_of_;  // per member: its group numbers -> the walk's
  std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, uint32_t>>> collective_;
  uint32_t end_member_ = 0, hops_ = 0;
};

}  // namespace

CriticalPaths walk_critical_paths(const std::vector<PathRankView>& ranks, const StepWindows& windows,
                                  const std::vector<StepAlignment>& alignments, const knowledge::DiagnosticsRules& rules) {
  CriticalPaths out;
  out.ranks.resize(ranks.size());
  std::map<std::string, uint32_t, std::less<>> rank_of;  // found by the windows' string views
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    out.rank_ids.push_back(ranks[r].rank_id);
    out.rank_ordinals.push_back(ranks[r].ordinal);
    out.ranks[r].rank = r;
    rank_of[ranks[r].rank_id] = r;
  }
  // each rank's step skeletons by segment id
  std::vector<std::unordered_map<std::string, const StepSkeleton*>> step_of(ranks.size());
  for (uint32_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].skeleton != nullptr)
      for (const auto& st : ranks[r].skeleton->steps) step_of[r][st.segment_id] = &st;
  std::vector<size_t> order(alignments.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return alignments[a].start_ns < alignments[b].start_ns; });
  for (const size_t ai : order) {
    const StepAlignment& al = alignments[ai];
    if (out.steps.size() >= rules.critical_path_max_steps) {
      ++out.alignments_skipped;
      continue;
    }
    std::vector<Member> members;
    std::set<uint32_t> seen;
    bool complete = true;
    for (const size_t w : al.members) {
      const auto r = rank_of.find(windows[w].rank_id);
      if (r == rank_of.end()) {
        complete = false;
        break;
      }
      if (!seen.insert(r->second).second) continue;  // a rank's first window in the alignment stands for it
      const auto st = step_of[r->second].find(std::string(windows[w].segment_id));
      if (st == step_of[r->second].end()) {
        complete = false;
        break;
      }
      members.push_back({r->second, st->second, ranks[r->second].offset_ns});
    }
    if (!complete || members.size() < 2) {
      ++out.alignments_skipped;
      continue;
    }
    for (const Member& mb : members) ++out.ranks[mb.rank].steps_member;
    StepWalk walk(ranks, std::move(members));
    PathStep ps;
    ps.alignment_id = al.alignment_id;
    ps.start_ns = al.start_ns;
    ps.end_ns = al.end_ns;
    auto elements = walk.walk(static_cast<uint32_t>(out.steps.size()));
    ps.end_rank = walk.members()[walk.end_member()].rank;
    ps.hops = walk.hops();
    ps.first_element = static_cast<uint32_t>(out.elements.size());
    ps.element_count = static_cast<uint32_t>(elements.size());
    std::set<uint32_t> on_path;
    for (auto& e : elements) {
      const int64_t d = e.end_ns - e.start_ns;
      ps.walked_ns += d;
      ps.compute_ns += e.compute_ns;
      ps.transfer_ns += e.transfer_ns;
      ps.waiting_ns += e.waiting_ns;
      ps.gap_ns += e.gap_ns;
      PathRankShare& rs = out.ranks[e.rank];
      rs.path_ns += d;
      rs.compute_ns += e.compute_ns;
      rs.transfer_ns += e.transfer_ns;
      rs.waiting_ns += e.waiting_ns;
      rs.gap_ns += e.gap_ns;
      rs.others_waited_ns += e.waited_ns;
      on_path.insert(e.rank);
      out.elements.push_back(std::move(e));
    }
    for (const uint32_t r : on_path) ++out.ranks[r].steps_on_path;
    out.walked_ns += ps.walked_ns;
    out.steps.push_back(std::move(ps));
  }
  for (auto& rs : out.ranks)
    rs.share = out.walked_ns > 0 ? static_cast<double>(rs.path_ns) / static_cast<double>(out.walked_ns) : 0.0;
  return out;
}

}  // namespace ascprof::analysis
