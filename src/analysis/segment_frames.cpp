// Frames (candidate bodies) and their exact repairs (reference-analysis.md §2.2.4). No rule here
// looks at time: only at the order and the keys of layers.
#include <algorithm>
#include <array>
#include <map>

#include "segment_internal.hpp"

namespace ascprof::analysis::seg {

size_t minimal_period(const std::vector<int>& s) {
  const size_t n = s.size();
  for (size_t p = 1; p < n; ++p) {
    if (n % p != 0) continue;
    bool ok = true;
    for (size_t i = p; i < n && ok; ++i) ok = s[i] == s[i - p];
    if (ok) return p;
  }
  return n;
}

std::vector<int> regime_seq(const Frame& f) {
  std::vector<int> s;
  for (const auto& l : f.layers) s.push_back(l.regime);
  return s;
}
std::vector<int> core_seq(const Frame& f) {
  std::vector<int> s;
  for (const auto& l : f.layers) s.push_back(l.core);
  return s;
}
std::vector<int> boundary_seq(const Frame& f) {
  std::vector<int> s;
  for (const auto& l : f.layers) s.push_back(l.boundary);
  return s;
}

namespace {

using RoleCounts = std::array<uint32_t, knowledge::kMaxRoles>;

RoleCounts coarse_counts(const std::vector<Layer>& layers, size_t first, size_t last) {
  RoleCounts c{};
  for (size_t i = first; i <= last; ++i)
    for (size_t r = 0; r < c.size(); ++r) c[r] += (layers[i].role_presence >> r) & 1u;
  return c;
}

bool fits_within(const RoleCounts& a, const RoleCounts& b) {
  for (size_t r = 0; r < a.size(); ++r)
    if (a[r] > b[r]) return false;
  return true;
}

bool subset(const std::vector<int>& a, const std::vector<int>& b) {  // both sorted
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

Frame piece(const Frame& f, size_t first, size_t last, bool first_piece, bool last_piece) {
  Frame out;
  out.layers.assign(f.layers.begin() + static_cast<std::ptrdiff_t>(first), f.layers.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  out.selection_before = first_piece && f.selection_before;
  out.selection_after = last_piece && f.selection_after;
  out.residual = f.residual;
  out.reasons = f.reasons;
  out.tags = f.tags;
  return out;
}

void add_tag(Frame& f, const std::string& tag) {
  if (std::find(f.tags.begin(), f.tags.end(), tag) == f.tags.end()) f.tags.push_back(tag);
}

// Merges consecutive windows of `width` layers into one layer each.
void merge_windows(Ctx& c, Frame& f, size_t width, const char* tag) {
  std::vector<Layer> merged;
  for (size_t i = 0; i < f.layers.size(); i += width) merged.push_back(merge_layers(c, f.layers, i, i + width - 1));
  f.layers = std::move(merged);
  add_tag(f, tag);
}

uint32_t gating_in(const Frame& f, size_t first, size_t last) {
  uint32_t g = 0;
  for (size_t i = first; i <= last; ++i) g += f.layers[i].gating;
  return g;
}

// DeepSeek MLA emits two attention anchors per layer: the per-layer anchor sequence repeats with a
// period > 1, a window holds MoE, no window more than one MoE layer (counted by moe.gating).
bool merge_exact_attention_subunits(Ctx& c, Frame& f) {
  const size_t n = f.layers.size();
  if (n < 2) return false;
  std::vector<int> anchors;
  for (const auto& l : f.layers) anchors.push_back(l.anchor_seq);
  const size_t p = minimal_period(anchors);
  if (p <= 1) return false;
  bool any_moe = false;
  for (size_t w = 0; w < n; w += p) {
    const uint32_t g = gating_in(f, w, w + p - 1);
    if (g > 1) return false;
    any_moe = any_moe || g > 0;
  }
  if (!any_moe) return false;
  merge_windows(c, f, p, "exact_attention_subunits");
  return true;
}

// The dense-prefix + MoE-suffix and shared-family exceptions of split_frame_by_regime.
bool prefix_variant(const Ctx& c, const Frame& f, size_t k) {
  const size_t n = f.layers.size();
  auto any = [&](size_t a, size_t b, auto pred) {
    for (size_t i = a; i < b; ++i)
      if (pred(f.layers[i])) return true;
    return false;
  };
  const bool left_moe = any(0, k, [](const Layer& l) { return l.has_moe; });
  const bool right_moe = any(k, n, [](const Layer& l) { return l.has_moe; });
  if (k * 4 <= n - k && any(0, k, [](const Layer& l) { return l.primary_attention; }) &&
      any(k, n, [](const Layer& l) { return l.primary_attention; }) && any(0, k, [](const Layer& l) { return l.dense_compute; }) &&
      !left_moe && right_moe) {
    std::vector<int> prefix_attention;
    for (size_t i = 0; i < k; ++i)
      prefix_attention.insert(prefix_attention.end(), c.kind(f.layers[i]).attention_categories.begin(),
                              c.kind(f.layers[i]).attention_categories.end());
    std::sort(prefix_attention.begin(), prefix_attention.end());
    prefix_attention.erase(std::unique(prefix_attention.begin(), prefix_attention.end()), prefix_attention.end());
    bool every = true;
    for (size_t i = k; i < n && every; ++i) every = subset(prefix_attention, c.kind(f.layers[i]).attention_categories);
    if (every) return true;
  }
  if (left_moe && right_moe) {  // shared or nested core-role family
    std::vector<int> a, b;
    for (size_t i = 0; i < k; ++i) a.push_back(f.layers[i].core);
    for (size_t i = k; i < n; ++i) b.push_back(f.layers[i].core);
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    std::vector<int> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    if (!common.empty() || subset(a, b) || subset(b, a)) return true;
  }
  return false;
}

// Splits where two exactly structured sides have disjoint regime sets (e.g. a VL body + an LLM body).
// "Exactly structured" = more than one layer and a proper periodic repeat or a repeated key; a proper
// period implies a repeated key, so it is "a repeated key". All cuts are checked in one O(n) pass.
bool split_frame_by_regime(const Ctx& c, const Frame& f, std::vector<Frame>& out) {
  const size_t n = f.layers.size();
  if (n < 4) return false;
  // A dense prefix merged back onto its MoE suffix stays one body: the later rounds would otherwise
  // cut it again where the prefix is longer than a quarter of the suffix (3 dense + 9 MoE layers),
  // and the steps after the first would lose their dense layers.
  if (std::find(f.tags.begin(), f.tags.end(), "dense_prefix_moe_suffix") != f.tags.end()) return false;
  std::vector<int> s = regime_seq(f);
  // dense ids for the keys of this frame
  std::vector<int> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (auto& x : s) x = static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
  std::vector<uint32_t> total(sorted.size(), 0), left(sorted.size(), 0);
  for (const int x : s) ++total[static_cast<size_t>(x)];
  // right side [k, n): repeated key?
  std::vector<uint8_t> right_repeat(n + 1, 0);
  {
    std::vector<uint8_t> seen(sorted.size(), 0);
    bool rep = false;
    for (size_t k = n; k-- > 0;) {
      rep = rep || seen[static_cast<size_t>(s[k])];
      seen[static_cast<size_t>(s[k])] = 1;
      right_repeat[k] = rep;
    }
  }
  size_t shared = 0;  // keys present on both sides
  bool left_repeat = false;
  for (size_t k = 1; k < n; ++k) {
    const size_t x = static_cast<size_t>(s[k - 1]);
    left_repeat = left_repeat || left[x] > 0;
    if (left[x] == 0 && total[x] > 1) ++shared;           // x now on the left, and still on the right
    ++left[x];
    if (left[x] == total[x] && total[x] > 1) --shared;    // its last copy moved left
    if (k < 2 || n - k < 2 || !left_repeat || !right_repeat[k] || shared != 0) continue;
    if (prefix_variant(c, f, k)) continue;
    Frame l = piece(f, 0, k - 1, true, false), r = piece(f, k, n - 1, false, true);
    add_tag(l, "exact_regime_split");
    add_tag(r, "exact_regime_split");
    out.push_back(std::move(l));
    out.push_back(std::move(r));
    return true;
  }
  return false;
}

bool merge_adjacent_attention_pair_single_moe(Ctx& c, Frame& f) {
  const size_t n = f.layers.size();
  if (n < 2 || n % 2 != 0) return false;
  for (size_t i = 0; i < n; i += 2) {
    const Layer &a = f.layers[i], &b = f.layers[i + 1];
    if (a.attention_set != b.attention_set || c.strings.name(a.attention_set).empty()) return false;
    if (a.gating + b.gating != 1) return false;
  }
  merge_windows(c, f, 2, "attention_pair_single_moe");
  return true;
}

// One MoE layer split into gating / dispatch / experts / combine pieces (e.g. on a dummy rank the
// MoE kernels anchor): the role keys repeat and every window has exactly one gating. Unlike the
// reference's "proper" period, a frame without attention that is a single such window (a dummy
// rank's MTP layer) is merged too, so that layer counts stay one per model layer.
bool merge_exact_moe_subunits(Ctx& c, Frame& f) {
  const size_t n = f.layers.size();
  if (n < 2) return false;
  std::vector<int> roles;
  for (const auto& l : f.layers) roles.push_back(l.role_key);
  const size_t p = minimal_period(roles);
  if (p <= 1) return false;
  if (p == n)  // a single window: only MoE-anchored pieces (no attention) are sub-units of one layer
    for (const auto& l : f.layers)
      if (l.primary_attention) return false;
  for (size_t w = 0; w < n; w += p)
    if (gating_in(f, w, w + p - 1) != 1) return false;
  merge_windows(c, f, p, "exact_moe_subunits");
  return true;
}

bool merge_moe_phase_groups(Ctx& c, Frame& f) {
  const size_t n = f.layers.size();
  if (n < 2 || f.layers[0].gating == 0) return false;
  std::vector<size_t> starts;
  bool grows = false;
  for (size_t i = 0; i < n; ++i) {
    if (f.layers[i].gating > 0) {
      starts.push_back(i);
    } else {
      if (!f.layers[i].moe_phase) return false;
      grows = true;
    }
  }
  if (!grows) return false;
  std::vector<Layer> merged;
  for (size_t g = 0; g < starts.size(); ++g) {
    const size_t last = g + 1 < starts.size() ? starts[g + 1] - 1 : n - 1;
    merged.push_back(merge_layers(c, f.layers, starts[g], last));
  }
  f.layers = std::move(merged);
  add_tag(f, "moe_phase_groups");
  return true;
}

// Cuts where layers switch between having and not having primary attention, next to MoE.
void split_attention_prefix_moe_suffix(const Frame& f, std::vector<Frame>& out) {
  const size_t n = f.layers.size();
  size_t begin = 0;
  for (size_t i = 1; i < n; ++i) {
    const Layer &a = f.layers[i - 1], &b = f.layers[i];
    if (a.primary_attention != b.primary_attention && (a.has_moe || b.has_moe)) {
      Frame p = piece(f, begin, i - 1, begin == 0, false);
      add_tag(p, "attention_prefix_moe_suffix_split");
      out.push_back(std::move(p));
      begin = i;
    }
  }
  Frame p = piece(f, begin, n - 1, begin == 0, true);
  if (begin > 0) add_tag(p, "attention_prefix_moe_suffix_split");
  out.push_back(std::move(p));
}

std::vector<int> anchor_core_set(const Frame& f) {
  std::vector<int> s;
  for (const auto& l : f.layers) s.push_back(l.anchor_seq * 1000003 + l.core);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

void concat_into(Frame& a, Frame&& b) {
  a.layers.insert(a.layers.end(), std::make_move_iterator(b.layers.begin()), std::make_move_iterator(b.layers.end()));
  a.selection_after = b.selection_after;
  for (auto& t : b.tags) add_tag(a, t);
}

void merge_adjacent_same_core_frames(std::vector<Frame>& frames) {
  std::vector<Frame> out;
  for (auto& f : frames) {
    if (!out.empty() && !out.back().selection_after && !f.selection_before && anchor_core_set(out.back()) == anchor_core_set(f)) {
      concat_into(out.back(), std::move(f));
      continue;
    }
    out.push_back(std::move(f));
  }
  frames = std::move(out);
}

void merge_dense_prefix_with_moe_suffix(const Ctx& c, std::vector<Frame>& frames) {
  std::vector<Frame> out;
  for (auto& f : frames) {
    if (!out.empty() && !out.back().selection_after && !f.selection_before) {
      Frame& prev = out.back();
      bool prev_moe = false, next_moe = false;
      for (const auto& l : prev.layers) prev_moe = prev_moe || l.has_moe;
      for (const auto& l : f.layers) next_moe = next_moe || l.has_moe;
      if (!prev_moe && next_moe) {
        std::vector<int> prefix_attention;
        for (const auto& l : prev.layers)
          prefix_attention.insert(prefix_attention.end(), c.kind(l).attention_categories.begin(),
                                  c.kind(l).attention_categories.end());
        std::sort(prefix_attention.begin(), prefix_attention.end());
        prefix_attention.erase(std::unique(prefix_attention.begin(), prefix_attention.end()), prefix_attention.end());
        bool every = true;
        for (const auto& l : f.layers) every = every && subset(prefix_attention, c.kind(l).attention_categories);
        if (every) {
          concat_into(prev, std::move(f));
          add_tag(prev, "dense_prefix_moe_suffix");
          continue;
        }
      }
    }
    out.push_back(std::move(f));
  }
  frames = std::move(out);
}

// Runs of a repeating unit: at each position the longest prefix that is >= 2 copies of one unit
// (or a single layer). Three or more runs with two identical ones are glued bodies: split.
constexpr size_t kMaxRunUnit = 256;  // bounds the search on frames of thousands of layers

bool split_frame_by_repeated_body_runs(const Frame& f, std::vector<Frame>& out) {
  const size_t n = f.layers.size();
  bool attention = false;
  for (const auto& l : f.layers) attention = attention || l.primary_attention;
  if (n <= 2 || !attention) return false;
  const std::vector<int> s = boundary_seq(f);
  std::vector<std::pair<size_t, size_t>> runs;  // [first, last]
  for (size_t i = 0; i < n;) {
    size_t best = 1;
    for (size_t u = 1; u <= kMaxRunUnit && i + 2 * u <= n; ++u) {
      size_t len = u;
      while (i + len < n && s[i + len] == s[i + len - u]) ++len;
      len -= len % u;
      if (len >= 2 * u && len > best) best = len;
    }
    runs.push_back({i, i + best - 1});
    i += best;
  }
  if (runs.size() < 3) return false;
  bool identical = false;
  for (size_t a = 0; a < runs.size() && !identical; ++a)
    for (size_t b = a + 1; b < runs.size() && !identical; ++b)
      identical = runs[a].second - runs[a].first == runs[b].second - runs[b].first &&
                  std::equal(s.begin() + static_cast<std::ptrdiff_t>(runs[a].first),
                             s.begin() + static_cast<std::ptrdiff_t>(runs[a].second) + 1,
                             s.begin() + static_cast<std::ptrdiff_t>(runs[b].first));
  if (!identical) return false;
  for (size_t r = 0; r < runs.size(); ++r) {
    Frame p = piece(f, runs[r].first, runs[r].second, r == 0, r + 1 == runs.size());
    add_tag(p, "repeated_body_run");
    out.push_back(std::move(p));
  }
  return true;
}

using Seq = std::vector<int>;

// Memoised exact tiling with templates, longest first; >= 2 pieces, each shorter than the sequence.
bool exact_cover(const Seq& s, const std::vector<Seq>& templates, std::vector<size_t>& cuts) {
  const size_t n = s.size();
  std::vector<const Seq*> usable;
  for (const auto& t : templates)
    if (t.size() < n && !t.empty()) usable.push_back(&t);
  if (usable.empty()) return false;
  std::sort(usable.begin(), usable.end(), [](const Seq* a, const Seq* b) { return a->size() > b->size(); });
  std::vector<int8_t> dead(n + 1, 0);
  std::vector<size_t> path;
  auto dfs = [&](auto&& self, size_t pos) -> bool {
    if (pos == n) return true;
    if (dead[pos]) return false;
    for (const Seq* t : usable) {
      if (pos + t->size() > n || !std::equal(t->begin(), t->end(), s.begin() + static_cast<std::ptrdiff_t>(pos))) continue;
      path.push_back(pos + t->size());
      if (self(self, pos + t->size())) return true;
      path.pop_back();
    }
    dead[pos] = 1;
    return false;
  };
  if (!dfs(dfs, 0) || path.size() < 2) return false;
  cuts = path;
  return true;
}

size_t longest_match_at(const Seq& s, size_t pos, const std::vector<Seq>& templates) {
  size_t best = 0;
  for (const auto& t : templates)
    if (t.size() < s.size() && t.size() > best && pos + t.size() <= s.size() &&
        std::equal(t.begin(), t.end(), s.begin() + static_cast<std::ptrdiff_t>(pos)))
      best = t.size();
  return best;
}

size_t longest_match_ending(const Seq& s, size_t end, const std::vector<Seq>& templates) {
  size_t best = 0;
  for (const auto& t : templates)
    if (t.size() < s.size() && t.size() > best && t.size() <= end &&
        std::equal(t.begin(), t.end(), s.begin() + static_cast<std::ptrdiff_t>(end - t.size())))
      best = t.size();
  return best;
}

struct Templates {
  std::vector<Seq> regime_recurring, core_recurring, boundary_seed, regime_seen, core_seen;
  std::map<Seq, int> regime_count;
};

Templates collect_templates(const std::vector<Frame>& frames) {
  Templates t;
  std::map<Seq, int> core_count, boundary_count;
  for (const auto& f : frames) {
    if (f.layers.size() <= 1) continue;
    ++t.regime_count[regime_seq(f)];
    ++core_count[core_seq(f)];
    bool attention = false;
    for (const auto& l : f.layers) attention = attention || l.primary_attention;
    if (attention && f.selection_after) ++boundary_count[boundary_seq(f)];
  }
  for (const auto& [s, n] : t.regime_count) {
    t.regime_seen.push_back(s);
    if (n >= 2) t.regime_recurring.push_back(s);
  }
  for (const auto& [s, n] : core_count) {
    t.core_seen.push_back(s);
    if (n >= 2) t.core_recurring.push_back(s);
  }
  for (const auto& [s, n] : boundary_count)
    if (n >= 2) t.boundary_seed.push_back(s);
  return t;
}

void split_at(const Frame& f, const std::vector<size_t>& cuts, const char* tag, std::vector<Frame>& out) {
  size_t begin = 0;
  for (size_t i = 0; i < cuts.size(); ++i) {
    Frame p = piece(f, begin, cuts[i] - 1, begin == 0, cuts[i] == f.layers.size());
    add_tag(p, tag);
    out.push_back(std::move(p));
    begin = cuts[i];
  }
}

// Template recurrence is the evidence: a frame whose sequence does not itself recur is tiled with
// recurring templates, with the reference's fallbacks; a partial cover leaves a residual frame.
bool split_frames_by_exact_templates(const Frame& f, const Templates& t, std::vector<Frame>& out) {
  const size_t n = f.layers.size();
  if (n < 2 || std::find(f.tags.begin(), f.tags.end(), "exact_regime_split") != f.tags.end()) return false;
  const Seq regime = regime_seq(f), core = core_seq(f), boundary = boundary_seq(f);
  auto it = t.regime_count.find(regime);
  if (it != t.regime_count.end() && it->second >= 2) return false;  // the frame itself recurs
  std::vector<size_t> cuts;
  if (exact_cover(regime, t.regime_recurring, cuts) || exact_cover(core, t.core_recurring, cuts) ||
      exact_cover(boundary, t.boundary_seed, cuts) || exact_cover(regime, t.regime_seen, cuts) ||
      exact_cover(core, t.core_seen, cuts)) {
    split_at(f, cuts, "exact_template_cover", out);
    return true;
  }
  // greedy prefix cover, residual at the end (recurring templates first, then any seen sequence)
  const std::vector<Seq>& pool = !t.regime_recurring.empty() ? t.regime_recurring : t.regime_seen;
  size_t pos = 0;
  std::vector<size_t> prefix_cuts;
  while (pos < n) {
    const size_t m = longest_match_at(regime, pos, pool);
    if (m == 0) break;
    pos += m;
    prefix_cuts.push_back(pos);
  }
  if (!prefix_cuts.empty() && pos < n) {
    split_at(f, prefix_cuts, "exact_template_cover", out);
    Frame r = piece(f, pos, n - 1, false, true);
    r.residual = true;
    add_tag(r, "exact_template_prefix_residual");
    out.push_back(std::move(r));
    return true;
  }
  // suffix cover, residual at the start
  size_t end = n;
  std::vector<size_t> suffix_starts;
  while (end > 0) {
    const size_t m = longest_match_ending(regime, end, pool);
    if (m == 0) break;
    end -= m;
    suffix_starts.push_back(end);
  }
  if (!suffix_starts.empty() && end > 0) {
    Frame r = piece(f, 0, end - 1, true, false);
    r.residual = true;
    add_tag(r, "exact_template_suffix_residual");
    out.push_back(std::move(r));
    std::reverse(suffix_starts.begin(), suffix_starts.end());
    std::vector<size_t> cut_list(suffix_starts.begin() + 1, suffix_starts.end());
    cut_list.push_back(n);
    Frame rest = piece(f, end, n - 1, false, true);
    for (auto& ccut : cut_list) ccut -= end;
    split_at(rest, cut_list, "exact_template_cover", out);
    return true;
  }
  return false;
}

// A no-attention frame cut into chunks of an observed attention frame's length, when each chunk's
// coarse role counts fit within that frame's.
struct ObservedMain {
  size_t length;
  RoleCounts roles;
};

// The attention frames' lengths and coarse role counts, distinct, in first-seen order.
std::vector<ObservedMain> observed_mains(const std::vector<Frame>& frames) {
  std::vector<ObservedMain> out;
  for (const auto& f : frames) {
    bool attention = false;
    for (const auto& l : f.layers) attention = attention || l.primary_attention;
    if (!attention || f.layers.empty()) continue;
    ObservedMain m{f.layers.size(), coarse_counts(f.layers, 0, f.layers.size() - 1)};
    bool seen = false;
    for (const auto& o : out) seen = seen || (o.length == m.length && o.roles == m.roles);
    if (!seen) out.push_back(m);
  }
  return out;
}

bool split_no_attention_frames_by_observed_main_lengths(const Frame& f, const std::vector<ObservedMain>& mains,
                                                        std::vector<Frame>& out) {
  const size_t n = f.layers.size();
  for (const auto& l : f.layers)
    if (l.primary_attention) return false;
  if (n < 2) return false;
  for (const auto& ref : mains) {
    const size_t len = ref.length;
    if (len < 1 || len >= n || n % len != 0) continue;
    const RoleCounts& rc = ref.roles;
    bool fits = true;
    for (size_t i = 0; i < n && fits; i += len) fits = fits_within(coarse_counts(f.layers, i, i + len - 1), rc);
    if (!fits) continue;
    std::vector<size_t> cuts;
    for (size_t i = len; i <= n; i += len) cuts.push_back(i);
    split_at(f, cuts, "observed_main_length_split", out);
    return true;
  }
  // otherwise "main chunks + a shorter suffix"
  for (const auto& ref : mains) {
    const size_t len = ref.length;
    if (len < 1 || len >= n || n % len == 0) continue;
    bool fits = true;
    for (size_t i = 0; i < n && fits; i += len) fits = fits_within(coarse_counts(f.layers, i, std::min(n, i + len) - 1), ref.roles);
    if (!fits) continue;
    std::vector<size_t> cuts;
    for (size_t i = len; i < n; i += len) cuts.push_back(i);
    cuts.push_back(n);
    split_at(f, cuts, "observed_main_length_split_with_suffix", out);
    return true;
  }
  return false;
}

}  // namespace

std::vector<Frame> frames_from_selection(Ctx& c, std::vector<Layer> layers) {
  std::vector<Frame> frames;
  if (layers.empty()) return frames;
  auto sel_before_first = [&](uint32_t first_anchor) {
    return !c.selection_rows.empty() && c.selection_rows.front() < first_anchor;
  };
  frames.emplace_back();
  frames.back().selection_before = sel_before_first(layers.front().first_anchor);
  uint32_t prev_last_anchor = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const uint32_t last_anchor = layers[i].last_anchor;
    if (i > 0 && c.selection_between(prev_last_anchor, layers[i].first_anchor)) {
      frames.back().selection_after = true;
      frames.emplace_back();
      frames.back().selection_before = true;
    }
    frames.back().layers.push_back(std::move(layers[i]));
    prev_last_anchor = last_anchor;
  }
  frames.back().selection_after =
      !c.selection_rows.empty() && c.selection_rows.back() > frames.back().layers.back().last_anchor;
  return frames;
}

std::vector<Frame> split_composite_frames(Ctx& c, std::vector<Frame> frames) {
  // 1. per-frame repairs
  std::vector<Frame> stage1;
  for (auto& f : frames) {
    merge_exact_attention_subunits(c, f);
    std::vector<Frame> parts;
    if (!split_frame_by_regime(c, f, parts)) parts.push_back(std::move(f));
    for (auto& p : parts) {
      if (!merge_adjacent_attention_pair_single_moe(c, p) && !merge_exact_moe_subunits(c, p)) merge_moe_phase_groups(c, p);
      stage1.push_back(std::move(p));
    }
  }
  // 2. regime split again, then the attention-prefix / MoE-suffix cut
  std::vector<Frame> stage2;
  for (auto& f : stage1) {
    std::vector<Frame> parts;
    if (!split_frame_by_regime(c, f, parts)) parts.push_back(std::move(f));
    for (auto& p : parts) split_attention_prefix_moe_suffix(p, stage2);
  }
  // 3-4. merges of neighbours without a selection row between them
  merge_adjacent_same_core_frames(stage2);
  merge_dense_prefix_with_moe_suffix(c, stage2);
  // 5. until stable
  for (int round = 0; round < 16; ++round) {
    std::vector<Frame> next;
    next.reserve(stage2.size());
    const Templates templates = collect_templates(stage2);
    const std::vector<ObservedMain> mains = observed_mains(stage2);
    bool changed = false;
    for (auto& f : stage2) {
      std::vector<Frame> parts;
      if (split_frame_by_regime(c, f, parts) || split_frame_by_repeated_body_runs(f, parts) ||
          split_frames_by_exact_templates(f, templates, parts) ||
          split_no_attention_frames_by_observed_main_lengths(f, mains, parts)) {
        changed = true;
        for (auto& p : parts) next.push_back(std::move(p));
      } else {
        next.push_back(std::move(f));
      }
    }
    stage2 = std::move(next);
    if (!changed) break;
  }
  return stage2;
}

}  // namespace ascprof::analysis::seg
