#include "ascprof/analysis/classify.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ascprof/common/blake2b.hpp"
#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {

namespace {

using model::BlockKind;

constexpr uint32_t kNoPair = std::numeric_limits<uint32_t>::max();
constexpr uint8_t kAttentionEvent = 1;
constexpr uint8_t kMoeEvent = 2;
constexpr uint8_t kAicpuEvent = 4;

// Python's json.dumps(..., ensure_ascii=False) string form, byte for byte: only '"', '\\' and C0
// controls are escaped (\b \f \n \r \t short, others \u00xx lower-case); everything else, DEL and
// non-ASCII bytes included, passes through. json_escape_append is not usable here: it escapes '<'
// and rewrites invalid UTF-8, either of which would change the hash. (Invalid UTF-8 cannot occur in
// the reference's str values; we hash such bytes as they are.)
void append_py_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

// The compact JSON `[structure, label, [[name_key, shape_sig], ...]]` of one scope, built in a
// buffer that is reused across scopes so the per-row cost is one append and no allocation.
class SignatureText {
 public:
  void begin(std::string_view structure, std::string_view label) {
    buf_.clear();
    buf_ += '[';
    append_py_json_string(buf_, structure);
    buf_ += ',';
    append_py_json_string(buf_, label);
    buf_ += ",[";
    pairs_ = 0;
  }
  /// `pair_json` is an already-rendered `["key","sig"]`.
  void add_rendered(std::string_view pair_json) {
    if (pairs_++ != 0) buf_ += ',';
    buf_.append(pair_json);
  }
  void add(std::string_view name_key, std::string_view shape_sig) {
    if (pairs_++ != 0) buf_ += ',';
    buf_ += '[';
    append_py_json_string(buf_, name_key);
    buf_ += ',';
    append_py_json_string(buf_, shape_sig);
    buf_ += ']';
  }
  uint32_t pairs() const { return pairs_; }
  std::string finish_id(std::string_view prefix, std::string_view member_id) {
    std::string id(prefix);
    if (pairs_ == 0) {
      id += "_unknown_shape_";
      id += blake2b_hex(member_id, 6);
      return id;
    }
    buf_ += "]]";
    id += '_';
    id += blake2b_hex(buf_, 8);
    return id;
  }

 private:
  std::string buf_;
  uint32_t pairs_ = 0;
};

// Every shape-bearing row's (name_key, shape_signature) pair, rendered once as JSON. Distinct pairs
// are few (thousands), so they are deduplicated and rows point at them; block, layer and step scopes
// all read the same per-row table (the reference's shared `_rank_pair_index`).
struct PairTable {
  std::vector<uint32_t> pair_of_row;  // row -> pair index, kNoPair when the row has no shape
  std::string arena;                  // rendered pairs back to back
  std::vector<uint32_t> offset{0};    // pair i = arena[offset[i], offset[i + 1])

  std::string_view pair(uint32_t i) const {
    return std::string_view(arena).substr(offset[i], offset[i + 1] - offset[i]);
  }
};

PairTable build_pair_table(size_t rows, const NormalizedKernels& nk, const StringPool& pool) {
  PairTable t;
  t.pair_of_row.assign(rows, kNoPair);
  std::unordered_map<uint64_t, uint32_t> index;
  for (size_t r = 0; r < rows; ++r) {
    const StrId sig = nk.shape_signature[r];
    if (sig == 0 || pool.view(sig).empty()) continue;
    const StrId key = nk.taxa[nk.taxon[r]].name_key;
    auto [it, inserted] =
        index.try_emplace(static_cast<uint64_t>(key) << 32 | sig, static_cast<uint32_t>(t.offset.size() - 1));
    if (inserted) {
      t.arena += '[';
      append_py_json_string(t.arena, pool.view(key));
      t.arena += ',';
      append_py_json_string(t.arena, pool.view(sig));
      t.arena += ']';
      t.offset.push_back(static_cast<uint32_t>(t.arena.size()));
    }
    t.pair_of_row[r] = it->second;
  }
  return t;
}

// Inclusive row range clamped to the table; empty when lo > hi.
struct RowRange {
  int64_t lo = 0, hi = -1;
  bool empty() const { return lo > hi; }
};

RowRange clamp_range(uint32_t row_start, uint32_t row_end, size_t rows) {
  RowRange r;
  r.lo = row_start;
  r.hi = std::min<int64_t>(row_end, static_cast<int64_t>(rows) - 1);
  return r;
}

// Class ids of one scope level (one prefix). Scopes repeat massively (every layer of every step
// of a rank is one of a handful of classes), and BLAKE2b over the rendered JSON of every scope
// would dominate the stage (~40 bytes per row per level). So the pair-index sequence of a scope,
// with its structure and label, is memoised: a repeat costs one cheap hash and an exact compare
// (no collision can merge different scopes), and BLAKE2b runs once per distinct scope.
class ScopeIds {
 public:
  ScopeIds(std::string_view prefix, const PairTable& pairs) : prefix_(prefix), pairs_(pairs) {}

  void begin() { seq_.clear(); }
  void add_range(RowRange range) {
    for (int64_t r = range.lo; r <= range.hi; ++r) {
      const uint32_t p = pairs_.pair_of_row[static_cast<size_t>(r)];
      if (p != kNoPair) seq_.push_back(p);
    }
  }
  uint32_t pairs() const { return static_cast<uint32_t>(seq_.size()); }

  std::string finish_id(std::string_view structure, std::string_view label, std::string_view member_id) {
    if (seq_.empty()) return std::string(prefix_) + "_unknown_shape_" + blake2b_hex(member_id, 6);  // singleton
    uint64_t h = mix(structure_hash(structure), std::hash<std::string_view>{}(label));
    for (const uint32_t p : seq_) h = mix(h, p);
    auto& bucket = memo_[h];
    for (const uint32_t e : bucket) {
      const Entry& m = entries_[e];
      if (m.seq == seq_ && m.structure == structure && m.label == label) return m.id;
    }
    text_.begin(structure, label);
    for (const uint32_t p : seq_) text_.add_rendered(pairs_.pair(p));
    bucket.push_back(static_cast<uint32_t>(entries_.size()));
    entries_.push_back({std::string(structure), std::string(label), seq_, text_.finish_id(prefix_, member_id)});
    return entries_.back().id;
  }

 private:
  // Layer structures are the rank's interned signatures (hundreds of bytes, shared by thousands of
  // layers): hash each distinct string object once.
  uint64_t structure_hash(std::string_view structure) {
    const auto key = std::make_pair(structure.data(), structure.size());
    auto it = structure_hashes_.find(key);
    if (it != structure_hashes_.end()) return it->second;
    const uint64_t h = std::hash<std::string_view>{}(structure);
    if (structure_hashes_.size() < 4096) structure_hashes_.emplace(key, h);
    return h;
  }
  struct PtrHash {
    size_t operator()(const std::pair<const char*, size_t>& k) const {
      return std::hash<const void*>{}(k.first) ^ (k.second * 0x9E3779B97F4A7C15ULL);
    }
  };
  std::unordered_map<std::pair<const char*, size_t>, uint64_t, PtrHash> structure_hashes_;
  static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ULL;
  }
  struct Entry {
    std::string structure, label;
    std::vector<uint32_t> seq;
    std::string id;
  };
  std::string_view prefix_;
  const PairTable& pairs_;
  SignatureText text_;
  std::vector<uint32_t> seq_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> memo_;
};

struct RawBlock {
  BlockKind kind;
  uint32_t index;  // position in the reference's raw block list (empty blocks keep their slot)
  RowRange rows;
};

// decompose_layer_into_blocks (reference §2.4). Every row of the layer range is an event, so blocks
// are contiguous row ranges. Returns the raw blocks (possibly one empty) and whether the layer has
// attention events.
int decompose(RowRange layer, const std::vector<uint8_t>& taxon_flags, const std::vector<uint8_t>& op_flags,
              const NormalizedKernels& nk, RawBlock out[2], bool* has_attention) {
  bool attn = false, moe = false;
  int64_t last_attn = -1, first_moe = -1, aicpu = 0;
  for (int64_t r = layer.lo; r <= layer.hi; ++r) {
    const auto row = static_cast<size_t>(r);
    const uint8_t f = taxon_flags[nk.taxon[row]] | op_flags[nk.op_type[row]];
    if (f & kAttentionEvent) {
      attn = true;
      last_attn = r;
    }
    if ((f & kMoeEvent) && !moe) {
      moe = true;
      first_moe = r;
    }
    if (f & kAicpuEvent) ++aicpu;
  }
  *has_attention = attn;
  const int64_t n = layer.hi - layer.lo + 1;
  if (!attn && !moe) {
    out[0] = {aicpu >= std::max<int64_t>(1, n / 2) ? BlockKind::kAicpu : BlockKind::kFfn, 0, layer};
    return 1;
  }
  if (!attn) {
    out[0] = {BlockKind::kMoe, 0, layer};
    return 1;
  }
  if (!moe) {
    out[0] = {BlockKind::kAttention, 0, {layer.lo, last_attn}};
    out[1] = {BlockKind::kFfn, 1, {last_attn + 1, layer.hi}};
    return 2;
  }
  // Non-negative operands, so integer division is Python's floor division.
  const int64_t split = last_attn < first_moe ? (last_attn + first_moe) / 2 : first_moe - 1;
  out[0] = {BlockKind::kAttention, 0, {layer.lo, split}};
  out[1] = {BlockKind::kMoe, 1, {split + 1, layer.hi}};
  return 2;
}

struct ClassIndex {
  std::unordered_map<std::string, uint32_t> by_id;

  // Returns the class index for `id`, creating it (metadata from this first member, as the
  // reference's setdefault does) when new, and records `member`.
  template <class Init>
  uint32_t add(std::vector<model::ShapeClass>& classes, std::string id, uint32_t member, uint32_t pairs, Init init) {
    auto [it, inserted] = by_id.try_emplace(id, static_cast<uint32_t>(classes.size()));
    if (inserted) {
      model::ShapeClass c;
      c.class_id = std::move(id);
      c.has_unknown_shape = pairs == 0;
      c.shape_pairs_count = pairs;
      init(c);
      classes.push_back(std::move(c));
    }
    classes[it->second].members.push_back(member);
    return it->second;
  }
};

}  // namespace

std::string class_signature_id(std::string_view prefix, std::string_view structure, std::string_view scope_label,
                               const std::vector<std::pair<std::string, std::string>>& pairs,
                               std::string_view member_id) {
  SignatureText text;
  text.begin(structure, scope_label);
  for (const auto& [key, sig] : pairs) text.add(key, sig);
  return text.finish_id(prefix, member_id);
}

model::RankClasses classify_rank(const model::RankStructure& structure, const model::KernelTable& kernels,
                                 const NormalizedKernels& normalized, const StringPool& pool,
                                 const knowledge::Knowledge& kb) {
  model::RankClasses out;
  const size_t rows = std::min({kernels.size(), kernels.dur_ns.size(), normalized.taxon.size(),
                                normalized.op_type.size(), normalized.shape_signature.size()});

  // Block-kind event predicates, resolved once per taxon and per op_type.
  const auto& vocab = kb.vocab;
  auto role_bit = [&](std::string_view name) {
    knowledge::RoleSet s;
    const int i = vocab.role_index(name);
    if (i >= 0) s.set(static_cast<size_t>(i));
    return s;
  };
  const knowledge::RoleSet attn_roles = role_bit("attention") | role_bit("attention_aux");
  const knowledge::RoleSet moe_roles = role_bit("moe");
  const knowledge::RoleSet aicpu_roles = role_bit("aicpu");
  std::vector<uint8_t> taxon_flags(normalized.taxa.size(), 0);
  for (size_t t = 0; t < normalized.taxa.size(); ++t) {
    const auto& roles = normalized.taxa[t].roles;
    taxon_flags[t] = static_cast<uint8_t>(((roles & attn_roles).any() ? kAttentionEvent : 0) |
                                          ((roles & moe_roles).any() ? kMoeEvent : 0) |
                                          ((roles & aicpu_roles).any() ? kAicpuEvent : 0));
  }
  std::vector<uint8_t> op_flags(256, 0);
  if (const int i = vocab.op_type_index("mix_comm_aiv"); i >= 0) op_flags[static_cast<size_t>(i)] |= kMoeEvent;
  if (const int i = vocab.op_type_index("aicpu"); i >= 0) op_flags[static_cast<size_t>(i)] |= kAicpuEvent;

  const PairTable pairs = build_pair_table(rows, normalized, pool);
  ScopeIds block_ids("blk_cls", pairs), layer_ids("lyr_cls", pairs), step_ids("stp_cls", pairs);

  // ---- blocks and block classes ----
  ClassIndex block_index;
  out.blocks.reserve(structure.layers.size() * 2);
  std::vector<uint32_t> first_block(structure.layers.size() + 1, 0);
  std::string label;
  for (size_t l = 0; l < structure.layers.size(); ++l) {
    const model::LayerSegment& layer = structure.layers[l];
    first_block[l] = static_cast<uint32_t>(out.blocks.size());
    const RowRange range = clamp_range(layer.row_start, layer.row_end, rows);
    if (range.empty()) continue;
    RawBlock raw[2];
    bool has_attention = false;
    const int raw_count = decompose(range, taxon_flags, op_flags, normalized, raw, &has_attention);
    // The reference sets the flag from its raw block list, which holds an attention entry whenever
    // the layer has attention events, even when the interleaved split leaves it empty.
    const bool companion = !has_attention;
    for (int b = 0; b < raw_count; ++b) {
      const RawBlock& rb = raw[b];
      if (rb.rows.empty()) continue;  // dropped, but its index stays taken (reference enumerate order)
      model::BlockSegment blk;
      blk.layer = static_cast<uint32_t>(l);
      blk.block_index = rb.index;
      blk.kind = rb.kind;
      blk.companion_layer = companion;
      blk.row_start = static_cast<uint32_t>(rb.rows.lo);
      blk.row_end = static_cast<uint32_t>(rb.rows.hi);
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
      for (int64_t r = rb.rows.lo; r <= rb.rows.hi; ++r) {
        const auto row = static_cast<size_t>(r);
        const int64_t s = kernels.start_ns[row];
        lo = std::min(lo, s);
        hi = std::max(hi, s + std::max<int64_t>(0, kernels.dur_ns[row]));
      }
      blk.start_ns = lo;
      blk.end_ns = hi;
      blk.event_count = static_cast<uint32_t>(rb.rows.hi - rb.rows.lo + 1);
      blk.block_id = stable_id("blk", {layer.layer_id, std::to_string(blk.block_index), model::block_kind_name(blk.kind),
                                       std::to_string(blk.row_start), std::to_string(blk.row_end)});

      // The reference's docs say a block class carries its parent layer's structure signature; its
      // code passes None, i.e. "" in the JSON. We follow the code so ids match.
      label = model::block_kind_name(blk.kind);
      label += companion ? "|companion=1" : "|companion=0";
      block_ids.begin();
      block_ids.add_range(rb.rows);
      const uint32_t n_pairs = block_ids.pairs();
      const uint32_t member = static_cast<uint32_t>(out.blocks.size());
      blk.block_class = block_index.add(out.block_classes, block_ids.finish_id("", label, blk.block_id), member, n_pairs,
                                        [&](model::ShapeClass& c) {
                                          c.scope_label = label;
                                          c.block_kind = blk.kind;
                                          c.companion_layer = companion;
                                        });
      out.blocks.push_back(std::move(blk));
    }
  }
  first_block[structure.layers.size()] = static_cast<uint32_t>(out.blocks.size());

  // ---- layer classes ----
  ClassIndex layer_index;
  out.layer_class.assign(structure.layers.size(), -1);
  std::vector<std::string> kinds, child_ids;
  for (size_t l = 0; l < structure.layers.size(); ++l) {
    const model::LayerSegment& layer = structure.layers[l];
    kinds.clear();
    child_ids.clear();
    bool companion = false;
    label.clear();
    for (uint32_t b = first_block[l]; b < first_block[l + 1]; ++b) {
      const model::BlockSegment& blk = out.blocks[b];
      if (b != first_block[l]) label += "->";
      label += model::block_kind_name(blk.kind);
      kinds.emplace_back(model::block_kind_name(blk.kind));
      child_ids.push_back(out.block_classes[blk.block_class].class_id);
      companion = companion || blk.companion_layer;
    }
    if (kinds.empty()) label = "empty";
    label += companion ? "|companion=1" : "|companion=0";
    layer_ids.begin();
    layer_ids.add_range(clamp_range(layer.row_start, layer.row_end, rows));
    const uint32_t n_pairs = layer_ids.pairs();
    out.layer_class[l] = static_cast<int32_t>(layer_index.add(
        out.layer_classes, layer_ids.finish_id(structure.signature(layer), label, layer.layer_id),
        static_cast<uint32_t>(l), n_pairs,
        [&](model::ShapeClass& c) {
          c.structure_signature = structure.signature(layer);
          c.scope_label = label;
          c.companion_layer = companion;
          c.block_kinds = kinds;
          c.child_class_ids = child_ids;
        }));
  }

  // ---- step classes ----
  // Layers of each segment in the reference's order: (start, row_start), stable.
  std::vector<uint32_t> layer_order(structure.layers.size());
  std::iota(layer_order.begin(), layer_order.end(), 0u);
  std::stable_sort(layer_order.begin(), layer_order.end(), [&](uint32_t a, uint32_t b) {
    const auto& la = structure.layers[a];
    const auto& lb = structure.layers[b];
    if (la.segment != lb.segment) return la.segment < lb.segment;
    if (la.start_ns != lb.start_ns) return la.start_ns < lb.start_ns;
    return la.row_start < lb.row_start;
  });
  ClassIndex step_index;
  out.step_class.assign(structure.segments.size(), -1);
  size_t cursor = 0;
  for (size_t s = 0; s < structure.segments.size(); ++s) {
    while (cursor < layer_order.size() && structure.layers[layer_order[cursor]].segment < s) ++cursor;
    const size_t seg_first = cursor;
    while (cursor < layer_order.size() && structure.layers[layer_order[cursor]].segment == s) ++cursor;
    const model::StepSegment& seg = structure.segments[s];
    if (seg.type != model::SegmentType::kStep) continue;
    const auto layer_count = static_cast<uint32_t>(cursor - seg_first);
    label = "layers=" + std::to_string(layer_count) + "|main=" + std::to_string(seg.main_layer_count);
    // The step range includes head/tail rows that belong to no layer, so its pairs come from the
    // rank-level table over the segment's rows, not from the layers.
    step_ids.begin();
    step_ids.add_range(clamp_range(seg.row_start, seg.row_end, rows));
    const uint32_t n_pairs = step_ids.pairs();
    out.step_class[s] = static_cast<int32_t>(step_index.add(
        out.step_classes, step_ids.finish_id(seg.structure_signature, label, seg.segment_id),
        static_cast<uint32_t>(s), n_pairs,
        [&](model::ShapeClass& c) {
          c.structure_signature = seg.structure_signature;
          c.scope_label = label;
          c.main_layer_count = seg.main_layer_count;
          c.layer_count = layer_count;
          c.step_family = seg.step_family;
          for (size_t i = seg_first; i < cursor; ++i) {
            const int32_t lc = out.layer_class[layer_order[i]];
            c.child_class_ids.push_back(lc >= 0 ? out.layer_classes[static_cast<size_t>(lc)].class_id : "");
          }
        }));
  }
  return out;
}

}  // namespace ascprof::analysis
