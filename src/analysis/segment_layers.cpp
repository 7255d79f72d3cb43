// Event predicates, anchor choice, layer building and layer keys (reference-analysis.md §2.2.1-2.2.3).
#include <algorithm>
#include <initializer_list>
#include <numeric>

#include "ascprof/common/join.hpp"
#include "segment_internal.hpp"

namespace ascprof::analysis::seg {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string lower_alnum(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch >= 'A' && ch <= 'Z') out += static_cast<char>(ch - 'A' + 'a');
    else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) out += ch;
  }
  return out;
}

}  // namespace

bool Ctx::duplicate(uint32_t a, uint32_t b) const {
  const TaxonEntry& ta = n.taxa[n.taxon[a]];
  const TaxonEntry& tb = n.taxa[n.taxon[b]];
  return k.name[a] == k.name[b] && k.stream_id[a] == k.stream_id[b] && k.start_ns[a] == k.start_ns[b] &&
         k.dur_ns[a] == k.dur_ns[b] && ta.roles == tb.roles && ta.categories == tb.categories;
}

bool Ctx::anchor_boundary_between(uint32_t a, uint32_t b) const {
  if (b <= a + 1) return false;
  auto it = std::upper_bound(anchor_boundary_rows.begin(), anchor_boundary_rows.end(), a);
  return it != anchor_boundary_rows.end() && *it < b;
}

bool Ctx::selection_between(uint32_t a, uint32_t b) const {
  if (b <= a + 1) return false;
  auto it = std::upper_bound(selection_rows.begin(), selection_rows.end(), a);
  return it != selection_rows.end() && *it < b;
}

bool Ctx::microbatch_boundary_between(uint32_t a, uint32_t b) const {
  if (b <= a + 1) return false;
  auto it = std::upper_bound(microbatch_boundary_rows.begin(), microbatch_boundary_rows.end(), a);
  return it != microbatch_boundary_rows.end() && *it < b;
}

uint32_t Ctx::layer_start(uint32_t lower, uint32_t first_anchor) const {
  // the last selection row before the first anchor moves the lower bound past it
  auto sit = std::lower_bound(selection_rows.begin(), selection_rows.end(), first_anchor);
  if (sit != selection_rows.begin() && *(sit - 1) >= lower) lower = *(sit - 1) + 1;
  // the latest boundary row inside [lower, first_anchor]
  auto bit = std::upper_bound(boundary_rows.begin(), boundary_rows.end(), first_anchor);
  if (bit != boundary_rows.begin() && *(bit - 1) >= lower) return *(bit - 1);
  return first_anchor;
}

void prepare_rows(Ctx& c) {
  const auto& vocab = c.kb.vocab;
  const auto& rules = c.kb.segmentation;
  c.role_attention = vocab.role_index("attention");
  c.role_attention_aux = vocab.role_index("attention_aux");
  c.role_moe = vocab.role_index("moe");
  c.role_compute = vocab.role_index("compute");
  c.role_communication = vocab.role_index("communication");
  c.role_normalization = vocab.role_index("normalization");
  c.role_block_head = vocab.role_index("block_head");
  c.role_selection = vocab.role_index("selection");
  c.role_aicpu = vocab.role_index("aicpu");
  c.cat_compute_matmul = vocab.category_index("compute.matmul");
  c.cat_moe_gating = vocab.category_index("moe.gating");
  auto has_role = [](const knowledge::RoleSet& s, int r) { return r >= 0 && s.test(static_cast<size_t>(r)); };

  // categories in alphabetical order, for "primary" = alphabetically smallest
  const auto& cats = vocab.categories();
  std::vector<int> order(cats.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return cats[static_cast<size_t>(a)] < cats[static_cast<size_t>(b)]; });
  c.cat_count.assign(cats.size(), 0);

  c.taxa.resize(c.n.taxa.size());
  for (size_t t = 0; t < c.n.taxa.size(); ++t) {
    const TaxonEntry& e = c.n.taxa[t];
    TaxonView& v = c.taxa[t];
    v.structural = (e.roles & rules.structural_roles).any();
    v.boundary = (e.roles & rules.boundary_roles).any();
    v.anchor_boundary = (e.roles & rules.anchor_boundary_roles).any();
    v.selection = (e.roles & rules.selection_roles).any();
    v.role_attention = has_role(e.roles, c.role_attention);
    v.role_moe = has_role(e.roles, c.role_moe);
    v.role_compute = has_role(e.roles, c.role_compute);
    v.role_communication = has_role(e.roles, c.role_communication);
    v.role_normalization = has_role(e.roles, c.role_normalization);
    v.role_block_head = has_role(e.roles, c.role_block_head);
    bool any_moe_cat = false;
    for (const int ci : order) {
      if (!e.categories.test(static_cast<size_t>(ci))) continue;
      const std::string& name = cats[static_cast<size_t>(ci)];
      if (v.primary_attention < 0 && starts_with(name, "attention.") && name.find(".metadata") == std::string::npos)
        v.primary_attention = ci;
      if (starts_with(name, "moe.")) {
        any_moe_cat = true;
        if (v.primary_moe < 0) v.primary_moe = ci;
        if (name == "moe.gating") v.gating = true;
        if (name == "moe.dispatch" || name == "moe.combine" || name == "moe.dispatch_expert_compute") v.moe_phase = true;
      }
      if (starts_with(name, "block_head")) v.has_block_head_category = true;
    }
    v.moe_anchor = v.role_moe && any_moe_cat;
    // anchor_kind, first match wins (§2.2.1)
    std::string kind;
    if (v.role_attention && v.primary_attention >= 0) kind = cats[static_cast<size_t>(v.primary_attention)];
    else if (v.role_moe && v.primary_moe >= 0) kind = cats[static_cast<size_t>(v.primary_moe)];
    else if (v.role_compute && c.cat_compute_matmul >= 0 && e.categories.test(static_cast<size_t>(c.cat_compute_matmul)))
      kind = "compute.matmul";
    else if (v.role_block_head) kind = "block_head";
    else if (v.role_normalization) kind = "normalization";
    const std::string key(c.pool.view(e.name_key));
    if (!kind.empty()) {
      v.anchor_kind = c.strings.id(kind);
      v.anchor_signature = c.strings.id(kind + ":" + key);
    } else {
      std::string sig;
      int shown = 0;
      for (const int ci : order)
        if (e.categories.test(static_cast<size_t>(ci)) && shown < 4) {
          if (shown++) sig += ',';
          sig += cats[static_cast<size_t>(ci)];
        }
      v.anchor_signature = c.strings.id(sig.empty() ? "unknown_anchor" : sig);
    }
    for (const int k : rules.microbatch_boundary_hccl_kinds)
      if (e.hccl_kind == k) v.microbatch_boundary = true;
    if (v.role_attention && !rules.backward_name_tokens.empty()) {
      const std::string folded = lower_alnum(c.pool.view(e.name));
      for (const auto& tok : rules.backward_name_tokens)
        if (folded.find(tok) != std::string::npos) v.backward = true;
    }
  }

  // Row lists with the adjacent-duplicate rule: a row is dropped when it duplicates the row right
  // before it; a row in between that fails the predicate resets the comparison.
  const uint32_t rows = static_cast<uint32_t>(c.rows);
  bool prev_boundary = false, prev_selection = false, prev_anchor_boundary = false;
  for (uint32_t r = 0; r < rows; ++r) {
    const TaxonView& v = c.tv(r);
    if (v.boundary) {
      if (!(prev_boundary && c.duplicate(r - 1, r))) c.boundary_rows.push_back(r);
    }
    if (v.selection) {
      if (!(prev_selection && c.duplicate(r - 1, r))) c.selection_rows.push_back(r);
    }
    if (v.anchor_boundary && !(prev_anchor_boundary && c.duplicate(r - 1, r))) c.anchor_boundary_rows.push_back(r);
    prev_boundary = v.boundary;
    prev_selection = v.selection;
    prev_anchor_boundary = v.anchor_boundary;
    if (v.microbatch_boundary) c.microbatch_boundary_rows.push_back(r);
  }
}

namespace {

// Candidates matching `pred`, adjacent duplicates removed among consecutive candidates.
template <class Pred>
std::vector<uint32_t> candidates(const Ctx& c, Pred pred) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < c.rows; ++r) {
    if (!pred(r)) continue;
    if (!out.empty() && c.duplicate(out.back(), r)) continue;
    out.push_back(r);
  }
  return out;
}

void choose_anchors(Ctx& c) {
  const auto& rules = c.kb.segmentation;
  const auto& cats = c.kb.vocab.categories();
  auto attention = candidates(c, [&](uint32_t r) {
    const TaxonView& v = c.tv(r);
    return v.role_attention && v.primary_attention >= 0;
  });
  if (!attention.empty()) {
    for (const int mla : rules.mla_first_categories) {
      std::vector<uint32_t> sel;
      for (const uint32_t r : attention)
        if (c.n.taxa[c.n.taxon[r]].categories.test(static_cast<size_t>(mla))) sel.push_back(r);
      if (!sel.empty()) {
        c.anchors = std::move(sel);
        c.anchor_family = cats[static_cast<size_t>(mla)];
        return;
      }
    }
    std::vector<uint32_t> sel;
    for (const uint32_t r : attention)
      if (!rules.companion_only.test(static_cast<size_t>(c.tv(r).primary_attention))) sel.push_back(r);
    if (!sel.empty()) {
      c.anchors = std::move(sel);
      c.anchor_family = "attention";
    } else {
      c.anchors = std::move(attention);
      c.anchor_family = "attention_companion_only";
    }
    return;
  }
  for (const auto& f : rules.fallbacks) {
    auto sel = candidates(c, [&](uint32_t r) {
      const TaxonEntry& e = c.n.taxa[c.n.taxon[r]];
      return e.roles.test(static_cast<size_t>(f.role)) && (f.category < 0 || e.categories.test(static_cast<size_t>(f.category)));
    });
    if (!sel.empty()) {
      c.anchors = std::move(sel);
      c.anchor_family = (f.category >= 0 ? "category:" + cats[static_cast<size_t>(f.category)] + "@" : std::string("role:")) +
                        c.kb.vocab.roles()[static_cast<size_t>(f.role)];
      return;
    }
  }
  c.anchor_family = "none";
}

}  // namespace

namespace {

uint64_t hash_content(const std::vector<uint32_t>& v) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const uint32_t x : v) {
    h ^= x;
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

// Builds the strings of a layer kind (only for a layer shape not seen before).
LayerKind make_kind(Ctx& c, const Layer& l, uint32_t roles, bool any_block_head_cat) {
  const auto& cats = c.kb.vocab.categories();
  LayerKind k;
  std::vector<std::string> anchor_sigs;
  if (l.anchor_end > l.anchor_begin) {
    for (uint32_t i = l.anchor_begin; i < l.anchor_end; ++i)
      anchor_sigs.push_back(c.strings.name(c.tv(c.anchors[i]).anchor_signature));
  } else {
    anchor_sigs.push_back(c.strings.name(c.tv(l.first_anchor).anchor_signature));
  }
  std::vector<std::string> attention, moe;
  for (const int ci : c.touched) {
    const std::string& name = cats[static_cast<size_t>(ci)];
    const std::string counted = name + "x" + std::to_string(c.cat_count[static_cast<size_t>(ci)]);
    if (starts_with(name, "attention.") && name.find(".metadata") == std::string::npos) {
      attention.push_back(counted);
      k.attention_categories.push_back(ci);
    } else if (starts_with(name, "moe.")) {
      moe.push_back(counted);
    }
  }
  auto has_role = [&](int r) { return r >= 0 && (roles >> r) & 1u; };
  // Terms in the reference's order (§2.2.3); attention_aux (attention.csa.*) is dead at HEAD and
  // no such category is declared, so the term never appears.
  const std::string t_anchors = "anchors:" + join(anchor_sigs, '+');
  const std::string t_attention = attention.empty() ? "" : "attention:" + join(attention, ',');
  std::string t_moe;
  if (!moe.empty()) t_moe = "moe:" + join(moe, ',');
  else if (has_role(c.role_compute)) t_moe = "ffn_or_dense_compute";
  std::string t_head;
  if (any_block_head_cat) t_head = "block_head";
  else if (has_role(c.role_normalization)) t_head = "normalization_no_visible_block_head";
  const bool selection = has_role(c.role_selection);
  const bool communication = has_role(c.role_communication);

  std::vector<std::string> all{t_anchors};
  std::vector<std::string> role_terms;
  for (const std::string* t : std::initializer_list<const std::string*>{&t_attention, &t_moe, &t_head})
    if (!t->empty()) role_terms.push_back(*t);
  for (const auto& t : role_terms) all.push_back(t);
  const std::vector<std::string> regime = all;
  if (selection) all.push_back("selection");
  if (communication) all.push_back("communication");
  k.signature = c.strings.id(join(all, '|'));
  k.regime = c.strings.id(join(regime, '|'));
  k.role_key = c.strings.id(join(role_terms, '|'));
  std::vector<std::string> core_terms = role_terms;
  std::sort(core_terms.begin(), core_terms.end());
  k.core = c.strings.id(join(core_terms, '|'));
  std::vector<std::string> attention_set;
  for (const int ci : k.attention_categories) attention_set.push_back(cats[static_cast<size_t>(ci)]);
  std::sort(k.attention_categories.begin(), k.attention_categories.end());  // by id: subset checks use std::includes
  k.attention_set = c.strings.id(join(attention_set, ','));
  const std::string boundary = attention_set.empty() ? join(core_terms, '|') : "attention:" + join(attention_set, ',');
  k.boundary = c.strings.id(boundary);
  k.anchor_seq = c.strings.id(t_anchors);
  for (const auto& t : core_terms) k.terms.push_back(c.strings.id(t));
  k.terms.push_back(c.strings.id("boundary=" + boundary));
  std::sort(k.terms.begin(), k.terms.end());
  k.terms.erase(std::unique(k.terms.begin(), k.terms.end()), k.terms.end());
  // "coarse" role counts compare structure only: communication, selection, sampling, quant and
  // aicpu rows (a step's leading collective, the argmax) must not make a speculative layer look foreign
  k.role_presence = roles & static_cast<uint32_t>(c.kb.segmentation.structural_roles.to_ulong());
  k.primary_attention = !attention.empty();
  k.has_moe = !moe.empty();
  k.dense_compute = has_role(c.role_compute) && moe.empty();
  k.selection = selection;
  return k;
}

}  // namespace

void finalize_layer(Ctx& c, Layer& l) {
  const auto& cats = c.kb.vocab.categories();
  c.touched.clear();
  uint32_t roles = 0;
  bool any_block_head_cat = false;
  l.gating = 0;
  l.moe_phase = false;
  l.moe_anchor_count = 0;
  int64_t last_moe = -1;
  for (uint32_t r = l.start; r <= l.end; ++r) {
    const uint32_t t = c.n.taxon[r];
    const TaxonEntry& e = c.n.taxa[t];
    const TaxonView& v = c.taxa[t];
    roles |= static_cast<uint32_t>(e.roles.to_ulong());
    any_block_head_cat = any_block_head_cat || v.has_block_head_category;
    if (v.gating) ++l.gating;
    l.moe_phase = l.moe_phase || v.moe_phase;
    // MoE anchors in the layer (role moe with a moe.* category), adjacent duplicates removed
    if (v.moe_anchor && !(last_moe >= 0 && c.duplicate(static_cast<uint32_t>(last_moe), r))) {
      last_moe = r;
      ++l.moe_anchor_count;
    }
    if (!e.categories.any()) continue;
    for (size_t ci = e.categories._Find_first(); ci < e.categories.size(); ci = e.categories._Find_next(ci))
      if (c.cat_count[ci]++ == 0) c.touched.push_back(static_cast<int>(ci));
  }
  if (l.anchor_end > l.anchor_begin) {
    l.first_anchor = c.anchors[l.anchor_begin];
    l.last_anchor = c.anchors[l.anchor_end - 1];
  }
  l.attention_stream = c.k.stream_id[l.first_anchor];
  std::sort(c.touched.begin(), c.touched.end(), [&](int a, int b) { return cats[static_cast<size_t>(a)] < cats[static_cast<size_t>(b)]; });

  // the layer's shape: anchor signatures, category counts, roles
  auto& key = c.content;
  key.clear();
  if (l.anchor_end > l.anchor_begin)
    for (uint32_t i = l.anchor_begin; i < l.anchor_end; ++i) key.push_back(static_cast<uint32_t>(c.tv(c.anchors[i]).anchor_signature));
  else
    key.push_back(static_cast<uint32_t>(c.tv(l.first_anchor).anchor_signature));
  key.push_back(0xFFFFFFFFu);
  for (const int ci : c.touched) {
    key.push_back(static_cast<uint32_t>(ci));
    key.push_back(c.cat_count[static_cast<size_t>(ci)]);
  }
  key.push_back(0xFFFFFFFFu);
  key.push_back(roles);
  key.push_back(any_block_head_cat ? 1u : 0u);
  auto& bucket = c.kind_index[hash_content(key)];
  int kind = -1;
  for (const int k : bucket)
    if (c.kind_content[static_cast<size_t>(k)] == key) kind = k;
  if (kind < 0) {
    kind = static_cast<int>(c.kinds.size());
    c.kinds.push_back(make_kind(c, l, roles, any_block_head_cat));
    c.kind_content.push_back(key);
    bucket.push_back(kind);
  }
  for (const int ci : c.touched) c.cat_count[static_cast<size_t>(ci)] = 0;
  const LayerKind& k = c.kinds[static_cast<size_t>(kind)];
  l.kind = kind;
  l.signature = k.signature;
  l.regime = k.regime;
  l.role_key = k.role_key;
  l.core = k.core;
  l.boundary = k.boundary;
  l.anchor_seq = k.anchor_seq;
  l.attention_set = k.attention_set;
  l.role_presence = k.role_presence;
  l.primary_attention = k.primary_attention;
  l.has_moe = k.has_moe;
  l.dense_compute = k.dense_compute;
  l.selection = k.selection;
}

Layer merge_layers(Ctx& c, const std::vector<Layer>& src, size_t first, size_t last) {
  Layer m;
  m.start = src[first].start;
  m.end = src[last].end;
  // consecutive layers hold consecutive anchor ranges
  m.anchor_begin = src[first].anchor_begin;
  m.anchor_end = src[last].anchor_end;
  m.first_anchor = src[first].first_anchor;
  m.last_anchor = src[last].last_anchor;
  finalize_layer(c, m);
  return m;
}

namespace {

// split_coarse_layers_by_moe (§2.2.3): a layer holding MoE anchor groups separated by boundary rows
// is split at each later group's start.
void split_by_moe(Ctx& c, std::vector<Layer>& layers) {
  std::vector<Layer> out;
  out.reserve(layers.size());
  auto boundary_between = [&](uint32_t a, uint32_t b) {
    auto it = std::upper_bound(c.boundary_rows.begin(), c.boundary_rows.end(), a);
    return it != c.boundary_rows.end() && *it < b;
  };
  for (Layer& l : layers) {
    if (l.moe_anchor_count < 2) {
      out.push_back(std::move(l));
      continue;
    }
    std::vector<std::pair<uint32_t, uint32_t>> groups;  // first, last moe anchor row
    int64_t last = -1;
    for (uint32_t r = l.start; r <= l.end; ++r) {
      if (!c.tv(r).moe_anchor) continue;
      if (last >= 0 && c.duplicate(static_cast<uint32_t>(last), r)) continue;
      if (groups.empty() || boundary_between(groups.back().second, r)) groups.push_back({r, r});
      else groups.back().second = r;
      last = r;
    }
    if (groups.size() < 2) {
      out.push_back(std::move(l));
      continue;
    }
    std::vector<uint32_t> starts{l.start};
    for (size_t g = 1; g < groups.size(); ++g) {
      const uint32_t s = c.layer_start(groups[g - 1].second + 1, groups[g].first);
      if (s > starts.back()) starts.push_back(s);
    }
    for (size_t i = 0; i < starts.size(); ++i) {
      Layer part;
      part.start = starts[i];
      part.end = i + 1 < starts.size() ? starts[i + 1] - 1 : l.end;
      part.anchor_begin = l.anchor_begin;
      while (part.anchor_begin < l.anchor_end && c.anchors[part.anchor_begin] < part.start) ++part.anchor_begin;
      part.anchor_end = part.anchor_begin;
      while (part.anchor_end < l.anchor_end && c.anchors[part.anchor_end] <= part.end) ++part.anchor_end;
      if (part.anchor_end == part.anchor_begin) {  // a MoE group split off an attention layer: its MoE anchor anchors it
        part.first_anchor = part.last_anchor = part.start;
        for (const auto& g : groups)
          if (g.first >= part.start && g.first <= part.end) {
            part.first_anchor = part.last_anchor = g.first;
            break;
          }
      }
      finalize_layer(c, part);
      out.push_back(std::move(part));
    }
  }
  layers = std::move(out);
}

}  // namespace

std::vector<Layer> build_layers(Ctx& c) {
  choose_anchors(c);
  std::vector<Layer> layers;
  if (c.anchors.empty()) return layers;
  // anchor grouping: same kind and no anchor-boundary row strictly between
  for (uint32_t i = 0; i < c.anchors.size(); ++i) {
    const uint32_t a = c.anchors[i];
    if (!layers.empty()) {
      const uint32_t prev = c.anchors[i - 1];
      if (c.tv(prev).anchor_kind == c.tv(a).anchor_kind && !c.anchor_boundary_between(prev, a)) {
        layers.back().anchor_end = i + 1;
        continue;
      }
    }
    Layer l;
    l.anchor_begin = i;
    l.anchor_end = i + 1;
    layers.push_back(l);
  }
  for (size_t g = 0; g < layers.size(); ++g) {
    const uint32_t lower = g == 0 ? 0u : c.anchors[layers[g - 1].anchor_end - 1] + 1;
    layers[g].start = c.layer_start(lower, c.anchors[layers[g].anchor_begin]);
  }
  for (size_t g = 0; g < layers.size(); ++g) {
    layers[g].end = g + 1 < layers.size() ? layers[g + 1].start - 1 : static_cast<uint32_t>(c.rows - 1);
    finalize_layer(c, layers[g]);
  }
  split_by_moe(c, layers);
  return layers;
}

}  // namespace ascprof::analysis::seg
