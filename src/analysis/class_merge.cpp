// The class summaries' exact merge (class_merge.hpp) and the single-pass merge_class_partials on it.
#include "ascprof/analysis/class_merge.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

namespace {

constexpr size_t kTopOps = 10;
constexpr size_t kTopLayerClasses = 5;
constexpr size_t kStepReals = 4;  // head, main, tail and bubble ratio sums

std::string key_of(const NamedSum& s) { return s.name; }
std::string key_of(const ClassTopOp& t) {
  std::string k = t.name;
  k += '\x1f';
  k += t.task_type;
  return k;
}
const std::string& key_of(const BlockClassMerge& m) { return m.meta.class_id; }
const std::string& key_of(const LayerClassMerge& m) { return m.meta.class_id; }
const std::string& key_of(const StepClassMerge& m) { return m.meta.class_id; }

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double mean(double sum, uint64_t n) { return n ? sum / static_cast<double>(n) : 0.0; }

// The union's values in first-seen order.
template <class T>
std::vector<T> in_seen_order(SeenUnion<T>& u) {
  std::stable_sort(u.items.begin(), u.items.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
  std::vector<T> out;
  out.reserve(u.items.size());
  for (auto& it : u.items) out.push_back(std::move(it.value));
  u.items.clear();
  u.index.clear();
  return out;
}

void add_named(SeenUnion<NamedSum>& u, const NamedSum& s, SeenAt at) {
  bool fresh = false;
  NamedSum& into = u.at(key_of(s), at, &fresh);
  if (fresh) into.name = s.name;
  into.count += s.count;
  into.sum_ns += s.sum_ns;
}

void add_op(SeenUnion<ClassTopOp>& u, const ClassTopOp& t, SeenAt at) {
  bool fresh = false;
  ClassTopOp& into = u.at(key_of(t), at, &fresh);
  if (fresh) {
    into.name = t.name;
    into.task_type = t.task_type;
  }
  into.call_count += t.call_count;
  into.duration_sum_ns += t.duration_sum_ns;
}

// A rank's list into a union: entry `entry` of rank `rank`, item i seen at (rank, entry, i).
template <class T, class Add>
void fold_list(SeenUnion<T>& u, const std::vector<T>& list, uint32_t rank, uint32_t entry, Add add) {
  for (size_t i = 0; i < list.size(); ++i) add(u, list[i], SeenAt{rank, entry, static_cast<uint32_t>(i)});
}
template <class T, class Add>
void merge_union(SeenUnion<T>& into, SeenUnion<T>& from, Add add) {
  for (auto& it : from.items) add(into, it.value, it.at);
}

// The common part of a rank's class entry; `wall_ns` moves into `walls`.
void fold_common(ClassMergeCommon& c, SeenAt at, std::vector<int64_t>& wall_ns, int64_t busy, int64_t bubble,
                 WallSet& walls) {
  c.holders.push_back(at);
  c.members += wall_ns.size();
  for (const int64_t ns : wall_ns) c.wall_sum_ns += ns;
  c.busy_sum_ns += busy;
  c.bubble_sum_ns += bubble;
  walls.add(wall_ns);
  wall_ns = {};
}

void merge_common(ClassMergeCommon& into, ClassMergeCommon& from) {
  into.holders.insert(into.holders.end(), from.holders.begin(), from.holders.end());
  into.reals.insert(into.reals.end(), from.reals.begin(), from.reals.end());
  into.members += from.members;
  into.wall_sum_ns += from.wall_sum_ns;
  into.busy_sum_ns += from.busy_sum_ns;
  into.bubble_sum_ns += from.bubble_sum_ns;
}

// The holders' reals summed in holder order (the single pass's rank order): `width` sums.
std::vector<double> sum_reals(const ClassMergeCommon& c, size_t width) {
  std::vector<double> out(width, 0.0);
  if (width == 0) return out;
  std::vector<uint32_t> order(c.holders.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return c.holders[a] < c.holders[b]; });
  for (const uint32_t h : order)
    for (size_t f = 0; f < width && h * width + f < c.reals.size(); ++f) out[f] += c.reals[h * width + f];
  return out;
}

uint32_t distinct_ranks(const ClassMergeCommon& c) {
  std::vector<uint32_t> ranks;
  ranks.reserve(c.holders.size());
  for (const SeenAt& h : c.holders) ranks.push_back(h.rank);
  std::sort(ranks.begin(), ranks.end());
  return static_cast<uint32_t>(std::unique(ranks.begin(), ranks.end()) - ranks.begin());
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

// A class's entry in the merge (created on first sight).
template <class Merge>
Merge& class_entry(SeenUnion<Merge>& u, const std::string& class_id, SeenAt at) {
  bool fresh = false;
  return u.at(class_id, at, &fresh);
}

void strip(BlockClassPartial& m) {
  m.pipeline_us = {};
  m.bound_family_counts = {};
  m.op_type_counts = {};
  m.top_ops = {};
}
void strip(LayerClassPartial& m) {
  m.block_kind_walls = {};
  m.top_ops = {};
}
void strip(StepClassPartial& m) {
  m.layer_class_walls = {};
  m.top_ops = {};
}

// Where a class was first seen decides whose metadata it has: the partial, once folded (its walls
// moved out), becomes the metadata without its per-member and summed lists.
template <class Merge, class Partial>
void take_meta(Merge& m, Partial& p, SeenAt at) {
  if (!(at < m.common.first)) return;
  m.common.first = at;
  m.meta = std::move(p);
  strip(m.meta);
}

// Take the metadata of `from` when it was seen first.
template <class Merge>
void merge_meta(Merge& into, Merge& from) {
  if (from.common.first < into.common.first) {
    into.common.first = from.common.first;
    into.meta = std::move(from.meta);
  }
}

// Order-statistic positions of sorted_quantile at q: (n - 1) q, its floor and ceiling.
struct QuantilePlace {
  uint64_t left = 0, right = 0;
  double weight = 0;
};
QuantilePlace quantile_place(uint64_t n, double q) {
  const double pos = static_cast<double>(n - 1) * q;
  const double left = std::floor(pos), right = std::ceil(pos);
  return {static_cast<uint64_t>(left), static_cast<uint64_t>(right), pos - left};
}
constexpr std::array<double, 2> kWallQuantiles = {0.5, 0.9};

}  // namespace

template <class T>
T& SeenUnion<T>::at(const std::string& key, SeenAt seen, bool* fresh) {
  if (index.size() != items.size()) {  // loaded from an archive: the index is not sent
    index.clear();
    for (uint32_t i = 0; i < items.size(); ++i) index.emplace(key_of(items[i].value), i);
  }
  auto [it, inserted] = index.try_emplace(key, static_cast<uint32_t>(items.size()));
  if (inserted) items.push_back({T{}, seen});
  Item& item = items[it->second];
  if (seen < item.at) item.at = seen;
  *fresh = inserted;
  return item.value;
}

WallSet* ClassWalls::find(ClassKind kind, const std::string& class_id) {
  auto& m = by_kind[static_cast<size_t>(kind)];
  const auto it = m.find(class_id);
  return it == m.end() ? nullptr : &it->second;
}

void ClassPartialsMerge::fold(uint32_t rank, ClassPartials partials, ClassWalls& walls, const knowledge::Knowledge& kb) {
  pipeline_fields = static_cast<uint32_t>(kb.pipeline.fields().size());
  for (size_t e = 0; e < partials.blocks.size(); ++e) {
    BlockClassPartial& p = partials.blocks[e];
    const SeenAt at{rank, static_cast<uint32_t>(e), 0};
    BlockClassMerge& m = class_entry(blocks, p.class_id, at);
    const uint32_t entry = static_cast<uint32_t>(e);
    fold_common(m.common, at, p.wall_ns, p.busy_sum_ns, p.bubble_sum_ns,
                walls.by_kind[static_cast<size_t>(ClassKind::kBlock)][p.class_id]);
    // reals: the comm share, then the pipeline fields (zeros without signal: adding +0.0 to the
    // sum changes nothing, so the sum equals the single pass's over signal holders only)
    m.common.reals.push_back(p.comm_share_sum);
    for (uint32_t f = 0; f < pipeline_fields; ++f)
      m.common.reals.push_back(p.pipeline_signal && f < p.pipeline_us.size() ? p.pipeline_us[f] : 0.0);
    m.comm_duration_sum_ns += p.comm_duration_sum_ns;
    m.pipeline_signal = m.pipeline_signal || p.pipeline_signal;
    fold_list(m.families, p.bound_family_counts, rank, entry, add_named);
    fold_list(m.op_types, p.op_type_counts, rank, entry, add_named);
    fold_list(m.ops, p.top_ops, rank, entry, add_op);
    take_meta(m, p, at);
  }
  for (size_t e = 0; e < partials.layers.size(); ++e) {
    LayerClassPartial& p = partials.layers[e];
    const SeenAt at{rank, static_cast<uint32_t>(e), 0};
    LayerClassMerge& m = class_entry(layers, p.class_id, at);
    fold_common(m.common, at, p.wall_ns, p.busy_sum_ns, p.bubble_sum_ns,
                walls.by_kind[static_cast<size_t>(ClassKind::kLayer)][p.class_id]);
    fold_list(m.kinds, p.block_kind_walls, rank, at.entry, add_named);
    fold_list(m.ops, p.top_ops, rank, at.entry, add_op);
    take_meta(m, p, at);
  }
  for (size_t e = 0; e < partials.steps.size(); ++e) {
    StepClassPartial& p = partials.steps[e];
    const SeenAt at{rank, static_cast<uint32_t>(e), 0};
    StepClassMerge& m = class_entry(steps, p.class_id, at);
    fold_common(m.common, at, p.wall_ns, p.busy_sum_ns, p.bubble_sum_ns,
                walls.by_kind[static_cast<size_t>(ClassKind::kStep)][p.class_id]);
    m.common.reals.insert(m.common.reals.end(), {p.head_ratio_sum, p.main_ratio_sum, p.tail_ratio_sum, p.bubble_ratio_sum});
    m.anatomy_count += p.anatomy_count;
    m.head_sum_ns += p.head_sum_ns;
    m.main_sum_ns += p.main_sum_ns;
    m.tail_sum_ns += p.tail_sum_ns;
    fold_list(m.layer_classes, p.layer_class_walls, rank, at.entry, add_named);
    fold_list(m.ops, p.top_ops, rank, at.entry, add_op);
    take_meta(m, p, at);
  }
}

void ClassPartialsMerge::merge(ClassPartialsMerge&& other) {
  if (pipeline_fields == 0) pipeline_fields = other.pipeline_fields;
  for (auto& it : other.blocks.items) {
    BlockClassMerge& from = it.value;
    bool fresh = false;
    BlockClassMerge& m = blocks.at(from.meta.class_id, it.at, &fresh);
    if (fresh) {
      m = std::move(from);
      continue;
    }
    merge_meta(m, from);
    merge_common(m.common, from.common);
    m.comm_duration_sum_ns += from.comm_duration_sum_ns;
    m.pipeline_signal = m.pipeline_signal || from.pipeline_signal;
    merge_union(m.families, from.families, add_named);
    merge_union(m.op_types, from.op_types, add_named);
    merge_union(m.ops, from.ops, add_op);
  }
  for (auto& it : other.layers.items) {
    LayerClassMerge& from = it.value;
    bool fresh = false;
    LayerClassMerge& m = layers.at(from.meta.class_id, it.at, &fresh);
    if (fresh) {
      m = std::move(from);
      continue;
    }
    merge_meta(m, from);
    merge_common(m.common, from.common);
    merge_union(m.kinds, from.kinds, add_named);
    merge_union(m.ops, from.ops, add_op);
  }
  for (auto& it : other.steps.items) {
    StepClassMerge& from = it.value;
    bool fresh = false;
    StepClassMerge& m = steps.at(from.meta.class_id, it.at, &fresh);
    if (fresh) {
      m = std::move(from);
      continue;
    }
    merge_meta(m, from);
    merge_common(m.common, from.common);
    m.anatomy_count += from.anatomy_count;
    m.head_sum_ns += from.head_sum_ns;
    m.main_sum_ns += from.main_sum_ns;
    m.tail_sum_ns += from.tail_sum_ns;
    merge_union(m.layer_classes, from.layer_classes, add_named);
    merge_union(m.ops, from.ops, add_op);
  }
  other = {};
}

std::vector<WallRequest> ClassPartialsMerge::wall_requests(int32_t root) const {
  std::vector<WallRequest> out;
  for (const auto& it : blocks.items) out.push_back({root, ClassKind::kBlock, it.value.meta.class_id, it.value.common.members});
  for (const auto& it : layers.items) out.push_back({root, ClassKind::kLayer, it.value.meta.class_id, it.value.common.members});
  for (const auto& it : steps.items) out.push_back({root, ClassKind::kStep, it.value.meta.class_id, it.value.common.members});
  return out;
}

void ClassPartialsMerge::set_wall_quantiles(std::span<const double> p50_p90) {
  size_t i = 0;
  auto take = [&](ClassMergeCommon& c) {
    c.wall_p50_ms = i < p50_p90.size() ? p50_p90[i] : 0.0;
    c.wall_p90_ms = i + 1 < p50_p90.size() ? p50_p90[i + 1] : 0.0;
    i += 2;
  };
  for (auto& it : blocks.items) take(it.value.common);
  for (auto& it : layers.items) take(it.value.common);
  for (auto& it : steps.items) take(it.value.common);
}

ClassSummaries ClassPartialsMerge::finish(const knowledge::Knowledge& kb) {
  ClassSummaries out;
  auto fill_walls = [](const ClassMergeCommon& c, auto& r) {
    r.member_count = c.members;
    r.rank_count = distinct_ranks(c);
    r.wall_ms_sum = ms(c.wall_sum_ns);
    r.wall_ms_mean = mean(ms(c.wall_sum_ns), c.members);
    r.wall_ms_p50 = c.wall_p50_ms;
    r.wall_ms_p90 = c.wall_p90_ms;
    r.busy_ms_mean = mean(ms(c.busy_sum_ns), c.members);
    r.bubble_ms_mean = mean(ms(c.bubble_sum_ns), c.members);
  };

  for (BlockClassMerge& a : in_seen_order(blocks)) {
    BlockClassSummaryRow r;
    const ClassMergeCommon& c = a.common;
    r.block_class_id = a.meta.class_id;
    r.block_kind = a.meta.block_kind;
    r.companion_layer = a.meta.companion_layer;
    r.has_unknown_shape = a.meta.has_unknown_shape;
    fill_walls(c, r);
    const std::vector<double> reals = sum_reals(c, 1 + pipeline_fields);
    r.busy_ms_sum = ms(c.busy_sum_ns);
    r.comm_share_mean = mean(reals[0], r.member_count);
    r.comm_duration_us_sum = static_cast<double>(a.comm_duration_sum_ns) / 1e3;
    r.pipeline_signal = a.pipeline_signal;
    const std::vector<NamedSum> op_types = in_seen_order(a.op_types);
    // dominant op type: most events (Counter.most_common: ties go to the first seen)
    const NamedSum* best = nullptr;
    for (const NamedSum& s : op_types)
      if (best == nullptr || s.count > best->count) best = &s;
    r.dominant_op_type = best != nullptr ? best->name : "unknown";
    if (a.pipeline_signal) {
      r.pipeline_us.assign(reals.begin() + 1, reals.end());
      r.bound = bound_class(r.pipeline_us, "", false, false, kb);  // compute-first: no short-circuit
    } else {
      const std::string& d = r.dominant_op_type;
      r.bound = bound_class({}, d, d == "aicpu", d == "communication", kb);
    }
    r.bound_family_member_histogram = sorted_counts(in_seen_order(a.families));
    r.op_type_counts = sorted_counts(op_types);
    r.top_ops = top_n(in_seen_order(a.ops), kTopOps);
    out.blocks.push_back(std::move(r));
  }
  // the reference's order: member_count descending, then kind; classes alike keep their first-seen
  // order (ranks in order), which in_seen_order gave
  std::stable_sort(out.blocks.begin(), out.blocks.end(), [](const BlockClassSummaryRow& a, const BlockClassSummaryRow& b) {
    if (a.member_count != b.member_count) return a.member_count > b.member_count;
    return a.block_kind < b.block_kind;
  });

  for (LayerClassMerge& a : in_seen_order(layers)) {
    LayerClassSummaryRow r;
    r.layer_class_id = a.meta.class_id;
    r.structure_signature = a.meta.structure_signature;
    r.block_kinds = a.meta.block_kinds;
    r.block_class_ids = a.meta.block_class_ids;
    r.companion_layer = a.meta.companion_layer;
    r.has_unknown_shape = a.meta.has_unknown_shape;
    fill_walls(a.common, r);
    const int64_t layer_total = a.common.wall_sum_ns;
    for (const NamedSum& k : in_seen_order(a.kinds)) {
      r.block_kind_wall_ms_mean.emplace_back(k.name, mean(ms(k.sum_ns), k.count));
      if (layer_total > 0)
        r.block_kind_wall_ms_share_mean.emplace_back(k.name, static_cast<double>(k.sum_ns) / static_cast<double>(layer_total));
    }
    r.top_ops = top_n(in_seen_order(a.ops), kTopOps);
    out.layers.push_back(std::move(r));
  }
  std::sort(out.layers.begin(), out.layers.end(), [](const LayerClassSummaryRow& a, const LayerClassSummaryRow& b) {
    if (a.member_count != b.member_count) return a.member_count > b.member_count;
    return a.layer_class_id < b.layer_class_id;
  });

  for (StepClassMerge& a : in_seen_order(steps)) {
    StepClassSummaryRow r;
    r.step_class_id = a.meta.class_id;
    r.structure_signature = a.meta.structure_signature;
    r.step_family = a.meta.step_family;
    r.main_layer_count = a.meta.main_layer_count;
    r.layer_count = a.meta.layer_count;
    r.has_unknown_shape = a.meta.has_unknown_shape;
    fill_walls(a.common, r);
    const std::vector<double> ratios = sum_reals(a.common, kStepReals);
    r.head_ms_mean = mean(ms(a.head_sum_ns), a.anatomy_count);
    r.main_ms_mean = mean(ms(a.main_sum_ns), a.anatomy_count);
    r.tail_ms_mean = mean(ms(a.tail_sum_ns), a.anatomy_count);
    r.head_ratio_mean = mean(ratios[0], a.anatomy_count);
    r.main_ratio_mean = mean(ratios[1], a.anatomy_count);
    r.tail_ratio_mean = mean(ratios[2], a.anatomy_count);
    r.bubble_ratio_mean = mean(ratios[3], a.anatomy_count);
    std::vector<NamedSum> lcs = in_seen_order(a.layer_classes);
    std::stable_sort(lcs.begin(), lcs.end(), [](const NamedSum& x, const NamedSum& y) { return x.sum_ns > y.sum_ns; });
    for (size_t i = 0; i < lcs.size() && i < kTopLayerClasses; ++i)
      r.top_layer_classes.push_back({lcs[i].name, ms(lcs[i].sum_ns), lcs[i].count});
    r.top_ops = top_n(in_seen_order(a.ops), kTopOps);
    out.steps.push_back(std::move(r));
  }
  std::sort(out.steps.begin(), out.steps.end(), [](const StepClassSummaryRow& a, const StepClassSummaryRow& b) {
    if (a.member_count != b.member_count) return a.member_count > b.member_count;
    return a.step_class_id < b.step_class_id;
  });
  *this = {};
  return out;
}

std::vector<int64_t> select_order_statistics(std::span<const std::span<const int64_t>> sets,
                                             std::span<const OrderRequest> wanted, const SumOverProcesses& sum) {
  return select_order_statistics(
      sets.size(),
      [&sets](uint32_t set, int64_t x) {
        const auto& s = sets[set];
        return static_cast<uint64_t>(std::upper_bound(s.begin(), s.end(), x) - s.begin());
      },
      wanted, sum);
}

std::vector<int64_t> select_order_statistics(size_t set_count, const std::function<uint64_t(uint32_t set, int64_t x)>& count_le,
                                             std::span<const OrderRequest> wanted, const SumOverProcesses& sum) {
  // bisection on the values mapped to unsigned order (sign bit flipped): the smallest u with
  // count(values <= u) > k is the k-th smallest
  auto to_v = [](uint64_t u) { return static_cast<int64_t>(u ^ (uint64_t{1} << 63)); };
  const size_t n = wanted.size();
  std::vector<uint64_t> lo(n, 0), hi(n, UINT64_MAX), counts(n);
  for (;;) {
    bool open = false;
    for (size_t i = 0; i < n; ++i) open = open || lo[i] < hi[i];
    if (!open) break;  // the same on every process: lo and hi follow the summed counts only
    for (size_t i = 0; i < n; ++i) {
      counts[i] = 0;
      if (lo[i] == hi[i] || wanted[i].set >= set_count) continue;
      const uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
      counts[i] = count_le(wanted[i].set, to_v(mid));
    }
    sum(counts);
    for (size_t i = 0; i < n; ++i) {
      if (lo[i] == hi[i]) continue;
      const uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
      if (counts[i] > wanted[i].k) hi[i] = mid;
      else lo[i] = mid + 1;
    }
  }
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = to_v(lo[i]);
  return out;
}

std::vector<double> class_wall_quantiles(std::span<const WallRequest> requests,
                                         const std::function<ClassWalls*(int32_t root)>& walls_of,
                                         const SumOverProcesses& sum) {
  // this process's walls of every request, their tails sealed into runs
  std::vector<const WallSet*> sets(requests.size(), nullptr);
  for (size_t i = 0; i < requests.size(); ++i) {
    ClassWalls* w = walls_of(requests[i].root);
    WallSet* v = w == nullptr ? nullptr : w->find(requests[i].kind, requests[i].class_id);
    if (v == nullptr) continue;
    v->seal();
    sets[i] = v;
  }
  std::vector<OrderRequest> wanted;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].members == 0) continue;
    for (const double q : kWallQuantiles) {
      const QuantilePlace p = quantile_place(requests[i].members, q);
      wanted.push_back({static_cast<uint32_t>(i), p.left});
      wanted.push_back({static_cast<uint32_t>(i), p.right});
    }
  }
  const std::vector<int64_t> values = select_order_statistics(
      sets.size(), [&sets](uint32_t set, int64_t x) { return sets[set] == nullptr ? uint64_t{0} : sets[set]->count_le(x); },
      wanted, sum);
  // sorted_quantile on the ms values: ms() keeps the order, so its k-th value is ms(k-th ns)
  std::vector<double> out(requests.size() * kWallQuantiles.size(), 0.0);
  size_t v = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].members == 0) continue;
    for (size_t j = 0; j < kWallQuantiles.size(); ++j, v += 2) {
      const QuantilePlace p = quantile_place(requests[i].members, kWallQuantiles[j]);
      const double left = ms(values[v]), right = ms(values[v + 1]);
      out[i * kWallQuantiles.size() + j] = p.left == p.right ? left : left * (1 - p.weight) + right * p.weight;
    }
  }
  return out;
}

ClassSummaries merge_class_partials(const std::vector<ClassPartials>& per_rank, const knowledge::Knowledge& kb) {
  ClassPartialsMerge merge;
  ClassWalls walls;
  for (size_t r = 0; r < per_rank.size(); ++r) merge.fold(static_cast<uint32_t>(r), per_rank[r], walls, kb);
  const std::vector<WallRequest> requests = merge.wall_requests(0);
  merge.set_wall_quantiles(class_wall_quantiles(
      requests, [&walls](int32_t) { return &walls; }, [](std::vector<uint64_t>&) {}));
  return merge.finish(kb);
}

}  // namespace ascprof::analysis
