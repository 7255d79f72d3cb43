// Step plans (main frame + speculative frames), residual and interior classification, hard errors
// (reference-analysis.md §2.2.5, §2.2.7).
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "segment_internal.hpp"

namespace ascprof::analysis::seg {

namespace {

using RoleCounts = std::array<uint32_t, knowledge::kMaxRoles>;
using Seq = std::vector<int>;
using model::SegmentType;

RoleCounts coarse(const Frame& f) {
  RoleCounts c{};
  for (const auto& l : f.layers)
    for (size_t r = 0; r < c.size(); ++r) c[r] += (l.role_presence >> r) & 1u;
  return c;
}
RoleCounts coarse(const Plan& p) {
  RoleCounts c{};
  for (const auto& f : p.frames) {
    const RoleCounts x = coarse(f);
    for (size_t r = 0; r < c.size(); ++r) c[r] += x[r];
  }
  return c;
}

bool strict_sub(const RoleCounts& a, const RoleCounts& b) {
  bool differ = false;
  for (size_t r = 0; r < a.size(); ++r) {
    if (a[r] > b[r]) return false;
    differ = differ || a[r] != b[r];
  }
  return differ;
}

bool strict_sub_multiset(Seq a, Seq b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a != b && std::includes(b.begin(), b.end(), a.begin(), a.end());
}

bool frame_attention(const Frame& f) {
  for (const auto& l : f.layers)
    if (l.primary_attention) return true;
  return false;
}

Seq plan_seq(const Plan& p, Seq (*fn)(const Frame&)) {
  Seq s;
  for (const auto& f : p.frames) {
    const Seq x = fn(f);
    s.insert(s.end(), x.begin(), x.end());
  }
  return s;
}

bool has_selection(const Plan& p) {
  for (const auto& f : p.frames)
    if (f.selection_before || f.selection_after) return true;
  return false;
}

bool explained_window(const Plan& p) {
  return !p.complete && (p.type == SegmentType::kPartialBodyWindow || p.type == SegmentType::kPiecewiseInterleavedWindow ||
                         p.type == SegmentType::kRunnerWindow || p.type == SegmentType::kHead || p.type == SegmentType::kTail);
}

// Residual covered by exact slices of one recurring template starting at different offsets while the
// attention stream changes: piecewise / aclgraph multi-stream interleaving.
bool piecewise_interleaved(const Plan& p, const std::vector<Seq>& templates) {
  const Seq s = plan_seq(p, regime_seq);  // regime keys: boundary keys do not tell dense from MoE layers
  if (s.size() < 2) return false;
  std::vector<int32_t> streams;
  for (const auto& f : p.frames)
    for (const auto& l : f.layers) streams.push_back(l.attention_stream);
  bool stream_changes = false;
  for (size_t i = 1; i < streams.size(); ++i) stream_changes = stream_changes || streams[i] != streams[i - 1];
  if (!stream_changes) return false;
  for (const auto& t : templates) {
    size_t pos = 0;
    std::vector<size_t> offsets;
    while (pos < s.size()) {
      size_t best_len = 0, best_off = 0;
      for (size_t off = 0; off < t.size(); ++off) {
        size_t len = 0;
        while (pos + len < s.size() && off + len < t.size() && s[pos + len] == t[off + len]) ++len;
        if (len > best_len) {
          best_len = len;
          best_off = off;
        }
      }
      if (best_len == 0) break;
      offsets.push_back(best_off);
      pos += best_len;
    }
    if (pos == s.size() && offsets.size() >= 2) {
      std::sort(offsets.begin(), offsets.end());
      if (std::unique(offsets.begin(), offsets.end()) - offsets.begin() >= 2) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<Plan> compose_plans(Ctx& c, std::vector<Frame> frames) {
  std::vector<Plan> plans;
  // 1. compose: each frame starts a plan; speculative frames attach while the rules hold
  for (auto& f : frames) {
    if (!plans.empty() && !f.residual && !plans.back().frames.front().residual) {
      const Frame& main = plans.back().frames.front();
      const bool attention = frame_attention(f);
      if ((f.selection_before || !attention) && (f.layers.size() == 1 || !attention) &&
          f.layers.size() < main.layers.size() && strict_sub(coarse(f), coarse(main))) {
        plans.back().frames.push_back(std::move(f));
        plans.back().reason = "main_body+selection_delimited_speculative_tail";
        continue;
      }
    }
    Plan p;
    p.reason = "main_body";
    p.frames.push_back(std::move(f));
    plans.push_back(std::move(p));
  }
  // 1b. rebalance_homogeneous_missing_spec_boundary: a plan shaped "main+1, spec" next to plans of the
  // same total length with more speculative layers lost a selection row between its main body and
  // its first speculative layer: the trailing main layers with the spec tail's role key move into
  // speculative frames of their own.
  {
    std::map<size_t, size_t> max_spec;  // total layers -> largest speculative layer count
    for (const auto& p : plans) {
      const size_t spec = p.layer_count() - p.main_layers();
      size_t& m = max_spec[p.layer_count()];
      m = std::max(m, spec);
    }
    for (auto& p : plans) {
      if (p.frames.size() < 2) continue;
      const size_t spec = p.layer_count() - p.main_layers();
      const size_t want = max_spec[p.layer_count()];
      if (want <= spec) continue;
      bool single = true;
      const int role = p.frames[1].layers.front().role_key;
      for (size_t f = 1; f < p.frames.size(); ++f)
        single = single && p.frames[f].layers.size() == 1 && p.frames[f].layers.front().role_key == role;
      const size_t move = want - spec;
      Frame& main = p.frames.front();
      if (!single || move >= main.layers.size()) continue;
      bool tail_matches = true;
      for (size_t i = main.layers.size() - move; i < main.layers.size(); ++i)
        tail_matches = tail_matches && main.layers[i].role_key == role;
      if (!tail_matches) continue;
      std::vector<Frame> moved;
      for (size_t i = main.layers.size() - move; i < main.layers.size(); ++i) {
        Frame f;
        f.layers.push_back(main.layers[i]);
        f.tags.push_back("rebalanced_missing_spec_boundary");
        moved.push_back(std::move(f));
      }
      main.layers.resize(main.layers.size() - move);
      p.frames.insert(p.frames.begin() + 1, std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
    }
  }
  // 2. merge consecutive fragment plans whose concatenation is a recurring complete-plan template
  {
    std::map<Seq, int> recurring;
    for (const auto& p : plans)
      if (p.layer_count() > 1 && !has_selection(p)) ++recurring[plan_seq(p, boundary_seq)];
    std::vector<Plan> out;
    for (auto& p : plans) {
      if (!out.empty() && !has_selection(out.back()) && !has_selection(p) && !out.back().all_residual() && !p.all_residual()) {
        Seq joined = plan_seq(out.back(), boundary_seq);
        const Seq tail = plan_seq(p, boundary_seq);
        joined.insert(joined.end(), tail.begin(), tail.end());
        auto it = recurring.find(joined);
        if (it != recurring.end() && it->second >= 2) {
          Frame& main = out.back().frames.front();
          for (auto& f : p.frames) main.layers.insert(main.layers.end(), f.layers.begin(), f.layers.end());
          out.back().reason = "template_fragment_merge";
          continue;
        }
      }
      out.push_back(std::move(p));
    }
    plans = std::move(out);
  }
  // recurring templates among complete multi-layer plans (main frame regime sequences)
  std::map<Seq, int> plan_count;
  for (const auto& p : plans)
    if (!p.all_residual() && p.main_layers() > 1) ++plan_count[regime_seq(p.frames.front())];
  std::vector<Seq> regime_templates;  // distinct recurring main-frame regime sequences
  std::vector<int> template_kinds;    // distinct layer kinds in them
  for (const auto& [seq, count] : plan_count)
    if (count >= 2) regime_templates.push_back(seq);
  for (const auto& p : plans) {
    if (p.all_residual() || p.main_layers() <= 1) continue;
    if (plan_count[regime_seq(p.frames.front())] < 2) continue;
    for (const auto& l : p.frames.front().layers) template_kinds.push_back(l.kind);
  }
  std::sort(template_kinds.begin(), template_kinds.end());
  template_kinds.erase(std::unique(template_kinds.begin(), template_kinds.end()), template_kinds.end());
  // 3. residual plans
  std::map<Seq, int> residual_core;
  for (const auto& p : plans)
    if (p.all_residual()) ++residual_core[plan_seq(p, core_seq)];
  for (size_t i = 0; i < plans.size(); ++i) {
    Plan& p = plans[i];
    if (!p.all_residual()) continue;
    p.complete = false;
    if (piecewise_interleaved(p, regime_templates)) p.type = SegmentType::kPiecewiseInterleavedWindow;
    else if (i == 0) p.type = SegmentType::kHead;
    else if (i + 1 == plans.size()) p.type = SegmentType::kTail;
    else {
      bool partial = true;
      for (const auto& f : p.frames)
        for (const auto& l : f.layers) {
          bool inside = false;
          for (const int k : template_kinds) {
            const auto& t = c.kinds[static_cast<size_t>(k)].terms;
            if (std::includes(t.begin(), t.end(), c.kind(l).terms.begin(), c.kind(l).terms.end())) inside = true;
          }
          partial = partial && inside;
        }
      if (partial || residual_core[plan_seq(p, core_seq)] >= 2) p.type = SegmentType::kPartialBodyWindow;
      else p.type = SegmentType::kUnclassifiedIsland;
    }
  }
  // 4. complete no-attention plans before the first / after the last attention plan: head / tail
  {
    int first_attention = -1, last_attention = -1;
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].complete && plans[i].primary_attention()) {
        if (first_attention < 0) first_attention = static_cast<int>(i);
        last_attention = static_cast<int>(i);
      }
    if (first_attention >= 0)
      for (size_t i = 0; i < plans.size(); ++i) {
        Plan& p = plans[i];
        if (!p.complete || p.primary_attention()) continue;
        if (static_cast<int>(i) < first_attention) {
          p.complete = false;
          p.type = SegmentType::kHead;
        } else if (static_cast<int>(i) > last_attention) {
          p.complete = false;
          p.type = SegmentType::kTail;
        }
      }
  }
  // 5. interior sub-structures of the complete attention plans with more than one main layer
  {
    // The references are thousands of identical steps: compare against their distinct shapes.
    struct Shape {
      size_t main;
      RoleCounts coarse;
      Seq boundary;  // sorted (a multiset)
      bool operator<(const Shape& o) const {
        return std::tie(main, coarse, boundary) < std::tie(o.main, o.coarse, o.boundary);
      }
    };
    auto shape_of = [](const Plan& p) {
      Seq b = plan_seq(p, boundary_seq);
      std::sort(b.begin(), b.end());
      return Shape{p.main_layers(), coarse(p), std::move(b)};
    };
    std::map<Shape, int> ref_shapes;
    for (const auto& p : plans)
      if (p.complete && p.primary_attention() && p.main_layers() > 1) ref_shapes.emplace(shape_of(p), 0);
    auto substructure = [&](const Plan& p) {
      const Shape ps = shape_of(p);
      for (const auto& [ref, unused] : ref_shapes) {
        (void)unused;
        if (ref.main == ps.main) continue;
        if (!p.primary_attention() && p.complete) continue;  // an attention reference is never the parent of a no-attention plan
        if (strict_sub(ps.coarse, ref.coarse) ||
            (ps.boundary != ref.boundary && std::includes(ref.boundary.begin(), ref.boundary.end(), ps.boundary.begin(), ps.boundary.end())))
          return true;
      }
      return false;
    };
    // complete attention plans before / after each plan, from prefix counts
    std::vector<uint32_t> attention_upto(plans.size() + 1, 0);
    for (size_t i = 0; i < plans.size(); ++i)
      attention_upto[i + 1] = attention_upto[i] + (plans[i].complete && plans[i].primary_attention() ? 1u : 0u);
    std::vector<uint8_t> sub(plans.size(), 0);
    for (size_t i = 0; i < plans.size(); ++i) sub[i] = plans[i].complete && substructure(plans[i]);
    for (size_t i = 0; i < plans.size(); ++i) {
      if (!sub[i]) continue;
      const bool before = attention_upto[i] > 0, after = attention_upto[plans.size()] > attention_upto[i + 1];
      if (before && after) {
        plans[i].complete = false;
        plans[i].type = plans[i].primary_attention() ? SegmentType::kPartialBodyWindow : SegmentType::kRunnerWindow;
      }
    }
    // second pass: complete sub-structures next to explained windows
    for (size_t i = 0; i < plans.size(); ++i) {
      Plan& p = plans[i];
      if (!p.complete) continue;
      const bool next_to = (i > 0 && explained_window(plans[i - 1])) || (i + 1 < plans.size() && explained_window(plans[i + 1]));
      if (!next_to) continue;
      if (sub[i]) {
        p.complete = false;
        p.type = i == 0 ? SegmentType::kHead : i + 1 == plans.size() ? SegmentType::kTail : SegmentType::kPartialBodyWindow;
      } else if (p.layer_count() == 1 && !p.primary_attention()) {
        p.complete = false;
        p.type = SegmentType::kRunnerWindow;
      }
    }
    // third pass: unexplained windows that are sub-structures between explained or complete neighbours
    for (size_t i = 1; i + 1 < plans.size(); ++i) {
      Plan& p = plans[i];
      if (p.complete || p.type != SegmentType::kUnclassifiedIsland) continue;
      const bool l = plans[i - 1].complete || explained_window(plans[i - 1]);
      const bool r = plans[i + 1].complete || explained_window(plans[i + 1]);
      if (l && r && substructure(p))
        p.type = p.primary_attention() ? SegmentType::kPartialBodyWindow : SegmentType::kRunnerWindow;
    }
  }
  // 6. runs of explained windows whose joined boundary sequence equals a complete multi-layer plan
  {
    std::map<Seq, int> complete_seqs;
    for (const auto& p : plans)
      if (p.complete && p.layer_count() > 1) complete_seqs[plan_seq(p, boundary_seq)] = 1;
    auto mergeable = [](const Plan& p) {
      return !p.complete && (p.type == SegmentType::kPartialBodyWindow || p.type == SegmentType::kPiecewiseInterleavedWindow ||
                             p.type == SegmentType::kUnclassifiedIsland);
    };
    std::vector<Plan> out;
    for (size_t i = 0; i < plans.size();) {
      if (!mergeable(plans[i])) {
        out.push_back(std::move(plans[i++]));
        continue;
      }
      size_t j = i;
      Seq joined;
      bool merged = false;
      while (j < plans.size() && mergeable(plans[j])) {
        const Seq s = plan_seq(plans[j], boundary_seq);
        joined.insert(joined.end(), s.begin(), s.end());
        ++j;
        if (j - i >= 2 && complete_seqs.count(joined)) {
          Plan p;
          p.reason = "explained_windows_promoted_to_template";
          Frame f;
          for (size_t k = i; k < j; ++k)
            for (auto& fr : plans[k].frames) f.layers.insert(f.layers.end(), fr.layers.begin(), fr.layers.end());
          f.tags.push_back("explained_window_promotion");
          p.frames.push_back(std::move(f));
          out.push_back(std::move(p));
          i = j;
          merged = true;
          break;
        }
      }
      if (!merged) out.push_back(std::move(plans[i++]));
    }
    plans = std::move(out);
  }
  return plans;
}

void check_hard_errors(Ctx& c, const std::vector<Plan>& plans,
                       const std::vector<std::pair<uint32_t, uint32_t>>& layer_rows, std::vector<model::HardError>& out) {
  if (plans.empty()) return;
  auto err = [&](const char* type, uint32_t a, uint32_t b, int32_t seg, std::string detail) {
    model::HardError e;
    e.error_type = type;
    e.row_start = a;
    e.row_end = b;
    e.segment = seg;
    e.detail = std::move(detail);
    out.push_back(std::move(e));
  };
  // unexplained_structural_middle: a structural row between the first plan's start and the last
  // plan's end that lies in no layer observation
  {
    const uint32_t first = plans.front().first_row(), last = plans.back().last_row();
    size_t li = 0;
    uint32_t reported = 0;
    for (uint32_t r = first; r <= last && reported < 16; ++r) {
      while (li < layer_rows.size() && layer_rows[li].second < r) ++li;
      const bool inside = li < layer_rows.size() && layer_rows[li].first <= r;
      if (!inside && c.tv(r).structural) {
        err("unexplained_structural_middle", r, r, -1, "structural row outside every layer");
        ++reported;
      }
    }
  }
  // overlapping_step_plan
  for (size_t i = 1; i < plans.size(); ++i)
    if (plans[i].first_row() <= plans[i - 1].last_row())
      err("overlapping_step_plan", plans[i].first_row(), plans[i - 1].last_row(), static_cast<int32_t>(i),
          "plan starts at row " + std::to_string(plans[i].first_row()) + ", previous plan ends at row " +
              std::to_string(plans[i - 1].last_row()));
  // embedded_short_body_between_peer_steps
  std::vector<size_t> steps;
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].complete) steps.push_back(i);
  for (size_t s = 1; s + 1 < steps.size(); ++s) {
    const Plan &a = plans[steps[s - 1]], &b = plans[steps[s]], &d = plans[steps[s + 1]];
    const Seq ra = regime_seq(a.frames.front()), rb = regime_seq(b.frames.front()), rd = regime_seq(d.frames.front());
    if (b.main_layers() < a.main_layers() && b.main_layers() < d.main_layers() && ra == rd && strict_sub_multiset(rb, ra))
      err("embedded_short_body_between_peer_steps", b.first_row(), b.last_row(), static_cast<int32_t>(steps[s]),
          "step has " + std::to_string(b.main_layers()) + " main layers between peers of " + std::to_string(a.main_layers()));
  }
  // unresolved_composite_body
  {
    std::map<Seq, int> core_count, boundary_count;
    for (const size_t i : steps) {
      ++core_count[core_seq(plans[i].frames.front())];
      ++boundary_count[boundary_seq(plans[i].frames.front())];
    }
    std::vector<Seq> core_templates, boundary_templates;
    for (const auto& [s, n] : core_count)
      if (n >= 2 && s.size() > 1) core_templates.push_back(s);
    for (const auto& [s, n] : boundary_count)
      if (n >= 2 && s.size() > 1) boundary_templates.push_back(s);
    auto contains = [](const Seq& s, const Seq& t) { return t.size() < s.size() && std::search(s.begin(), s.end(), t.begin(), t.end()) != s.end(); };
    auto tiles = [](const Seq& s, const std::vector<Seq>& ts) {
      std::vector<uint8_t> ok(s.size() + 1, 0);
      ok[0] = 1;
      for (size_t i = 0; i < s.size(); ++i) {
        if (!ok[i]) continue;
        for (const auto& t : ts)
          if (t.size() < s.size() && i + t.size() <= s.size() && std::equal(t.begin(), t.end(), s.begin() + static_cast<std::ptrdiff_t>(i)))
            ok[i + t.size()] = 1;
      }
      return ok[s.size()] != 0;
    };
    for (const size_t i : steps) {
      const Seq cs = core_seq(plans[i].frames.front()), bs = boundary_seq(plans[i].frames.front());
      if (core_count[cs] >= 2 || boundary_count[bs] >= 2) continue;
      bool holds = false;
      for (const auto& t : core_templates) holds = holds || contains(cs, t);
      if (!holds) continue;
      if (!tiles(cs, core_templates) && !tiles(bs, boundary_templates))
        err("unresolved_composite_body", plans[i].first_row(), plans[i].last_row(), static_cast<int32_t>(i),
            "complete plan of " + std::to_string(plans[i].main_layers()) +
                " main layers contains a recurring template but is not tiled by templates");
    }
  }
  // interior_template_residual
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    if (p.complete || p.type == SegmentType::kHead || p.type == SegmentType::kTail ||
        p.type == SegmentType::kPiecewiseInterleavedWindow || p.type == SegmentType::kRunnerWindow ||
        p.type == SegmentType::kPartialBodyWindow)
      continue;
    err("interior_template_residual", p.first_row(), p.last_row(), static_cast<int32_t>(i),
        std::string(model::segment_type_name(p.type)) + " of " + std::to_string(p.layer_count()) +
            " layer(s) inside the body is not explained by any recurring template");
  }
}

}  // namespace ascprof::analysis::seg
