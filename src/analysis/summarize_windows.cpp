// Window part of the summarize stage (reference-analysis.md §2.5.1-§2.5.3, §2.5.9): window metrics,
// segment / layer / rank rows, anomaly tags and step anatomy.
#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {
namespace {

using model::kAbsentI64;

struct Interval {
  int64_t start, end;
  uint32_t row;
};

// The interval merge of §2.5.1 over events fed in (start, end, row) order, or in plain row order
// when starts never decrease: the merge outcome does not depend on the order of events with equal
// starts except for a run's first event, which the reference takes as the smallest (end, row) and
// which `feed` corrects while the run is open. A gap's after_row is the first event of the run it
// opens, so a gap is emitted only when that run closes.
class Merger {
 public:
  // `heap` is reusable scratch for the top-N gaps (worst on top); `top` may be 0.
  Merger(size_t top, std::vector<model::Bubble>* heap) : top_(top), heap_(heap) { heap_->clear(); }

  // Forgets everything fed so far (same top-N setting).
  void reset() { *this = Merger(top_, heap_); }

  void feed(int64_t s, int64_t e, uint32_t row) {
    if (!open_) {
      open_ = true;
      begin(s, e, row);
      return;
    }
    if (s <= run_end_) {
      if (s == run_start_ && e < first_end_) {
        first_row_ = row;
        first_end_ = e;
      }
      if (e > run_end_ || (e == run_end_ && row > last_row_)) {
        run_end_ = e;
        last_row_ = row;
      }
      return;
    }
    close_run();
    has_pending_ = true;
    pending_ = model::Bubble{gap_count_, run_end_, s, last_row_, 0};
    begin(s, e, row);
  }

  void finish() {
    if (open_) close_run();
    open_ = false;
  }

  int64_t busy = 0;
  int64_t gap_total = 0, gap_max = 0;
  uint32_t gap_count() const { return gap_count_; }

  // Moves the kept gaps into `out`, largest first (duration desc, then start).
  void take_top(std::vector<model::Bubble>& out) {
    std::sort_heap(heap_->begin(), heap_->end(), better);
    out.assign(heap_->begin(), heap_->end());
  }

 private:
  static bool better(const model::Bubble& a, const model::Bubble& b) {
    const int64_t da = a.end_ns - a.start_ns, db = b.end_ns - b.start_ns;
    return da != db ? da > db : a.start_ns < b.start_ns;
  }

  void begin(int64_t s, int64_t e, uint32_t row) {
    run_start_ = s;
    run_end_ = e;
    first_row_ = last_row_ = row;
    first_end_ = e;
  }

  void close_run() {
    busy += run_end_ - run_start_;
    if (!has_pending_) return;
    has_pending_ = false;
    pending_.after_row = first_row_;
    const int64_t d = pending_.end_ns - pending_.start_ns;
    gap_total += d;
    gap_max = std::max(gap_max, d);
    ++gap_count_;
    if (top_ == 0) return;
    if (heap_->size() < top_) {
      heap_->push_back(pending_);
      std::push_heap(heap_->begin(), heap_->end(), better);
    } else if (better(pending_, heap_->front())) {
      std::pop_heap(heap_->begin(), heap_->end(), better);
      heap_->back() = pending_;
      std::push_heap(heap_->begin(), heap_->end(), better);
    }
  }

  size_t top_;
  std::vector<model::Bubble>* heap_;
  bool open_ = false, has_pending_ = false;
  int64_t run_start_ = 0, run_end_ = 0, first_end_ = 0;
  uint32_t first_row_ = 0, last_row_ = 0;
  uint32_t gap_count_ = 0;
  model::Bubble pending_;
};

// Per-event flags counted for segment and layer rows.
struct FlagCounts {
  uint64_t attention = 0, moe = 0, communication = 0;
};

// Reusable buffers and per-taxon caches for many windows over one rank (one per thread).
class WindowScratch {
 public:
  explicit WindowScratch(const SummarizeInput& in) : in_(in) {
    const auto* norm = in.normalized;
    if (norm != nullptr && in.kernels != nullptr && norm->taxon.size() == in.kernels->size()) {
      taxa_ok_ = true;
      taxon_stamp_.assign(norm->taxa.size(), 0);
      taxon_count_.assign(norm->taxa.size(), 0);
      taxon_type_slot_.assign(norm->taxa.size(), -1);
    }
    if (in.kb != nullptr) {
      const auto& vocab = in.kb->vocab;
      role_names_ = &vocab.roles();
      category_names_ = &vocab.categories();
      role_order_ = sorted_order(*role_names_);
      category_order_ = sorted_order(*category_names_);
      role_ids_.assign(role_names_->begin(), role_names_->end());
      category_ids_.assign(category_names_->begin(), category_names_->end());
      auto set_role = [&vocab](knowledge::RoleSet& set, const char* name) {
        const int i = vocab.role_index(name);
        if (i >= 0) set.set(static_cast<size_t>(i));
      };
      set_role(attention_roles_, "attention");  // the reference's has_attention: role attention only
      set_role(moe_roles_, "moe");
      set_role(comm_roles_, "communication");
      set_role(tail_roles_, "selection");
      set_role(tail_roles_, "sampling");
    }
  }

  // §2.5.1 over rows [a, b] (already clamped, a <= b < size). `counts` = fill the counters.
  void compute(uint32_t a, uint32_t b, size_t top, bool counts, model::WindowMetrics& m, FlagCounts* flags);

  // Start, end and busy union of rows [a, b] (for anatomy windows).
  void span(uint32_t a, uint32_t b, model::AnatomyWindow& w);

  void set_category_counts(bool on) { category_counts_ = on; }

  bool has_tail_role(uint32_t row) const {
    if (!taxa_ok_ || tail_roles_.none()) return false;
    return (in_.normalized->taxa[in_.normalized->taxon[row]].roles & tail_roles_).any();
  }

 private:
  static std::vector<uint32_t> sorted_order(const std::vector<std::string>& names) {
    std::vector<uint32_t> order(names.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&names](uint32_t x, uint32_t y) { return names[x] < names[y]; });
    return order;
  }

  // Merges the positive-duration events of [a, b] into `merger`, sorting only when starts decrease.
  void merge_rows(uint32_t a, uint32_t b, Merger& merger);
  void count_streams(uint32_t a, uint32_t b, model::WindowMetrics& m);
  void count_taxa(uint32_t a, uint32_t b, model::WindowMetrics& m, FlagCounts* flags);
  void count_types_without_taxa(uint32_t a, uint32_t b, model::WindowMetrics& m);
  int32_t type_slot(StrId type);

  const SummarizeInput& in_;
  bool taxa_ok_ = false;
  bool category_counts_ = true;  // category_counts filled (blocks do not need them)
  uint32_t epoch_ = 0;
  std::vector<uint32_t> taxon_stamp_, taxon_count_, touched_;
  std::vector<int32_t> taxon_type_slot_;
  // task types: upper-cased name per slot, with its count for the current window
  std::vector<model::CountName> type_names_;
  std::vector<uint64_t> type_count_;
  std::vector<uint32_t> type_touched_;
  std::unordered_map<std::string, int32_t> type_slot_by_name_;
  std::unordered_map<StrId, int32_t> type_slot_by_id_;
  // distinct streams: open addressing, slots valid when stamp == epoch
  std::vector<int32_t> stream_key_;
  std::vector<uint32_t> stream_stamp_;
  std::vector<Interval> intervals_;
  std::vector<model::Bubble> heap_;
  const std::vector<std::string>* role_names_ = nullptr;
  const std::vector<std::string>* category_names_ = nullptr;
  std::vector<uint32_t> role_order_, category_order_;
  std::vector<model::CountName> role_ids_, category_ids_;  // interned once, not per window
  knowledge::RoleSet attention_roles_, moe_roles_, comm_roles_, tail_roles_;
};


bool interval_less(const Interval& x, const Interval& y) {
  if (x.start != y.start) return x.start < y.start;
  if (x.end != y.end) return x.end < y.end;
  return x.row < y.row;
}

// Out-of-order rows are usually a few local swaps (multi-stream captures): insertion sort is linear
// then. Its moves are capped at a few per element; past that the rest goes to std::sort, so the
// worst case stays O(n log n).
void sort_nearly_sorted(std::vector<Interval>& v) {
  const size_t budget = 8 * v.size() + 64;
  size_t moves = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (!interval_less(v[i], v[i - 1])) continue;
    const Interval x = v[i];
    size_t j = i;
    while (j > 0 && interval_less(x, v[j - 1])) {
      v[j] = v[j - 1];
      --j;
      if (++moves > budget) {
        v[j] = x;
        std::sort(v.begin(), v.end(), interval_less);
        return;
      }
    }
    v[j] = x;
  }
}

void WindowScratch::merge_rows(uint32_t a, uint32_t b, Merger& merger) {
  const auto& k = *in_.kernels;
  const int64_t* start = k.start_ns.data();
  const int64_t* dur = k.dur_ns.data();
  // Kernel rows are nearly always in start order: merge straight from the columns, no copy.
  int64_t prev = std::numeric_limits<int64_t>::min();
  uint32_t r = a;
  for (; r <= b; ++r) {
    const int64_t d = dur[r];
    if (d <= 0) continue;
    const int64_t s = start[r];
    if (s < prev) break;
    prev = s;
    merger.feed(s, s + d, r);
  }
  if (r <= b) {
    merger.reset();
    intervals_.clear();
    for (uint32_t i = a; i <= b; ++i)
      if (dur[i] > 0) intervals_.push_back({start[i], start[i] + dur[i], i});
    sort_nearly_sorted(intervals_);
    for (const auto& iv : intervals_) merger.feed(iv.start, iv.end, iv.row);
  }
  merger.finish();
}

void WindowScratch::count_streams(uint32_t a, uint32_t b, model::WindowMetrics& m) {
  const auto& ids = in_.kernels->stream_id;
  if (ids.size() <= b) {  // no stream column: every event is on the reference's "unknown" stream
    m.stream_count = 1;
    return;
  }
  if (stream_key_.empty()) {
    stream_key_.assign(64, 0);
    stream_stamp_.assign(64, 0);
  }
  uint32_t distinct = 0;
  int32_t last = ids[a];
  bool have_last = false;
  for (uint32_t r = a; r <= b; ++r) {
    const int32_t id = ids[r];
    if (have_last && id == last) continue;
    have_last = true;
    last = id;
    size_t mask = stream_key_.size() - 1;
    size_t h = (static_cast<uint32_t>(id) * 2654435761u) & mask;
    while (stream_stamp_[h] == epoch_ && stream_key_[h] != id) h = (h + 1) & mask;
    if (stream_stamp_[h] == epoch_) continue;
    stream_stamp_[h] = epoch_;
    stream_key_[h] = id;
    if (++distinct * 2 > stream_key_.size()) {
      // grow and re-insert this window's keys (rare: thousands of streams)
      std::vector<int32_t> keys;
      for (size_t i = 0; i < stream_key_.size(); ++i)
        if (stream_stamp_[i] == epoch_) keys.push_back(stream_key_[i]);
      stream_key_.assign(stream_key_.size() * 4, 0);
      stream_stamp_.assign(stream_key_.size(), 0);
      mask = stream_key_.size() - 1;
      for (const int32_t key : keys) {
        size_t j = (static_cast<uint32_t>(key) * 2654435761u) & mask;
        while (stream_stamp_[j] == epoch_) j = (j + 1) & mask;
        stream_stamp_[j] = epoch_;
        stream_key_[j] = key;
      }
    }
  }
  m.stream_count = distinct;
}

int32_t WindowScratch::type_slot(StrId type) {
  std::string name = in_.pool != nullptr ? std::string(in_.pool->view(type)) : std::string();
  // The reference upper-cases task_type and writes UNKNOWN for an empty cell.
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.empty()) name = "UNKNOWN";
  auto [it, inserted] = type_slot_by_name_.try_emplace(name, static_cast<int32_t>(type_names_.size()));
  if (inserted) {
    type_names_.emplace_back(name);
    type_count_.push_back(0);
  }
  return it->second;
}

void WindowScratch::count_taxa(uint32_t a, uint32_t b, model::WindowMetrics& m, FlagCounts* flags) {
  const auto& norm = *in_.normalized;
  const uint32_t* taxon = norm.taxon.data();
  touched_.clear();
  for (uint32_t r = a; r <= b; ++r) {
    const uint32_t t = taxon[r];
    if (taxon_stamp_[t] != epoch_) {
      taxon_stamp_[t] = epoch_;
      taxon_count_[t] = 0;
      touched_.push_back(t);
    }
    ++taxon_count_[t];
  }
  uint64_t role_count[knowledge::kMaxRoles] = {};
  uint64_t category_count[knowledge::kMaxCategories] = {};
  type_touched_.clear();
  for (const uint32_t t : touched_) {
    const uint64_t c = taxon_count_[t];
    const TaxonEntry& e = norm.taxa[t];
    if (e.roles.any())
      for (size_t i = 0; i < knowledge::kMaxRoles; ++i)
        if (e.roles.test(i)) role_count[i] += c;
    if (e.categories.any())
      for (size_t i = 0; i < knowledge::kMaxCategories; ++i)
        if (e.categories.test(i)) category_count[i] += c;
    if (flags != nullptr) {
      if ((e.roles & attention_roles_).any()) flags->attention += c;
      if ((e.roles & moe_roles_).any()) flags->moe += c;
      if ((e.roles & comm_roles_).any()) flags->communication += c;
    }
    int32_t& slot = taxon_type_slot_[t];
    if (slot < 0) slot = type_slot(e.type);
    if (type_count_[static_cast<size_t>(slot)] == 0) type_touched_.push_back(static_cast<uint32_t>(slot));
    type_count_[static_cast<size_t>(slot)] += c;
  }
  std::sort(type_touched_.begin(), type_touched_.end(),
            [this](uint32_t x, uint32_t y) { return type_names_[x] < type_names_[y]; });
  m.task_type_counts.clear();
  for (const uint32_t s : type_touched_) {
    m.task_type_counts.emplace_back(type_names_[s], type_count_[s]);
    type_count_[s] = 0;
  }
  m.role_counts.clear();
  m.category_counts.clear();
  if (role_names_ != nullptr) {
    for (const uint32_t i : role_order_)
      if (i < knowledge::kMaxRoles && role_count[i] > 0) m.role_counts.emplace_back(role_ids_[i], role_count[i]);
    if (category_counts_)
      for (const uint32_t i : category_order_)
        if (i < knowledge::kMaxCategories && category_count[i] > 0)
          m.category_counts.emplace_back(category_ids_[i], category_count[i]);
  }
  // tens of thousands of windows are kept at once: no spare capacity
  m.task_type_counts.shrink_to_fit();
  m.role_counts.shrink_to_fit();
  m.category_counts.shrink_to_fit();
}

void WindowScratch::count_types_without_taxa(uint32_t a, uint32_t b, model::WindowMetrics& m) {
  const auto& types = in_.kernels->type;
  m.task_type_counts.clear();
  if (types.size() <= b) return;
  type_touched_.clear();
  for (uint32_t r = a; r <= b; ++r) {
    auto [it, inserted] = type_slot_by_id_.try_emplace(types[r], -1);
    if (inserted) it->second = type_slot(types[r]);
    const auto s = static_cast<size_t>(it->second);
    if (type_count_[s]++ == 0) type_touched_.push_back(static_cast<uint32_t>(s));
  }
  std::sort(type_touched_.begin(), type_touched_.end(),
            [this](uint32_t x, uint32_t y) { return type_names_[x] < type_names_[y]; });
  for (const uint32_t s : type_touched_) {
    m.task_type_counts.emplace_back(type_names_[s], type_count_[s]);
    type_count_[s] = 0;
  }
}

void WindowScratch::compute(uint32_t a, uint32_t b, size_t top, bool counts, model::WindowMetrics& m,
                            FlagCounts* flags) {
  ++epoch_;
  if (epoch_ == 0) {  // stamps wrapped: clear them once every 4 billion windows
    std::fill(taxon_stamp_.begin(), taxon_stamp_.end(), 0);
    std::fill(stream_stamp_.begin(), stream_stamp_.end(), 0);
    epoch_ = 1;
  }
  const auto& k = *in_.kernels;
  m = model::WindowMetrics{};
  m.event_count = b - a + 1;
  m.row_start = a;
  m.row_end = b;
  const int64_t* start = k.start_ns.data();
  const int64_t* dur = k.dur_ns.data();
  const bool have_wait = k.wait_ns.size() > b;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  int64_t kernel_sum = 0, wait_sum = 0;
  for (uint32_t r = a; r <= b; ++r) {
    const int64_t s = start[r];
    const int64_t d = std::max<int64_t>(0, dur[r]);
    lo = std::min(lo, s);
    hi = std::max(hi, s + d);
    kernel_sum += d;
    if (have_wait) {
      const int64_t w = k.wait_ns[r];
      if (w != kAbsentI64 && w > 0) wait_sum += w;
    }
  }
  m.start_ns = lo;
  m.end_ns = hi;
  m.wall_ns = std::max<int64_t>(0, hi - lo);
  m.kernel_sum_ns = kernel_sum;
  m.wait_sum_ns = wait_sum;
  m.total_cost_ns = kernel_sum + wait_sum;

  Merger merger(top, &heap_);
  merge_rows(a, b, merger);
  m.busy_union_ns = merger.busy;
  m.underfeed_ns = std::max<int64_t>(0, m.wall_ns - m.busy_union_ns);
  m.underfeed_ratio = m.wall_ns > 0 ? static_cast<double>(m.underfeed_ns) / static_cast<double>(m.wall_ns) : 0.0;
  m.internal_bubble_total_ns = merger.gap_total;
  m.largest_internal_bubble_ns = merger.gap_max;
  m.bubble_count = merger.gap_count();
  if (top > 0) merger.take_top(m.top_bubbles);

  if (!counts) return;
  count_streams(a, b, m);
  if (taxa_ok_)
    count_taxa(a, b, m, flags);
  else
    count_types_without_taxa(a, b, m);
}

void WindowScratch::span(uint32_t a, uint32_t b, model::AnatomyWindow& w) {
  w = model::AnatomyWindow{};
  if (b < a) return;
  model::WindowMetrics m;
  compute(a, b, 0, false, m, nullptr);
  w.empty = false;
  w.row_start = a;
  w.row_end = b;
  w.start_ns = m.start_ns;
  w.end_ns = m.end_ns;
  w.wall_ns = m.wall_ns;
  w.busy_ns = m.busy_union_ns;
  w.bubble_ns = m.underfeed_ns;
  w.event_count = m.event_count;
}

// Clamps [a, b] to the table; false when nothing is left.
bool clamp_rows(const SummarizeInput& in, uint32_t& a, uint32_t& b) {
  if (in.kernels == nullptr || in.kernels->size() == 0) return false;
  const auto last = static_cast<uint32_t>(in.kernels->size() - 1);
  b = std::min(b, last);
  return a <= b && in.kernels->dur_ns.size() == in.kernels->size();
}

std::vector<std::string> anomaly_tags(const model::WindowMetrics& m, const knowledge::SummarizeRules& rules) {
  std::vector<std::string> tags;
  if (m.wall_ns > 0 && m.underfeed_ratio >= rules.idle_gap_heavy_ratio) tags.emplace_back("DEVICE_IDLE_GAP_HEAVY");
  const double bubble_floor = std::max(rules.bubble_heavy_min_ms * 1e6,
                                       rules.bubble_heavy_wall_share * static_cast<double>(m.wall_ns));
  if (m.bubble_count > 0 && static_cast<double>(m.largest_internal_bubble_ns) >= bubble_floor) tags.emplace_back("INTERNAL_BUBBLE_HEAVY");
  return tags;
}

void step_anatomy(WindowScratch& scratch, const model::RankStructure& structure, const model::StepSegment& step,
                  const model::WindowMetrics& metrics, uint32_t last_row, model::StepAnatomy& out) {
  const uint32_t s0 = step.row_start;
  const uint32_t s1 = std::min(step.row_end, last_row);
  // The step's layers (segment stage: grouped by segment, in row order).
  uint32_t first_start = 0, last_anchor = 0;
  bool any = false;
  const size_t l_end = std::min<size_t>(structure.layers.size(), size_t{step.first_layer} + step.layer_count);
  uint32_t last_layer_start = 0;
  for (size_t l = step.first_layer; l < l_end; ++l) {
    const auto& layer = structure.layers[l];
    if (!any || layer.row_start < first_start) first_start = layer.row_start;
    if (!any || layer.row_start >= last_layer_start) {
      last_layer_start = layer.row_start;
      last_anchor = layer.first_anchor_row;
    }
    any = true;
  }
  if (s1 < s0) return;
  if (!any) {
    out.anatomy_kind = "head_only";
    scratch.span(s0, s1, out.head);
    out.head_ratio = 1.0;
  } else {
    out.anatomy_kind = "full";
    const uint32_t main_start = std::clamp(first_start, s0, s1 + 1);
    // The tail: the last selection / sampling row after the last layer's anchor, to the step end.
    uint32_t tail_start = s1 + 1;
    for (uint32_t r = s1 + 1; r > std::max(main_start, last_anchor + 1);) {
      --r;
      if (scratch.has_tail_role(r)) {
        tail_start = r;
        break;
      }
    }
    if (main_start > s0) scratch.span(s0, main_start - 1, out.head);
    if (tail_start > main_start) scratch.span(main_start, tail_start - 1, out.main);
    if (tail_start <= s1) scratch.span(tail_start, s1, out.tail);
    const int64_t sum = out.head.wall_ns + out.main.wall_ns + out.tail.wall_ns;
    const double denom = static_cast<double>(metrics.wall_ns > 0 ? metrics.wall_ns : sum);
    if (denom > 0) {
      out.head_ratio = static_cast<double>(out.head.wall_ns) / denom;
      out.main_ratio = static_cast<double>(out.main.wall_ns) / denom;
      out.tail_ratio = static_cast<double>(out.tail.wall_ns) / denom;
    }
  }
  out.bubble_ratio = metrics.wall_ns > 0 ? static_cast<double>(metrics.underfeed_ns) / static_cast<double>(metrics.wall_ns)
                                         : 0.0;
}

}  // namespace

model::WindowMetrics window_metrics(const SummarizeInput& in, uint32_t row_start, uint32_t row_end, size_t top_bubbles) {
  model::WindowMetrics m;
  if (!clamp_rows(in, row_start, row_end)) return m;
  WindowScratch scratch(in);
  scratch.compute(row_start, row_end, top_bubbles, true, m, nullptr);
  return m;
}

std::vector<model::WindowMetrics> window_metrics_many(const SummarizeInput& in,
                                                     const std::vector<std::pair<uint32_t, uint32_t>>& ranges,
                                                     size_t top_bubbles, bool category_counts) {
  std::vector<model::WindowMetrics> out(ranges.size());
  WindowScratch scratch(in);  // one scratch for all windows: its setup is per distinct kernel, not per row
  scratch.set_category_counts(category_counts);
  for (size_t i = 0; i < ranges.size(); ++i) {
    uint32_t a = ranges[i].first, b = ranges[i].second;
    if (clamp_rows(in, a, b)) scratch.compute(a, b, top_bubbles, true, out[i], nullptr);
  }
  return out;
}

void summarize_windows(const SummarizeInput& in, const model::RankStructure& structure, model::RankSummary& out) {
  out.segments.clear();
  out.layers.clear();
  out.rank = model::WindowMetrics{};
  if (in.kernels == nullptr || in.kb == nullptr) return;
  const auto& rules = in.kb->summarize;
  WindowScratch scratch(in);
  const size_t n = in.kernels->size();
  const auto last_row = static_cast<uint32_t>(n == 0 ? 0 : n - 1);

  out.segments.resize(structure.segments.size());
  for (size_t i = 0; i < structure.segments.size(); ++i) {
    const auto& seg = structure.segments[i];
    auto& row = out.segments[i];
    row.segment = static_cast<uint32_t>(i);
    uint32_t a = seg.row_start, b = seg.row_end;
    if (!clamp_rows(in, a, b)) continue;
    FlagCounts flags;
    scratch.compute(a, b, rules.top_bubbles, true, row.metrics, &flags);
    row.anomaly_tags = anomaly_tags(row.metrics, rules);
    row.attention_event_count = flags.attention;
    row.moe_event_count = flags.moe;
    row.comm_event_count = flags.communication;
    row.has_attention = flags.attention > 0;
    row.has_moe = flags.moe > 0;
    row.has_communication = flags.communication > 0;
    if (seg.type == model::SegmentType::kStep) step_anatomy(scratch, structure, seg, row.metrics, last_row, row.anatomy);
  }

  out.layers.resize(structure.layers.size());
  for (size_t i = 0; i < structure.layers.size(); ++i) {
    const auto& layer = structure.layers[i];
    auto& row = out.layers[i];
    row.layer = static_cast<uint32_t>(i);
    uint32_t a = layer.row_start, b = layer.row_end;
    if (!clamp_rows(in, a, b)) continue;
    FlagCounts flags;
    scratch.compute(a, b, 0, true, row.metrics, &flags);
    row.has_attention = flags.attention > 0;
    row.has_moe = flags.moe > 0;
    row.has_communication = flags.communication > 0;
  }

  uint32_t a = 0, b = last_row;
  if (clamp_rows(in, a, b)) scratch.compute(a, b, rules.top_bubbles, true, out.rank, nullptr);
}

}  // namespace ascprof::analysis
