// Cross-rank block / layer / step class summaries (reference-analysis.md §2.5.8, second part).
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/class_summary.hpp"
#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {
namespace {

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

}  // namespace ascprof::analysis
