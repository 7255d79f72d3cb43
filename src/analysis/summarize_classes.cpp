// Cross-rank block / layer / step class summaries (reference-analysis.md §2.5.8, second part).
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/class_summary.hpp"
#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {
namespace {

constexpr size_t kTopOps = 10;
constexpr size_t kTopLayerClasses = 5;

// A first-seen-ordered union keyed by a string (the reference's dict insertion order).
template <class T>
class OrderedUnion {
 public:
  T& at(const std::string& key, bool* inserted = nullptr) {
    auto [it, fresh] = index_.try_emplace(key, items_.size());
    if (fresh) items_.emplace_back();
    if (inserted != nullptr) *inserted = fresh;
    return items_[it->second];
  }
  std::vector<T>& items() { return items_; }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<T> items_;
};

std::string op_key(std::string_view name, std::string_view task_type) {
  std::string k(name);
  k += '\x1f';
  k += task_type;
  return k;
}

void add_top_op(OrderedUnion<ClassTopOp>& u, const std::string& name, const std::string& task_type, uint64_t calls,
                int64_t dur_ns) {
  bool fresh = false;
  ClassTopOp& t = u.at(op_key(name, task_type), &fresh);
  if (fresh) {
    t.name = name;
    t.task_type = task_type;
  }
  t.call_count += calls;
  t.duration_sum_ns += dur_ns;
}

void add_named(OrderedUnion<NamedSum>& u, const std::string& name, uint64_t count, int64_t sum_ns) {
  bool fresh = false;
  NamedSum& s = u.at(name, &fresh);
  if (fresh) s.name = name;
  s.count += count;
  s.sum_ns += sum_ns;
}

// index of the summary row of item i (rows carry their item index), -1 when absent
template <class Row, class Field>
std::vector<int32_t> row_index(const std::vector<Row>& rows, size_t n_items, Field field) {
  std::vector<int32_t> out(n_items, -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t item = rows[i].*field;
    if (item < n_items && out[item] < 0) out[item] = static_cast<int32_t>(i);
  }
  return out;
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double mean(double sum, uint64_t n) { return n ? sum / static_cast<double>(n) : 0.0; }

struct WallStats {
  double sum_ms = 0, mean_ms = 0, p50_ms = 0, p90_ms = 0;
};

WallStats wall_stats(const std::vector<int64_t>& walls_ns) {
  WallStats w;
  int64_t sum = 0;
  std::vector<double> v;
  v.reserve(walls_ns.size());
  for (const int64_t ns : walls_ns) {
    sum += ns;
    v.push_back(ms(ns));
  }
  std::sort(v.begin(), v.end());
  w.sum_ms = ms(sum);
  w.mean_ms = mean(ms(sum), walls_ns.size());
  w.p50_ms = sorted_quantile(v, 0.5);
  w.p90_ms = sorted_quantile(v, 0.9);
  return w;
}

// Duration desc; stable, so ties keep first-seen order; then the first `limit`.
std::vector<ClassTopOp> top_n(std::vector<ClassTopOp> ops, size_t limit) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const ClassTopOp& a, const ClassTopOp& b) { return a.duration_sum_ns > b.duration_sum_ns; });
  if (ops.size() > limit) ops.resize(limit);
  return ops;
}

model::Counts sorted_counts(const std::vector<NamedSum>& named) {
  model::Counts c;
  c.reserve(named.size());
  for (const auto& s : named) c.emplace_back(s.name, s.count);
  std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return c;
}

// Appends a partial's first-seen list to a merged one (rank order keeps global first-seen order).
void merge_named(OrderedUnion<NamedSum>& into, const std::vector<NamedSum>& from) {
  for (const auto& s : from) add_named(into, s.name, s.count, s.sum_ns);
}
void merge_ops(OrderedUnion<ClassTopOp>& into, const std::vector<ClassTopOp>& from) {
  for (const auto& t : from) add_top_op(into, t.name, t.task_type, t.call_count, t.duration_sum_ns);
}

}  // namespace

ClassPartials class_partials(const model::RankStructure& s, const model::RankClasses& c,
                             const model::RankSummary& sum, const knowledge::Knowledge& kb) {
  ClassPartials out;
  out.rank_id = s.rank_id;
  const size_t n_fields = kb.pipeline.fields().size();
  const std::vector<int32_t> block_row = row_index(sum.blocks, c.blocks.size(), &model::BlockSummary::block);
  const std::vector<int32_t> layer_row = row_index(sum.layers, s.layers.size(), &model::LayerSummary::layer);
  const std::vector<int32_t> seg_row = row_index(sum.segments, s.segments.size(), &model::SegmentSummary::segment);

  // blocks of each layer (block order) and layers of each segment (layer order)
  std::vector<std::vector<uint32_t>> layer_blocks(s.layers.size());
  for (uint32_t b = 0; b < c.blocks.size(); ++b)
    if (c.blocks[b].layer < layer_blocks.size()) layer_blocks[c.blocks[b].layer].push_back(b);
  std::vector<std::vector<uint32_t>> seg_layers(s.segments.size());
  for (uint32_t l = 0; l < s.layers.size(); ++l)
    if (s.layers[l].segment < seg_layers.size()) seg_layers[s.layers[l].segment].push_back(l);

  auto add_block_top_ops = [&](OrderedUnion<ClassTopOp>& u, uint32_t block) {
    const int32_t r = block_row[block];
    if (r < 0) return;
    for (const auto& t : sum.blocks[static_cast<size_t>(r)].top_ops)
      add_top_op(u, t.name.str(), t.task_type.str(), t.call_count, t.duration_sum_ns);
  };

  // ---- blocks ----
  for (const model::ShapeClass& cls : c.block_classes) {
    BlockClassPartial p;
    p.class_id = cls.class_id;
    p.block_kind = model::block_kind_name(cls.block_kind);
    p.companion_layer = cls.companion_layer;
    p.has_unknown_shape = cls.has_unknown_shape;
    std::vector<double> pipe(n_fields, 0.0);
    OrderedUnion<NamedSum> families, op_types;
    OrderedUnion<ClassTopOp> ops;
    for (const uint32_t m : cls.members) {
      if (m >= block_row.size() || block_row[m] < 0) continue;
      const model::BlockSummary& b = sum.blocks[static_cast<size_t>(block_row[m])];
      p.wall_ns.push_back(b.metrics.wall_ns);
      p.busy_sum_ns += b.metrics.busy_union_ns;
      p.bubble_sum_ns += b.metrics.underfeed_ns;
      p.comm_duration_sum_ns += b.comm_duration_ns;
      p.comm_share_sum += b.comm_share;
      // the reference sums a member's pipeline columns only when they are filled (signal members)
      if (b.pipeline_signal && !b.pipeline_us.empty()) {
        p.pipeline_signal = true;
        for (size_t f = 0; f < n_fields && f < b.pipeline_us.size(); ++f) pipe[f] += b.pipeline_us[f];
      }
      add_named(families, b.bound.bound_family.empty() ? "unknown" : b.bound.bound_family, 1, 0);
      for (const auto& [op, n] : b.op_type_counts) add_named(op_types, op.str(), n, 0);
      for (const auto& t : b.top_ops) add_top_op(ops, t.name.str(), t.task_type.str(), t.call_count, t.duration_sum_ns);
    }
    if (p.wall_ns.empty()) continue;
    if (p.pipeline_signal) p.pipeline_us = std::move(pipe);
    p.bound_family_counts = std::move(families.items());
    p.op_type_counts = std::move(op_types.items());
    p.top_ops = std::move(ops.items());
    out.blocks.push_back(std::move(p));
  }

  // ---- layers ----
  for (const model::ShapeClass& cls : c.layer_classes) {
    LayerClassPartial p;
    p.class_id = cls.class_id;
    p.structure_signature = cls.structure_signature;
    p.block_kinds = cls.block_kinds;
    p.block_class_ids = cls.child_class_ids;
    p.companion_layer = cls.companion_layer;
    p.has_unknown_shape = cls.has_unknown_shape;
    OrderedUnion<NamedSum> kinds;
    OrderedUnion<ClassTopOp> ops;
    for (const uint32_t m : cls.members) {
      if (m >= layer_row.size() || layer_row[m] < 0) continue;
      const model::LayerSummary& l = sum.layers[static_cast<size_t>(layer_row[m])];
      p.wall_ns.push_back(l.metrics.wall_ns);
      p.busy_sum_ns += l.metrics.busy_union_ns;
      p.bubble_sum_ns += l.metrics.underfeed_ns;
      for (const uint32_t b : layer_blocks[m]) {
        const int32_t r = block_row[b];
        if (r < 0) continue;
        add_named(kinds, model::block_kind_name(c.blocks[b].kind), 1, sum.blocks[static_cast<size_t>(r)].metrics.wall_ns);
        add_block_top_ops(ops, b);
      }
    }
    if (p.wall_ns.empty()) continue;
    p.block_kind_walls = std::move(kinds.items());
    p.top_ops = std::move(ops.items());
    out.layers.push_back(std::move(p));
  }

  // ---- steps ----
  for (const model::ShapeClass& cls : c.step_classes) {
    StepClassPartial p;
    p.class_id = cls.class_id;
    p.structure_signature = cls.structure_signature;
    p.step_family = cls.step_family;
    p.main_layer_count = cls.main_layer_count;
    p.layer_count = cls.layer_count;
    p.has_unknown_shape = cls.has_unknown_shape;
    OrderedUnion<NamedSum> layer_classes;
    OrderedUnion<ClassTopOp> ops;
    for (const uint32_t m : cls.members) {
      if (m >= seg_row.size() || seg_row[m] < 0) continue;
      if (s.segments[m].type != model::SegmentType::kStep) continue;
      const model::SegmentSummary& g = sum.segments[static_cast<size_t>(seg_row[m])];
      p.wall_ns.push_back(g.metrics.wall_ns);
      p.busy_sum_ns += g.metrics.busy_union_ns;
      p.bubble_sum_ns += g.metrics.underfeed_ns;
      if (!g.anatomy.anatomy_kind.empty()) {
        const model::StepAnatomy& a = g.anatomy;
        ++p.anatomy_count;
        p.head_sum_ns += a.head.empty ? 0 : a.head.wall_ns;
        p.main_sum_ns += a.main.empty ? 0 : a.main.wall_ns;
        p.tail_sum_ns += a.tail.empty ? 0 : a.tail.wall_ns;
        p.head_ratio_sum += a.head_ratio;
        p.main_ratio_sum += a.main_ratio;
        p.tail_ratio_sum += a.tail_ratio;
        p.bubble_ratio_sum += a.bubble_ratio;
      }
      for (const uint32_t l : seg_layers[m]) {
        const int32_t lc = l < c.layer_class.size() ? c.layer_class[l] : -1;
        if (lc >= 0 && static_cast<size_t>(lc) < c.layer_classes.size()) {
          const int32_t r = layer_row[l];
          add_named(layer_classes, c.layer_classes[static_cast<size_t>(lc)].class_id, 1,
                    r >= 0 ? sum.layers[static_cast<size_t>(r)].metrics.wall_ns : 0);
        }
        for (const uint32_t b : layer_blocks[l]) add_block_top_ops(ops, b);
      }
    }
    if (p.wall_ns.empty()) continue;
    p.layer_class_walls = std::move(layer_classes.items());
    p.top_ops = std::move(ops.items());
    out.steps.push_back(std::move(p));
  }
  return out;
}

ClassSummaries merge_class_partials(const std::vector<ClassPartials>& per_rank, const knowledge::Knowledge& kb) {
  ClassSummaries out;
  const size_t n_fields = kb.pipeline.fields().size();

  // ---- blocks ----
  {
    struct Acc {
      const BlockClassPartial* meta = nullptr;
      std::set<std::string> ranks;
      std::vector<int64_t> walls;
      int64_t busy = 0, bubble = 0, comm = 0;
      double comm_share = 0;
      bool signal = false;
      std::vector<double> pipe;
      OrderedUnion<NamedSum> families, op_types;
      OrderedUnion<ClassTopOp> ops;
    };
    OrderedUnion<Acc> accs;
    for (const ClassPartials& rank : per_rank) {
      for (const BlockClassPartial& p : rank.blocks) {
        Acc& a = accs.at(p.class_id);
        if (a.meta == nullptr) {
          a.meta = &p;
          a.pipe.assign(n_fields, 0.0);
        }
        a.ranks.insert(rank.rank_id);
        a.walls.insert(a.walls.end(), p.wall_ns.begin(), p.wall_ns.end());
        a.busy += p.busy_sum_ns;
        a.bubble += p.bubble_sum_ns;
        a.comm += p.comm_duration_sum_ns;
        a.comm_share += p.comm_share_sum;
        if (p.pipeline_signal) {
          a.signal = true;
          for (size_t f = 0; f < n_fields && f < p.pipeline_us.size(); ++f) a.pipe[f] += p.pipeline_us[f];
        }
        merge_named(a.families, p.bound_family_counts);
        merge_named(a.op_types, p.op_type_counts);
        merge_ops(a.ops, p.top_ops);
      }
    }
    for (Acc& a : accs.items()) {
      BlockClassSummaryRow r;
      r.block_class_id = a.meta->class_id;
      r.block_kind = a.meta->block_kind;
      r.companion_layer = a.meta->companion_layer;
      r.has_unknown_shape = a.meta->has_unknown_shape;
      r.member_count = a.walls.size();
      r.rank_count = static_cast<uint32_t>(a.ranks.size());
      const WallStats w = wall_stats(a.walls);
      r.wall_ms_sum = w.sum_ms;
      r.wall_ms_mean = w.mean_ms;
      r.wall_ms_p50 = w.p50_ms;
      r.wall_ms_p90 = w.p90_ms;
      r.busy_ms_sum = ms(a.busy);
      r.busy_ms_mean = mean(ms(a.busy), r.member_count);
      r.bubble_ms_mean = mean(ms(a.bubble), r.member_count);
      r.comm_share_mean = mean(a.comm_share, r.member_count);
      r.comm_duration_us_sum = static_cast<double>(a.comm) / 1e3;
      r.pipeline_signal = a.signal;
      // dominant op type: most events (Counter.most_common: ties go to the first seen)
      const NamedSum* best = nullptr;
      for (const NamedSum& s : a.op_types.items())
        if (best == nullptr || s.count > best->count) best = &s;
      r.dominant_op_type = best != nullptr ? best->name : "unknown";
      if (a.signal) {
        r.pipeline_us = a.pipe;
        r.bound = bound_class(r.pipeline_us, "", false, false, kb);  // compute-first: no short-circuit
      } else {
        const std::string& d = r.dominant_op_type;
        r.bound = bound_class({}, d, d == "aicpu", d == "communication", kb);
      }
      r.bound_family_member_histogram = sorted_counts(a.families.items());
      r.op_type_counts = sorted_counts(a.op_types.items());
      r.top_ops = top_n(std::move(a.ops.items()), kTopOps);
      out.blocks.push_back(std::move(r));
    }
    // the reference's order: member_count descending, then kind; classes alike keep their first-seen
    // order (ranks in order), which the accumulator's order already is
    std::stable_sort(out.blocks.begin(), out.blocks.end(), [](const BlockClassSummaryRow& a, const BlockClassSummaryRow& b) {
      if (a.member_count != b.member_count) return a.member_count > b.member_count;
      return a.block_kind < b.block_kind;
    });
  }

  // ---- layers ----
  {
    struct Acc {
      const LayerClassPartial* meta = nullptr;
      std::set<std::string> ranks;
      std::vector<int64_t> walls;
      int64_t busy = 0, bubble = 0;
      OrderedUnion<NamedSum> kinds;
      OrderedUnion<ClassTopOp> ops;
    };
    OrderedUnion<Acc> accs;
    for (const ClassPartials& rank : per_rank) {
      for (const LayerClassPartial& p : rank.layers) {
        Acc& a = accs.at(p.class_id);
        if (a.meta == nullptr) a.meta = &p;
        a.ranks.insert(rank.rank_id);
        a.walls.insert(a.walls.end(), p.wall_ns.begin(), p.wall_ns.end());
        a.busy += p.busy_sum_ns;
        a.bubble += p.bubble_sum_ns;
        merge_named(a.kinds, p.block_kind_walls);
        merge_ops(a.ops, p.top_ops);
      }
    }
    for (Acc& a : accs.items()) {
      LayerClassSummaryRow r;
      r.layer_class_id = a.meta->class_id;
      r.structure_signature = a.meta->structure_signature;
      r.block_kinds = a.meta->block_kinds;
      r.block_class_ids = a.meta->block_class_ids;
      r.companion_layer = a.meta->companion_layer;
      r.has_unknown_shape = a.meta->has_unknown_shape;
      r.member_count = a.walls.size();
      r.rank_count = static_cast<uint32_t>(a.ranks.size());
      const WallStats w = wall_stats(a.walls);
      r.wall_ms_sum = w.sum_ms;
      r.wall_ms_mean = w.mean_ms;
      r.wall_ms_p50 = w.p50_ms;
      r.wall_ms_p90 = w.p90_ms;
      r.busy_ms_mean = mean(ms(a.busy), r.member_count);
      r.bubble_ms_mean = mean(ms(a.bubble), r.member_count);
      int64_t layer_total = 0;
      for (const int64_t ns : a.walls) layer_total += ns;
      for (const NamedSum& k : a.kinds.items()) {
        r.block_kind_wall_ms_mean.emplace_back(k.name, mean(ms(k.sum_ns), k.count));
        if (layer_total > 0)
          r.block_kind_wall_ms_share_mean.emplace_back(k.name, static_cast<double>(k.sum_ns) / static_cast<double>(layer_total));
      }
      r.top_ops = top_n(std::move(a.ops.items()), kTopOps);
      out.layers.push_back(std::move(r));
    }
    std::sort(out.layers.begin(), out.layers.end(), [](const LayerClassSummaryRow& a, const LayerClassSummaryRow& b) {
      if (a.member_count != b.member_count) return a.member_count > b.member_count;
      return a.layer_class_id < b.layer_class_id;
    });
  }

  // ---- steps ----
  {
    struct Acc {
      const StepClassPartial* meta = nullptr;
      std::set<std::string> ranks;
      std::vector<int64_t> walls;
      int64_t busy = 0, bubble = 0;
      uint64_t anatomy = 0;
      int64_t head = 0, main = 0, tail = 0;
      double head_ratio = 0, main_ratio = 0, tail_ratio = 0, bubble_ratio = 0;
      OrderedUnion<NamedSum> layer_classes;
      OrderedUnion<ClassTopOp> ops;
    };
    OrderedUnion<Acc> accs;
    for (const ClassPartials& rank : per_rank) {
      for (const StepClassPartial& p : rank.steps) {
        Acc& a = accs.at(p.class_id);
        if (a.meta == nullptr) a.meta = &p;
        a.ranks.insert(rank.rank_id);
        a.walls.insert(a.walls.end(), p.wall_ns.begin(), p.wall_ns.end());
        a.busy += p.busy_sum_ns;
        a.bubble += p.bubble_sum_ns;
        a.anatomy += p.anatomy_count;
        a.head += p.head_sum_ns;
        a.main += p.main_sum_ns;
        a.tail += p.tail_sum_ns;
        a.head_ratio += p.head_ratio_sum;
        a.main_ratio += p.main_ratio_sum;
        a.tail_ratio += p.tail_ratio_sum;
        a.bubble_ratio += p.bubble_ratio_sum;
        merge_named(a.layer_classes, p.layer_class_walls);
        merge_ops(a.ops, p.top_ops);
      }
    }
    for (Acc& a : accs.items()) {
      StepClassSummaryRow r;
      r.step_class_id = a.meta->class_id;
      r.structure_signature = a.meta->structure_signature;
      r.step_family = a.meta->step_family;
      r.main_layer_count = a.meta->main_layer_count;
      r.layer_count = a.meta->layer_count;
      r.has_unknown_shape = a.meta->has_unknown_shape;
      r.member_count = a.walls.size();
      r.rank_count = static_cast<uint32_t>(a.ranks.size());
      const WallStats w = wall_stats(a.walls);
      r.wall_ms_sum = w.sum_ms;
      r.wall_ms_mean = w.mean_ms;
      r.wall_ms_p50 = w.p50_ms;
      r.wall_ms_p90 = w.p90_ms;
      r.busy_ms_mean = mean(ms(a.busy), r.member_count);
      r.bubble_ms_mean = mean(ms(a.bubble), r.member_count);
      r.head_ms_mean = mean(ms(a.head), a.anatomy);
      r.main_ms_mean = mean(ms(a.main), a.anatomy);
      r.tail_ms_mean = mean(ms(a.tail), a.anatomy);
      r.head_ratio_mean = mean(a.head_ratio, a.anatomy);
      r.main_ratio_mean = mean(a.main_ratio, a.anatomy);
      r.tail_ratio_mean = mean(a.tail_ratio, a.anatomy);
      r.bubble_ratio_mean = mean(a.bubble_ratio, a.anatomy);
      std::vector<NamedSum> lcs = std::move(a.layer_classes.items());
      std::stable_sort(lcs.begin(), lcs.end(), [](const NamedSum& x, const NamedSum& y) { return x.sum_ns > y.sum_ns; });
      for (size_t i = 0; i < lcs.size() && i < kTopLayerClasses; ++i)
        r.top_layer_classes.push_back({lcs[i].name, ms(lcs[i].sum_ns), lcs[i].count});
      r.top_ops = top_n(std::move(a.ops.items()), kTopOps);
      out.steps.push_back(std::move(r));
    }
    std::sort(out.steps.begin(), out.steps.end(), [](const StepClassSummaryRow& a, const StepClassSummaryRow& b) {
      if (a.member_count != b.member_count) return a.member_count > b.member_count;
      return a.step_class_id < b.step_class_id;
    });
  }
  return out;
}

}  // namespace ascprof::analysis
