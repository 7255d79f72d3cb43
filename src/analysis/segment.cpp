// The segment stage entry point: structural plans (reference rules) materialised as segments, then
// declared steps (Step Id / ProfilerStep) and training phases on top.
#include "ascprof/analysis/segment.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ascprof/common/stable_id.hpp"
#include "segment_internal.hpp"

namespace ascprof::analysis {

namespace {

using model::LayerRole;
using model::SegmentType;
using model::StepSource;
using seg::Ctx;
using seg::Layer;
using seg::Plan;

struct LayerRef {
  const Layer* layer;
  LayerRole role;
  int32_t microbatch;
  uint32_t start;  // possibly clipped to a declared window
};

std::string step_family(const Ctx& c, uint32_t a, uint32_t b) {
  knowledge::RoleSet roles;
  for (uint32_t r = a; r <= b; ++r) roles |= c.n.taxa[c.n.taxon[r]].roles;
  auto has = [&](int i) { return i >= 0 && roles.test(static_cast<size_t>(i)); };
  const bool attention = has(c.role_attention), moe = has(c.role_moe), compute = has(c.role_compute);
  if (attention && moe) return "attention_moe_workload";
  if (attention && compute) return "attention_dense_workload";
  if (attention) return "attention_workload";
  if (moe) return "moe_or_dummy_workload";
  if (has(c.role_communication) && !compute) return "communication_or_dummy_workload";
  if (compute) return "compute_workload";
  return "unclassified_workload";
}

std::string period_text(const Ctx& c, const std::vector<int>& regimes) {
  const size_t p = seg::minimal_period(regimes);
  std::string s;
  for (size_t i = 0; i < p; ++i) {
    if (i) s += "||";
    s += c.strings.name(regimes[i]);
  }
  return s;
}

class Builder {
 public:
  Builder(Ctx& c, model::RankStructure& out, std::string rank_id) : c_(c), out_(out), rank_id_(std::move(rank_id)) {}

  void window(SegmentType type, uint32_t a, uint32_t b, std::vector<std::string> reasons, std::vector<std::string> tags,
              StepSource source = StepSource::kStructural, int64_t declared = -1) {
    model::StepSegment s = base(a, b);
    s.type = type;
    s.complete = false;
    s.source = source;
    s.declared_step = declared;
    s.frame_reasons = std::move(reasons);
    s.frame_tags = std::move(tags);
    push(std::move(s));
  }

  void step(uint32_t a, uint32_t b, const std::vector<LayerRef>& layers, StepSource source, int64_t declared,
            std::string phase, std::vector<std::string> reasons, std::vector<std::string> tags) {
    model::StepSegment s = base(a, b);
    s.type = SegmentType::kStep;
    s.complete = true;
    s.source = source;
    s.declared_step = declared;
    s.phase = std::move(phase);
    s.step_family = step_family(c_, a, b);
    std::vector<int> main, spec;
    int32_t max_mb = -1;
    uint32_t forward = 0, backward = 0;
    for (const auto& l : layers) {
      if (l.role == LayerRole::kSpeculative) spec.push_back(l.layer->regime);
      else main.push_back(l.layer->regime);
      forward += l.role == LayerRole::kForward;
      backward += l.role == LayerRole::kBackward;
      max_mb = std::max(max_mb, l.microbatch);
    }
    s.main_layer_count = static_cast<uint32_t>(main.size());
    s.speculative_layer_count = static_cast<uint32_t>(spec.size());
    s.microbatch_count = static_cast<uint32_t>(max_mb + 1);
    // Steps repeat: the signature (kilobytes of regime keys) and its cluster hash are built once per
    // distinct step shape.
    const bool training = s.phase == "training";
    std::vector<int> key{training ? 1 : 0, static_cast<int>(forward), static_cast<int>(backward),
                         static_cast<int>(s.microbatch_count), static_cast<int>(main.size())};
    key.insert(key.end(), main.begin(), main.end());
    key.push_back(-1);
    key.insert(key.end(), spec.begin(), spec.end());
    auto [it, fresh] = step_shapes_.try_emplace({s.step_family, std::move(key)});
    if (fresh) {
      std::string& sig = it->second.first;
      if (training) {
        sig = "forward_len=" + std::to_string(forward) + " ; backward_len=" + std::to_string(backward) +
              " ; microbatches=" + std::to_string(s.microbatch_count) + " ; main_period=" + period_text(c_, main);
      } else {
        sig = "main_len=" + std::to_string(main.size()) + " ; main_period=" + period_text(c_, main);
        if (!spec.empty()) sig += " ; spec_len=" + std::to_string(spec.size()) + " ; spec_period=" + period_text(c_, spec);
      }
      it->second.second =
          stable_id_n("cluster", {rank_id_, s.step_family, std::to_string(main.size()), std::to_string(spec.size()), sig}, 12);
    }
    s.structure_signature = it->second.first;
    s.cluster_id = it->second.second;
    s.frame_reasons = std::move(reasons);
    s.frame_tags = std::move(tags);
    for (auto r = std::lower_bound(c_.selection_rows.begin(), c_.selection_rows.end(), a);
         r != c_.selection_rows.end() && *r <= b && s.selection_rows.size() < kMaxSelectionRows; ++r)
      s.selection_rows.push_back(*r);
    s.first_layer = static_cast<uint32_t>(out_.layers.size());
    s.layer_count = static_cast<uint32_t>(layers.size());
    const uint32_t seg_index = static_cast<uint32_t>(out_.segments.size());
    push(std::move(s));
    const std::string& seg_id = out_.segments.back().segment_id;
    for (size_t j = 0; j < layers.size(); ++j) {
      model::LayerSegment l;
      l.segment = seg_index;
      l.layer_index = static_cast<uint32_t>(j);
      l.layer_id = stable_id("layer", {seg_id, std::to_string(j)});
      l.row_start = layers[j].start;
      l.row_end = j + 1 < layers.size() ? layers[j + 1].start - 1 : b;
      l.first_anchor_row = layers[j].layer->first_anchor;
      l.role = layers[j].role;
      l.microbatch = layers[j].microbatch;
      l.boundary_source = source == StepSource::kStructural                                 ? model::BoundarySource::kExactStructuralAnchor
                          : l.role == LayerRole::kForward || l.role == LayerRole::kBackward ? model::BoundarySource::kTrainingAnchor
                                                                                             : model::BoundarySource::kDeclaredStepWindow;
      l.signature = signature_index(layers[j].layer->signature);
      times(l.row_start, l.row_end, l.start_ns, l.end_ns);
      out_.layers.push_back(std::move(l));
    }
    observe(seg_index);
  }

 private:
  void times(uint32_t a, uint32_t b, int64_t& start, int64_t& end) const {
    start = INT64_MAX;
    end = INT64_MIN;
    for (uint32_t r = a; r <= b; ++r) {
      start = std::min(start, c_.k.start_ns[r]);
      end = std::max(end, c_.k.start_ns[r] + std::max<int64_t>(0, c_.k.dur_ns[r]));
    }
  }
  model::StepSegment base(uint32_t a, uint32_t b) const {
    model::StepSegment s;
    s.row_start = a;
    s.row_end = b;
    times(a, b, s.start_ns, s.end_ns);
    return s;
  }
  // One observation per layer role of step `seg`: the kernel names of its structural events.
  static constexpr size_t kMaxImplementationNames = 16;
  void observe(uint32_t seg) {
    const model::StepSegment& s = out_.segments[seg];
    const auto& structural = c_.kb.segmentation.structural_roles;
    for (const LayerRole role : {LayerRole::kMain, LayerRole::kSpeculative, LayerRole::kForward, LayerRole::kBackward}) {
      model::StructureObservation o;
      o.segment = seg;
      o.role = role;
      bool any = false;
      names_.clear();
      for (uint32_t i = s.first_layer; i < s.first_layer + s.layer_count; ++i) {
        const model::LayerSegment& l = out_.layers[i];
        if (l.role != role) continue;
        any = true;
        for (uint32_t r = l.row_start; r <= l.row_end && names_.size() < kMaxImplementationNames; ++r) {
          if (!(c_.n.taxa[c_.n.taxon[r]].roles & structural).any()) continue;
          const StrId name = c_.k.name[r];
          if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
        }
      }
      if (!any) continue;
      for (const StrId name : names_) o.implementation_names.emplace_back(c_.pool.view(name));
      out_.observations.push_back(std::move(o));
    }
    observe_roles(seg);
  }
  // The reference's step-scope observations: per operator role of the step's events, its events' rows
  // and the distinct kernel names implementing it.
  static constexpr size_t kMaxRoleObservationRows = 64;
  static constexpr size_t kMaxSelectionRows = 64;
  void observe_roles(uint32_t seg) {
    const model::StepSegment& s = out_.segments[seg];
    const auto& role_names = c_.kb.vocab.roles();
    role_order_.clear();
    for (auto& v : role_rows_) v.clear();
    for (auto& v : role_kernel_names_) v.clear();
    for (uint32_t r = s.row_start; r <= s.row_end; ++r) {
      const knowledge::RoleSet& roles = c_.n.taxa[c_.n.taxon[r]].roles;
      if (roles.none()) continue;
      for (size_t i = 0; i < role_names.size() && i < knowledge::kMaxRoles; ++i) {
        if (!roles.test(i)) continue;
        if (role_rows_[i].empty() && role_kernel_names_[i].empty()) role_order_.push_back(i);
        if (role_rows_[i].size() < kMaxRoleObservationRows) role_rows_[i].push_back(r);
        role_kernel_names_[i].push_back(c_.k.name[r]);
      }
    }
    for (const size_t i : role_order_) {
      model::StepRoleObservation o;
      o.segment = seg;
      o.role = role_names[i];
      std::vector<StrId>& ids = role_kernel_names_[i];
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (const StrId id : ids) o.implementation_names.emplace_back(c_.pool.view(id));
      std::sort(o.implementation_names.begin(), o.implementation_names.end());
      if (o.implementation_names.size() > kMaxImplementationNames) o.implementation_names.resize(kMaxImplementationNames);
      o.rows = role_rows_[i];
      out_.role_observations.push_back(std::move(o));
    }
  }

  uint32_t signature_index(int interned) {
    auto [it, inserted] = signature_index_.try_emplace(interned, static_cast<uint32_t>(out_.layer_signatures.size()));
    if (inserted) out_.layer_signatures.push_back(c_.strings.name(interned));
    return it->second;
  }
  void push(model::StepSegment s) {
    s.segment_id = stable_id("seg", {rank_id_, std::to_string(out_.segments.size()), std::to_string(s.row_start),
                                     std::to_string(s.row_end)});
    out_.segments.push_back(std::move(s));
  }

  Ctx& c_;
  model::RankStructure& out_;
  std::string rank_id_;
  std::unordered_map<int, uint32_t> signature_index_;  // interned signature -> layer_signatures index
  std::vector<StrId> names_;                           // scratch for observe()
  // scratch for observe_roles(): per role bit, its rows and kernel names; the roles in first-seen order
  std::array<std::vector<uint32_t>, knowledge::kMaxRoles> role_rows_;
  std::array<std::vector<StrId>, knowledge::kMaxRoles> role_kernel_names_;
  std::vector<size_t> role_order_;
  // (family, step shape) -> (structure signature, cluster id)
  std::map<std::pair<std::string, std::vector<int>>, std::pair<std::string, std::string>> step_shapes_;
};

// The reference's materialisation: head rows, then every plan up to the next plan's first row.
std::vector<int32_t> materialise_structural(Ctx& c, const std::vector<Plan>& plans, Builder& b) {
  std::vector<int32_t> plan_segment(plans.size(), -1);
  const uint32_t last_row = static_cast<uint32_t>(c.rows - 1);
  if (plans.front().first_row() > 0) b.window(SegmentType::kHead, 0, plans.front().first_row() - 1, {"edge_window"}, {});
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    const uint32_t a = p.first_row();
    const uint32_t e = i + 1 < plans.size() ? plans[i + 1].first_row() - 1 : last_row;
    std::vector<std::string> tags;
    for (const auto& f : p.frames)
      for (const auto& t : f.tags)
        if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
    plan_segment[i] = 0;  // set below from the segment count
    if (!p.complete) {
      b.window(p.type, a, e, {p.reason}, std::move(tags));
    } else {
      std::vector<LayerRef> refs;
      for (size_t f = 0; f < p.frames.size(); ++f)
        for (const auto& l : p.frames[f].layers) refs.push_back({&l, f == 0 ? LayerRole::kMain : LayerRole::kSpeculative, -1, l.start});
      b.step(a, e, refs, StepSource::kStructural, -1, "inference", {p.reason}, std::move(tags));
    }
  }
  return plan_segment;
}

struct Window {
  uint32_t a, b;
  int64_t step;
};

// Declared steps: consecutive rows with one Step Id value; else rows whose start falls in a
// ProfilerStep#N range (how torch_npu itself assigns Step Id).
std::vector<Window> declared_windows(const Ctx& c, const model::StepMarkerTable* steps, StepSource& source) {
  std::vector<Window> w;
  const auto& k = c.k;
  bool have_ids = false;
  for (size_t r = 0; r < k.step_id.size() && !have_ids; ++r) have_ids = k.step_id[r] != model::kAbsentI32;
  auto add = [&w](uint32_t r, int64_t step) {
    if (!w.empty() && w.back().step == step && w.back().b + 1 == r) w.back().b = r;
    else w.push_back({r, r, step});
  };
  if (have_ids) {
    source = StepSource::kStepId;
    for (uint32_t r = 0; r < c.rows; ++r)
      if (k.step_id[r] != model::kAbsentI32) add(r, k.step_id[r]);
  } else if (steps != nullptr && steps->size() > 0) {
    source = StepSource::kProfilerStep;
    std::vector<size_t> order(steps->size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return steps->start_ns[x] < steps->start_ns[y]; });
    size_t s = 0;
    for (uint32_t r = 0; r < c.rows; ++r) {
      const int64_t t = k.start_ns[r];
      while (s < order.size() && steps->end_ns[order[s]] < t) ++s;
      if (s < order.size() && steps->start_ns[order[s]] <= t) add(r, steps->step[order[s]]);
    }
  }
  return w;
}

// The declared steps beside the reference's structural ones: each step segment records the declared
// step holding its first layer's anchor, and each declared step gets a StepBoundaryCheck (how many
// complete structural steps have layers in it; agrees when exactly one, lying inside).
void annotate_declared_steps(const std::vector<Plan>& plans, const std::vector<Window>& windows, StepSource source,
                             model::RankStructure& out) {
  auto window_of = [&windows](uint32_t row) -> const Window* {
    auto it = std::upper_bound(windows.begin(), windows.end(), row, [](uint32_t r, const Window& w) { return r < w.a; });
    if (it == windows.begin()) return nullptr;
    --it;
    return row <= it->b ? &*it : nullptr;
  };
  for (auto& g : out.segments) {
    if (g.type != SegmentType::kStep || g.layer_count == 0) continue;
    if (const Window* w = window_of(out.layers[g.first_layer].first_anchor_row)) g.declared_step = w->step;
  }
  // One pass over the complete plans' layers (in row order): each layer's anchor falls in at most one
  // declared step; a plan counts once per declared step (its layers come one after another).
  const size_t nw = windows.size();
  std::vector<uint32_t> structural_steps(nw, 0);
  std::vector<int64_t> plan_in(nw, -1);  // the last plan seen in the declared step
  auto index_of = [&windows, &window_of](uint32_t row) -> int64_t {
    const Window* w = window_of(row);
    return w == nullptr ? -1 : w - windows.data();
  };
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i].complete) continue;
    for (const auto& f : plans[i].frames)
      for (const auto& l : f.layers) {
        const int64_t w = index_of(l.first_anchor);
        if (w < 0 || plan_in[static_cast<size_t>(w)] == static_cast<int64_t>(i)) continue;
        plan_in[static_cast<size_t>(w)] = static_cast<int64_t>(i);
        ++structural_steps[static_cast<size_t>(w)];
      }
  }
  for (size_t w = 0; w < nw; ++w) {
    const Window& win = windows[w];
    model::StepBoundaryCheck check;
    check.declared_step = win.step;
    check.source = source;
    check.row_start = win.a;
    check.row_end = win.b;
    check.structural_steps = structural_steps[w];
    if (structural_steps[w] == 1) {
      bool inside = true;
      for (const auto& f : plans[static_cast<size_t>(plan_in[w])].frames)
        for (const auto& l : f.layers) inside = inside && l.first_anchor >= win.a && l.last_anchor <= win.b;
      check.agrees = inside;
      if (!inside) check.note = "the structural step's layers extend beyond the declared step";
    } else {
      check.note = std::to_string(structural_steps[w]) + " structural steps have layers in this declared step";
    }
    out.boundary_checks.push_back(std::move(check));
  }
  // A declared step without any complete structural step, between declared steps that have one, is
  // unexplained: a hard error, not a silently dropped step (the reference's rules cannot see it).
  size_t first = windows.size(), last = 0;
  for (size_t w = 0; w < windows.size(); ++w)
    if (structural_steps[w] > 0) {
      first = std::min(first, w);
      last = w;
    }
  for (size_t w = first + 1; w < last && first < windows.size(); ++w) {
    if (structural_steps[w] > 0) continue;
    model::HardError e;
    e.error_type = "unexplained_declared_step";
    e.row_start = windows[w].a;
    e.row_end = windows[w].b;
    // the segment holding the declared step's first row (segments tile the rank in row order)
    const auto seg = std::upper_bound(out.segments.begin(), out.segments.end(), windows[w].a,
                                      [](uint32_t row, const model::StepSegment& g) { return row < g.row_start; });
    e.segment = seg == out.segments.begin() ? -1 : static_cast<int32_t>(seg - out.segments.begin() - 1);
    e.detail = "declared step " + std::to_string(windows[w].step) + " holds no complete structural step, between steps that do";
    out.hard_errors.push_back(std::move(e));
  }
}

// Training: one layer per attention anchor, forward or backward by kernel name; microbatches are
// the runs of one phase cut into units of the gcd of the lengths of the runs and of their pieces
// between point-to-point transfers.
std::vector<LayerRef> training_layers(Ctx& c, uint32_t a, uint32_t b, std::vector<Layer>& storage) {
  const uint32_t lo = static_cast<uint32_t>(std::lower_bound(c.anchors.begin(), c.anchors.end(), a) - c.anchors.begin());
  const uint32_t hi = static_cast<uint32_t>(std::upper_bound(c.anchors.begin(), c.anchors.end(), b) - c.anchors.begin());
  std::vector<uint32_t> anchors(c.anchors.begin() + lo, c.anchors.begin() + hi);
  std::vector<LayerRef> refs;
  if (anchors.empty()) return refs;
  const size_t base = storage.size();
  for (size_t i = 0; i < anchors.size(); ++i) {
    Layer l;
    const uint32_t lower = i == 0 ? a : anchors[i - 1] + 1;
    l.start = std::max(a, c.layer_start(lower, anchors[i]));
    l.anchor_begin = lo + static_cast<uint32_t>(i);
    l.anchor_end = l.anchor_begin + 1;
    storage.push_back(l);
  }
  for (size_t i = 0; i < anchors.size(); ++i) {
    Layer& l = storage[base + i];
    l.end = i + 1 < anchors.size() ? storage[base + i + 1].start - 1 : b;
    seg::finalize_layer(c, l);
  }
  std::vector<bool> backward(anchors.size());
  for (size_t i = 0; i < anchors.size(); ++i) backward[i] = c.tv(anchors[i]).backward;
  // The phase runs, cut again where a point-to-point transfer lies between two layers of one run
  // (segmentation.rules [training]): a stage running F0 F1 .. then B0 B1 .. has one run per phase
  // whose lengths alone would make the whole run one microbatch.
  std::vector<size_t> pieces;  // lengths of the runs' pieces
  for (size_t i = 0; i < anchors.size(); ++i) {
    const bool new_run = i == 0 || backward[i] != backward[i - 1];
    if (new_run || c.microbatch_boundary_between(anchors[i - 1], anchors[i])) pieces.push_back(0);
    ++pieces.back();
  }
  size_t unit = 0;
  for (const size_t r : pieces) unit = std::gcd(unit, r);
  int32_t fwd_mb = 0, bwd_mb = 0;
  size_t pos_in_run = 0;
  for (size_t i = 0; i < anchors.size(); ++i) {
    if (i > 0 && backward[i] != backward[i - 1]) pos_in_run = 0;
    int32_t& counter = backward[i] ? bwd_mb : fwd_mb;
    const int32_t mb = counter + static_cast<int32_t>(pos_in_run / unit);
    ++pos_in_run;
    const bool run_ends = i + 1 == anchors.size() || backward[i + 1] != backward[i];
    if (run_ends) counter += static_cast<int32_t>(pos_in_run / unit);
    refs.push_back({&storage[base + i], backward[i] ? LayerRole::kBackward : LayerRole::kForward, mb, storage[base + i].start});
  }
  return refs;
}

// ASCPROF_DEBUG_SEGMENT=1: the structural plans on stderr (frames, layers, tags), for rule debugging.
void dump_plans(const Ctx& c, const std::vector<Plan>& plans) {
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    std::fprintf(stderr, "plan %zu %s complete=%d reason=%s rows %u-%u\n", i, model::segment_type_name(p.type),
                 p.complete ? 1 : 0, p.reason.c_str(), p.first_row(), p.last_row());
    for (const auto& f : p.frames) {
      std::string tags;
      for (const auto& t : f.tags) tags += t + " ";
      std::fprintf(stderr, "  frame layers=%zu sel_before=%d sel_after=%d residual=%d tags=%s\n", f.layers.size(),
                   f.selection_before ? 1 : 0, f.selection_after ? 1 : 0, f.residual ? 1 : 0, tags.c_str());
      for (const auto& l : f.layers)
        std::fprintf(stderr, "    rows %u-%u anchor %u regime=%s\n", l.start, l.end, l.first_anchor,
                     c.strings.name(l.regime).substr(0, 700).c_str());
    }
  }
}

}  // namespace

model::RankStructure segment_rank(const SegmentInput& in, const knowledge::Knowledge& kb) {
  model::RankStructure out;
  out.rank_id = in.rank_id;
  const model::KernelTable& k = *in.kernels;
  out.event_count = k.size();
  if (k.size() == 0) {
    out.anchor_family = "none";
    return out;
  }
  Ctx c(k, *in.normalized, *in.pool, kb);
  seg::prepare_rows(c);
  std::vector<Layer> layers = seg::build_layers(c);
  out.anchor_family = c.anchor_family;
  const uint32_t last_row = static_cast<uint32_t>(c.rows - 1);
  Builder builder(c, out, in.rank_id);

  bool training = false;
  for (const uint32_t a : c.anchors) training = training || c.tv(a).backward;

  // Declared steps are read always: training is segmented by them; inference keeps the reference's
  // structural steps and only records, per step, the declared step holding its first layer and,
  // per declared step, whether the structure agrees (unless use_declared_steps asks for our windows).
  StepSource source = StepSource::kStructural;
  std::vector<Window> windows = declared_windows(c, in.profiler_steps, source);

  if (training) {
    // The reference rules do not model backward passes; a training step is segmented per declared
    // step (or as one window when the capture declares none).
    if (windows.empty()) {
      source = StepSource::kStructural;
      windows.push_back({0, last_row, -1});
    }
    out.step_source = source;
    std::vector<Layer> storage;
    storage.reserve(c.anchors.size());
    uint32_t next = 0;
    for (size_t w = 0; w < windows.size(); ++w) {
      const Window& win = windows[w];
      if (win.a > next) builder.window(w == 0 ? SegmentType::kHead : SegmentType::kRunnerWindow, next, win.a - 1, {"outside_declared_steps"}, {});
      const auto refs = training_layers(c, win.a, win.b, storage);
      if (refs.empty())
        builder.window(SegmentType::kRunnerWindow, win.a, win.b, {"declared_step_without_layers"}, {}, source, win.step);
      else builder.step(win.a, win.b, refs, source, win.step, "training", {"training_forward_backward"}, {});
      next = win.b + 1;
    }
    if (next <= last_row) builder.window(SegmentType::kTail, next, last_row, {"outside_declared_steps"}, {});
    return out;
  }

  if (layers.empty()) {  // no anchors at all: one island covering every row, no error by itself
    builder.window(SegmentType::kUnclassifiedIsland, 0, last_row, {"no_layer_anchors"}, {});
    return out;
  }
  std::vector<std::pair<uint32_t, uint32_t>> observations;  // every layer's rows, for the structural-middle check
  observations.reserve(layers.size());
  for (const auto& l : layers) observations.emplace_back(l.start, l.end);
  std::vector<seg::Frame> frames = seg::frames_from_selection(c, std::move(layers));
  frames = seg::split_composite_frames(c, std::move(frames));
  std::vector<Plan> plans = seg::compose_plans(c, std::move(frames));
  if (std::getenv("ASCPROF_DEBUG_SEGMENT") != nullptr) dump_plans(c, plans);
  seg::check_hard_errors(c, plans, observations, out.hard_errors);
  {
    size_t layer_total = 0;
    for (const auto& p : plans) layer_total += p.complete ? p.layer_count() : 0;
    out.layers.reserve(layer_total);
    out.segments.reserve(plans.size() + windows.size() + 2);
    out.observations.reserve(2 * (plans.size() + windows.size()));
  }

  if (windows.empty() || !in.use_declared_steps) {
    materialise_structural(c, plans, builder);
    // map plan-based error segments to segment indices (a head segment shifts them by one)
    const int32_t shift = plans.front().first_row() > 0 ? 1 : 0;
    for (auto& e : out.hard_errors)
      if (e.segment >= 0) e.segment += shift;
    if (!windows.empty()) annotate_declared_steps(plans, windows, source, out);
  } else {
    out.step_source = source;
    // Declared steps decide the boundaries; the structural layers are placed inside them and each
    // declaration is checked against the structural plans.
    struct PlanLayer {
      const Layer* layer;
      LayerRole role;
      size_t plan;
    };
    std::vector<PlanLayer> all;
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].complete)
        for (size_t f = 0; f < plans[i].frames.size(); ++f)
          for (const auto& l : plans[i].frames[f].layers) all.push_back({&l, f == 0 ? LayerRole::kMain : LayerRole::kSpeculative, i});
    // layers of the windows (non-complete plans), to see what a declared step without a complete
    // structural step holds
    std::vector<std::pair<uint32_t, size_t>> window_anchors;  // first anchor row, plan
    for (size_t i = 0; i < plans.size(); ++i)
      if (!plans[i].complete)
        for (const auto& f : plans[i].frames)
          for (const auto& l : f.layers) window_anchors.emplace_back(l.first_anchor, i);
    std::vector<uint8_t> has_complete(windows.size(), 0);
    {
      size_t j = 0;
      for (size_t w = 0; w < windows.size(); ++w) {
        while (j < all.size() && all[j].layer->first_anchor < windows[w].a) ++j;
        has_complete[w] = j < all.size() && all[j].layer->first_anchor <= windows[w].b;
      }
    }
    size_t first_complete = windows.size(), last_complete = 0;
    for (size_t w = 0; w < windows.size(); ++w)
      if (has_complete[w]) {
        first_complete = std::min(first_complete, w);
        last_complete = w;
      }
    size_t li = 0, wi = 0;
    uint32_t next = 0;
    for (auto& e : out.hard_errors) e.segment = -1;
    for (size_t w = 0; w < windows.size(); ++w) {
      const Window& win = windows[w];
      if (win.a > next) builder.window(w == 0 ? SegmentType::kHead : SegmentType::kRunnerWindow, next, win.a - 1, {"outside_declared_steps"}, {});
      while (li < all.size() && all[li].layer->first_anchor < win.a) ++li;
      std::vector<LayerRef> refs;
      std::vector<size_t> plan_ids;
      for (size_t j = li; j < all.size() && all[j].layer->first_anchor <= win.b; ++j) {
        refs.push_back({all[j].layer, all[j].role, -1, std::max(win.a, all[j].layer->start)});
        if (plan_ids.empty() || plan_ids.back() != all[j].plan) plan_ids.push_back(all[j].plan);
      }
      model::StepBoundaryCheck check;
      check.declared_step = win.step;
      check.source = source;
      check.row_start = win.a;
      check.row_end = win.b;
      check.structural_steps = static_cast<uint32_t>(plan_ids.size());
      if (plan_ids.size() == 1) {
        const Plan& p = plans[plan_ids[0]];
        bool inside = true;
        for (const auto& f : p.frames)
          for (const auto& l : f.layers) inside = inside && l.first_anchor >= win.a && l.last_anchor <= win.b;
        check.agrees = inside;
        if (!inside) check.note = "the structural step's layers extend beyond the declared step";
      } else {
        check.note = std::to_string(plan_ids.size()) + " structural steps have layers in this declared step";
      }
      out.boundary_checks.push_back(check);
      if (refs.empty()) {
        // No complete structural step in this declared step. If the structural rules left only
        // windows (partial bodies, islands) here, between declared steps that do have complete
        // structure, the step is unexplained: a hard error, not a silently dropped step.
        while (wi < window_anchors.size() && window_anchors[wi].first < win.a) ++wi;
        SegmentType type = SegmentType::kRunnerWindow;
        std::string reason = "declared_step_without_layers";
        if (wi < window_anchors.size() && window_anchors[wi].first <= win.b) {
          type = plans[window_anchors[wi].second].type;
          reason = "declared_step_without_complete_structure";
          if (w > first_complete && w < last_complete && first_complete < windows.size()) {
            model::HardError e;
            e.error_type = "unexplained_declared_step";
            e.row_start = win.a;
            e.row_end = win.b;
            e.segment = static_cast<int32_t>(out.segments.size());
            e.detail = "declared step " + std::to_string(win.step) + " holds no complete structural step, only " +
                       model::segment_type_name(type) + " windows, between steps that do";
            out.hard_errors.push_back(std::move(e));
          }
        }
        builder.window(type, win.a, win.b, {reason}, {}, source, win.step);
      } else {
        std::vector<std::string> tags;
        for (const size_t pid : plan_ids)
          for (const auto& f : plans[pid].frames)
            for (const auto& t : f.tags)
              if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
        builder.step(win.a, win.b, refs, source, win.step, "inference",
                     {plan_ids.size() == 1 ? plans[plan_ids[0]].reason : std::string("declared_step")}, std::move(tags));
      }
      next = win.b + 1;
    }
    if (next <= last_row) builder.window(SegmentType::kTail, next, last_row, {"outside_declared_steps"}, {});
  }

  // interior_unclassified_island: islands strictly between the first and the last step segment
  int64_t first_step = -1, last_step = -1;
  for (size_t i = 0; i < out.segments.size(); ++i)
    if (out.segments[i].type == SegmentType::kStep) {
      if (first_step < 0) first_step = static_cast<int64_t>(i);
      last_step = static_cast<int64_t>(i);
    }
  // With declared steps an island plan lives inside a declared step: count the structural islands
  // between the first and last complete plan instead.
  if (windows.empty() || !in.use_declared_steps) {
    for (int64_t i = first_step + 1; i < last_step; ++i) {
      const auto& s = out.segments[static_cast<size_t>(i)];
      if (s.type == SegmentType::kUnclassifiedIsland)
        out.hard_errors.push_back({"interior_unclassified_island", s.row_start, s.row_end, static_cast<int32_t>(i),
                                   "unclassified island between complete steps"});
    }
  } else {
    int64_t fp = -1, lp = -1;
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].complete) {
        if (fp < 0) fp = static_cast<int64_t>(i);
        lp = static_cast<int64_t>(i);
      }
    for (int64_t i = fp + 1; i < lp; ++i) {
      const Plan& p = plans[static_cast<size_t>(i)];
      if (!p.complete && p.type == SegmentType::kUnclassifiedIsland)
        out.hard_errors.push_back({"interior_unclassified_island", p.first_row(), p.last_row(), -1,
                                   "unclassified island between complete structural steps"});
    }
  }
  return out;
}

}  // namespace ascprof::analysis
