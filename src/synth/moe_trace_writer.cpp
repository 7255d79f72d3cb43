#include "moe_trace_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "ascprof/common/files.hpp"
#include "simulate.hpp"

namespace ascprof::synth {

namespace fs = std::filesystem;

namespace {

// ---- the instrumented build: labels, their point ids and call sites ----

const char* const kFiles[] = {
    "fused_deep_moe/op_kernel/fused_deep_moe.h",
    "fused_deep_moe/op_kernel/fused_deep_moe/gemm/kernel/"
    "grouped_matmul_slice_m_per_token_dequant_swiglu_quant_multistage_workspace.h",
    "fused_deep_moe/op_kernel/fused_deep_moe/gemm/kernel/grouped_matmul_slice_m_per_token_dequant_multistage_workspace.h",
    "fused_deep_moe/op_kernel/fused_deep_moe/raw_distributed/cam_moe_distribute_combine.h",
};

/// What trace_preprocessor.py assigned: a point id per call site (B and E differ; the ids between
/// belong to points this model does not record), a per-label event id, and the call sites.
struct LabelDef {
  const char* name;
  uint32_t b_id, e_id, event_id;
  uint8_t file;
  uint32_t b_line, e_line;
  bool indexed;  ///< recorded with (0, expert group): "#g"
};

constexpr LabelDef kLabels[kMoeLabelCount] = {
    {"processing", 1, 2, 1, 0, 415, 468, false},
    {"dispatch-gmm1", 3, 4, 2, 0, 421, 437, false},
    {"gmm2-combine", 7, 8, 4, 0, 441, 463, false},
    {"dispatch-gmm1 wait-moe-token", 55, 56, 11, 1, 741, 749, true},
    {"dispatch-gmm1 moe-process", 57, 60, 12, 1, 753, 821, true},
    {"gmm2-combine moe-gmm2", 113, 114, 29, 2, 402, 455, true},
    {"dispatch-gmm1 recv-token", 83, 84, 19, 1, 1312, 1360, false},
    {"dispatch-gmm1 moe-quant", 91, 92, 23, 1, 1488, 1533, true},
    {"gmm2-combine block-epilogue group", 121, 122, 33, 2, 611, 668, true},
    {"gmm2-combine combine-recv", 133, 134, 38, 2, 815, 839, false},
    {"dispatch-gmm1 moe-dispatch-send", 71, 72, 16, 1, 1103, 1141, true},
    {"gmm2-combine combine-send", 131, 132, 37, 2, 790, 812, false},
    {"gmm2-combine combine-wait-status", 147, 148, 43, 3, 388, 402, false},
};

// ---- nominal phase durations (cycles at nominal speed) ----
//
// Sized so that on a clean rank no non-container label covers more than ~44 % of the span (the
// "phase dominates the kernel" check) and combine-wait-status stays near 14 % (combine-wait check),
// and so that the vector_send cores end last with ~5 us to spare over the cube (a peer delay on their
// combine-wait-status then moves the span by exactly that delay). The vector_send cores hold only
// three labels over the whole span, which is what forces their two big phases towards 43 %.

struct Nominal {
  uint8_t label, index;
  int64_t cycles;
};

constexpr Nominal kCubeDispatch[] = {{kMoeWaitMoeToken, 0, 470}, {kMoeProcess, 0, 525}, {kMoeWaitMoeToken, 1, 200},
                                     {kMoeProcess, 1, 510},      {kMoeWaitMoeToken, 2, 200}, {kMoeProcess, 2, 500},
                                     {kMoeWaitMoeToken, 3, 200}, {kMoeProcess, 3, 500}};
constexpr Nominal kCubeCombine[] = {{kMoeGmm2, 0, 525}, {kMoeGmm2, 1, 520}, {kMoeGmm2, 2, 520}, {kMoeGmm2, 3, 520}};
constexpr Nominal kRecvDispatch[] = {{kMoeRecvToken, 0, 450}, {kMoeQuant, 0, 475}, {kMoeQuant, 1, 475},
                                     {kMoeQuant, 2, 475},     {kMoeQuant, 3, 475}};
constexpr Nominal kRecvCombine[] = {{kMoeBlockEpilogue, 0, 400}, {kMoeBlockEpilogue, 1, 400}, {kMoeBlockEpilogue, 2, 400},
                                    {kMoeBlockEpilogue, 3, 400}, {kMoeCombineRecv, 0, 1000}};
constexpr Nominal kSendDispatch[] = {{kMoeDispatchSend, 0, 590}, {kMoeDispatchSend, 1, 590}, {kMoeDispatchSend, 2, 590},
                                     {kMoeDispatchSend, 3, 590}};
constexpr Nominal kSendCombine[] = {{kMoeCombineSend, 0, 2365}, {kMoeCombineWaitStatus, 0, 735}};

struct GroupPlan {
  const Nominal* dispatch;
  size_t n_dispatch;
  const Nominal* combine;
  size_t n_combine;
};
constexpr GroupPlan kPlans[kMoeCoreGroups] = {
    {kCubeDispatch, std::size(kCubeDispatch), kCubeCombine, std::size(kCubeCombine)},
    {kRecvDispatch, std::size(kRecvDispatch), kRecvCombine, std::size(kRecvCombine)},
    {kSendDispatch, std::size(kSendDispatch), kSendCombine, std::size(kSendCombine)},
};

/// The rank's in-kernel faults (1 = none).
struct RankFaults {
  double slow_expert = 1.0, recv_starved = 1.0;
};

RankFaults rank_faults(const Scenario& sc, int rank) {
  RankFaults f;
  for (const Fault& x : sc.faults) {
    if (x.rank != rank) continue;
    if (x.kind == FaultKind::kMoeSlowExpert) f.slow_expert *= x.magnitude;
    if (x.kind == FaultKind::kMoeRecvStarved) f.recv_starved *= x.magnitude;
  }
  return f;
}

uint64_t call_key(int step, int call) { return (static_cast<uint64_t>(step) << 24) ^ static_cast<uint64_t>(call); }

/// A core's draws: a splitmix64 stream, one word per draw.
struct CoreRng {
  uint64_t s;
  uint64_t next() { return mix64(s += 0x632be59bd9b4e019ULL); }
  int64_t gap() { return 2 + static_cast<int64_t>(next() % 4); }       // 2..5 cycles between phases
  int64_t jitter() { return static_cast<int64_t>(next() % 7) - 3; }    // -3..+3 cycles per phase
};

int64_t scaled(int64_t nominal, double f, int64_t jitter) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(nominal) * f) + jitter);
}

/// Builds one call of `rank` with the given faults and peer delay; returns W. `out` null = W only.
int64_t build(const Scenario& sc, int rank, int step, int call, const RankFaults& faults, int64_t peer_delay,
              MoeCallLayout* out) {
  const uint64_t key = call_key(step, call);
  const double fc = rank_speed(sc, rank) * slow_factor(sc, rank) *
                    unit_range(hash_of(sc.seed ^ 0x6d6f6563ULL, static_cast<uint64_t>(rank), key), 0.99, 1.01);
  // recv-token per core pair k, drawn apart from the cores' streams: the cube's wait-moe-token #0 of
  // a starved rank grows by the very cycles its receive core's recv-token grew
  std::array<int64_t, kMoeCoresPerGroup> recv{}, starved_extra{};
  for (int k = 0; k < kMoeCoresPerGroup; ++k) {
    const uint64_t h = hash_of(sc.seed ^ 0x7ec7ULL, static_cast<uint64_t>(rank), key, static_cast<uint64_t>(k));
    const int64_t d = scaled(kRecvDispatch[0].cycles, fc, static_cast<int64_t>(h % 7) - 3);
    recv[static_cast<size_t>(k)] = faults.recv_starved != 1.0 ? std::llround(static_cast<double>(d) * faults.recv_starved) : d;
    starved_extra[static_cast<size_t>(k)] = recv[static_cast<size_t>(k)] - d;
  }
  if (out != nullptr) out->spans.clear();
  int64_t span = 0;
  for (int g = 0; g < kMoeCoreGroups; ++g) {
    const GroupPlan& plan = kPlans[g];
    for (int k = 0; k < kMoeCoresPerGroup; ++k) {
      const int core = g * kMoeCoresPerGroup + k;
      if (out != nullptr) out->core_begin[static_cast<size_t>(core)] = static_cast<uint32_t>(out->spans.size());
      CoreRng rng{hash_of(sc.seed ^ 0x6d6f6574ULL, static_cast<uint64_t>(rank), key, static_cast<uint64_t>(core))};
      int64_t t = 0;
      auto open = [&](uint8_t label) {
        if (out == nullptr) return size_t{0};
        out->spans.push_back({t, t, label, 0});
        return out->spans.size() - 1;
      };
      auto close = [&](size_t i) {
        if (out != nullptr) out->spans[i].e = t;
      };
      auto children = [&](const Nominal* list, size_t n) {
        for (size_t i = 0; i < n; ++i) {
          if (i > 0) t += rng.gap();
          const Nominal& p = list[i];
          int64_t d;
          if (p.label == kMoeRecvToken) {
            d = recv[static_cast<size_t>(k)];
          } else {
            // drawn whatever the faults, so a fault changes only the phases it names
            d = scaled(p.cycles, fc, rng.jitter());
            if (p.label == kMoeProcess && p.index == 0 && faults.slow_expert != 1.0)
              d = std::llround(static_cast<double>(d) * faults.slow_expert);
            if (p.label == kMoeWaitMoeToken && p.index == 0) d += starved_extra[static_cast<size_t>(k)];
            if (p.label == kMoeCombineWaitStatus) d += peer_delay;
          }
          if (out != nullptr) out->spans.push_back({t, t + d, p.label, p.index});
          t += d;
        }
      };
      const size_t proc = open(kMoeProcessing);
      t += rng.gap();
      const size_t dg = open(kMoeDispatchGmm1);
      t += rng.gap();
      children(plan.dispatch, plan.n_dispatch);
      t += rng.gap();
      close(dg);
      t += rng.gap();
      const size_t gc = open(kMoeGmm2Combine);
      t += rng.gap();
      children(plan.combine, plan.n_combine);
      t += rng.gap();
      close(gc);
      t += rng.gap();
      close(proc);
      span = std::max(span, t);
    }
  }
  if (out != nullptr) {
    out->core_begin[kMoeCores] = static_cast<uint32_t>(out->spans.size());
    out->span = span;
  }
  return span;
}

int64_t combine_delay(const Scenario& sc, int rank, int step, int call, const RankFaults& f) {
  if (f.slow_expert == 1.0) return 0;
  RankFaults only;
  only.slow_expert = f.slow_expert;
  return build(sc, rank, step, call, only, 0, nullptr) - build(sc, rank, step, call, RankFaults{}, 0, nullptr);
}

/// The combine-wait-status extension of `rank`: the latest other slow-expert rank's combine.
int64_t peer_delay(const Scenario& sc, int rank, int step, int call) {
  int64_t d = 0;
  for (const Fault& x : sc.faults)
    if (x.kind == FaultKind::kMoeSlowExpert && x.rank != rank)
      d = std::max(d, combine_delay(sc, x.rank, step, call, rank_faults(sc, x.rank)));
  return d;
}

// ---- ground truth ----

struct Iv {
  int64_t a, b;
};

int64_t union_length(std::vector<Iv>& v) {
  std::sort(v.begin(), v.end(), [](const Iv& x, const Iv& y) { return x.a < y.a || (x.a == y.a && x.b < y.b); });
  int64_t len = 0, cur_a = 0, cur_b = 0;
  bool open = false;
  for (const Iv& i : v) {
    if (open && i.a <= cur_b) {
      cur_b = std::max(cur_b, i.b);
      continue;
    }
    if (open) len += cur_b - cur_a;
    cur_a = i.a;
    cur_b = i.b;
    open = true;
  }
  if (open) len += cur_b - cur_a;
  return len;
}

bool is_container(uint8_t label) { return label <= kMoeGmm2Combine; }

void summarize(const MoeCallLayout& l, MoeTraceSummary* s) {
  s->phases.clear();
  s->bubbles.clear();
  std::vector<Iv> ivs, kids;
  for (int g = 0; g < kMoeCoreGroups; ++g) {
    const size_t first = g * kMoeCoresPerGroup, last = first + kMoeCoresPerGroup;
    // labels in first-seen order on the group's first core (every core records the same labels)
    std::vector<uint8_t> labels;
    for (uint32_t i = l.core_begin[first]; i < l.core_begin[first + 1]; ++i)
      if (std::find(labels.begin(), labels.end(), l.spans[i].label) == labels.end()) labels.push_back(l.spans[i].label);
    for (const uint8_t label : labels) {
      MoePhaseStat p;
      p.label = label;
      p.group = static_cast<uint8_t>(g);
      ivs.clear();
      for (size_t c = first; c < last; ++c) {
        int64_t core_total = 0;
        for (uint32_t i = l.core_begin[c]; i < l.core_begin[c + 1]; ++i) {
          const MoeSpan& x = l.spans[i];
          if (x.label != label) continue;
          ++p.count;
          core_total += x.e - x.b;
          ivs.push_back({x.b, x.e});
        }
        p.total += core_total;
        p.max_core = std::max(p.max_core, core_total);
      }
      p.union_len = union_length(ivs);
      s->phases.push_back(p);
    }
    // bubbles: a container's time not covered by its direct children (processing: the two phase
    // containers; a phase container: the phases inside it), per core, summed over the group
    for (const uint8_t container : {kMoeProcessing, kMoeDispatchGmm1, kMoeGmm2Combine}) {
      MoeBubbleStat b;
      b.container = container;
      b.group = static_cast<uint8_t>(g);
      for (size_t c = first; c < last; ++c)
        for (uint32_t i = l.core_begin[c]; i < l.core_begin[c + 1]; ++i) {
          const MoeSpan& box = l.spans[i];
          if (box.label != container) continue;
          kids.clear();
          for (uint32_t j = l.core_begin[c]; j < l.core_begin[c + 1]; ++j) {
            const MoeSpan& x = l.spans[j];
            if (j == i || x.b < box.b || x.e > box.e) continue;
            const bool direct = container == kMoeProcessing ? is_container(x.label) : !is_container(x.label);
            if (direct) kids.push_back({x.b, x.e});
          }
          b.total += (box.e - box.b) - union_length(kids);
        }
      s->bubbles.push_back(b);
    }
  }
}

// ---- the Chrome trace ----

class Out {
 public:
  explicit Out(std::string& s) : s_(s) {}
  Out& operator<<(std::string_view v) {
    s_ += v;
    return *this;
  }
  Out& operator<<(char c) {
    s_ += c;
    return *this;
  }
  Out& num(int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    s_.append(buf, r.ptr);
    return *this;
  }
  Out& unum(uint64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    s_.append(buf, r.ptr);
    return *this;
  }
  /// cycles / 50 with exactly two decimals: a reader parsing it to integer ns gets cycles x 20.
  Out& us(int64_t cycles) {
    const int64_t h = cycles * (100 / kMoeCyclesPerUs);
    num(h / 100);
    s_ += '.';
    s_ += static_cast<char>('0' + h % 100 / 10);
    s_ += static_cast<char>('0' + h % 10);
    return *this;
  }
  Out& tid(int group, int core_id) {
    char buf[24];
    const int n = std::snprintf(buf, sizeof buf, "type%d_core%03d", group, core_id);
    s_.append(buf, static_cast<size_t>(n));
    return *this;
  }
  Out& name(const MoeSpan& x) {
    s_ += kLabels[x.label].name;
    s_ += " [extra:0] #";
    return num(x.index);
  }

 private:
  std::string& s_;
};

struct TraceCtx {
  const Scenario& sc;
  int rank;
  int variant;  // 0 skill, 1 umdk, 2 array
  const MoeCallLayout& l;
  std::array<int64_t, kMoeCores> t0{};  // UMDK: absolute cycles of each core's T0
};

enum { kSkill = 0, kUmdk = 1, kArray = 2 };

void metadata(Out& o, const TraceCtx& c, int which) {  // which: 0 process_name, 1 process_sort_index, 2.. threads
  if (which == 0) {
    o << R"({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "Rank"}})";
    return;
  }
  if (which == 1) {
    o << R"({"name": "process_sort_index", "ph": "M", "pid": 0, "args": {"sort_index": )";
    o.num(c.rank) << "}}";
    return;
  }
  const int core = (which - 2) / 2, group = core / kMoeCoresPerGroup, id = core % kMoeCoresPerGroup;
  if ((which - 2) % 2 == 0) {
    o << R"({"name": "thread_name", "ph": "M", "pid": 0, "tid": ")";
    o.tid(group, id) << R"(", "args": {"name": "Core )";
    o.num(id) << "\"}}";
  } else {
    o << R"({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": ")";
    o.tid(group, id) << R"(", "args": {"sort_index": )";
    o.num(id) << "}}";
  }
}

/// One event of span `x` on `core`: ph 'B', 'E' or 'X'.
void event(Out& o, const TraceCtx& c, int core, const MoeSpan& x, char ph) {
  const LabelDef& d = kLabels[x.label];
  const int group = core / kMoeCoresPerGroup, id = core % kMoeCoresPerGroup;
  const bool end = ph == 'E';
  const int64_t at = end ? x.e : x.b;
  const uint64_t extra = static_cast<uint64_t>(x.index) << 8;  // extraId 0 | index << 8
  const uint32_t point = end ? d.e_id : d.b_id;
  o << R"({"cat": "trace", "ts": )";
  o.us(at);
  if (ph == 'X') {
    o << R"(, "dur": )";
    o.us(x.e - x.b);
  }
  o << R"(, "pid": 0, "tid": ")";
  o.tid(group, id) << R"(", "ph": ")" << ph << R"(", "name": ")";
  o.name(x) << R"(", "args": {"base_point_id": )";
  o.unum(point) << R"(, "extra_id": )";
  o.unum(c.variant == kUmdk ? (extra & 0xFF) : extra);
  if (c.variant == kUmdk) {
    o << R"(, "extra_raw": )";
    o.unum(extra);
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>((extra << 32) | point));
    o << R"(, "combined_id": ")" << hex << '"';
  }
  o << R"(, "rank_id": )";
  o.num(c.rank) << R"(, "core_type": )";
  o.num(group) << R"(, "core_id": )";
  o.num(id);
  if (c.variant == kUmdk) {
    o << R"(, "raw_timestamp": )";
    o.num(c.t0[static_cast<size_t>(core)] + at) << R"(, "initial_timestamp": )";
    o.num(c.t0[static_cast<size_t>(core)]) << R"(, "clock_divisor": 50.0, "event_id": )";
    o.unum(d.event_id);
  }
  o << R"(, "file": ")" << kFiles[d.file] << R"(", "line": )";
  o.unum(end ? d.e_line : d.b_line);
  if (c.variant == kUmdk) {
    o << R"(, "begin_file": ")" << kFiles[d.file] << R"(", "begin_line": )";
    o.unum(d.b_line) << R"(, "end_file": ")" << kFiles[d.file] << R"(", "end_line": )";
    o.unum(d.e_line);
  }
  o << "}}";
}

std::string render(const TraceCtx& c) {
  const MoeCallLayout& l = c.l;
  const size_t n_spans = l.spans.size();
  const int n_meta = 2 + 2 * kMoeCores;
  std::string s;
  s.reserve(n_spans * (c.variant == kUmdk ? 1100 : 640) + static_cast<size_t>(n_meta) * 100 + 512);
  Out o(s);
  if (c.variant == kArray) {
    // a bare array of X events and the metadata, shuffled: a reader must not rely on any order
    std::vector<uint32_t> order(static_cast<size_t>(n_meta) + n_spans);
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    CoreRng rng{hash_of(c.sc.seed ^ 0x5a4ff1eULL, static_cast<uint64_t>(c.rank))};
    for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.next() % (i + 1)]);
    o << "[\n";
    for (size_t i = 0; i < order.size(); ++i) {
      o << (i ? ",\n  " : "  ");
      const uint32_t e = order[i];
      if (e < static_cast<uint32_t>(n_meta)) {
        metadata(o, c, static_cast<int>(e));
        continue;
      }
      const uint32_t si = e - static_cast<uint32_t>(n_meta);
      const int core = static_cast<int>(std::upper_bound(l.core_begin.begin(), l.core_begin.end(), si) - l.core_begin.begin()) - 1;
      event(o, c, core, l.spans[si], 'X');
    }
    o << "\n]\n";
    return s;
  }
  o << "{\n  \"traceEvents\": [\n";
  for (int m = 0; m < n_meta; ++m) {
    o << (m ? ",\n    " : "    ");
    metadata(o, c, m);
  }
  // as trace_collector.py emits them: per thread, per name (first seen first), B then its E
  for (int core = 0; core < kMoeCores; ++core) {
    const uint32_t a = l.core_begin[static_cast<size_t>(core)], b = l.core_begin[static_cast<size_t>(core) + 1];
    uint16_t done = 0;  // labels already emitted on this core (bit per label)
    for (uint32_t i = a; i < b; ++i) {
      const uint8_t label = l.spans[i].label;
      if (done & (1u << label)) continue;
      done = static_cast<uint16_t>(done | (1u << label));
      for (uint32_t j = i; j < b; ++j) {
        if (l.spans[j].label != label) continue;
        o << ",\n    ";
        event(o, c, core, l.spans[j], 'B');
        o << ",\n    ";
        event(o, c, core, l.spans[j], 'E');
      }
    }
  }
  const uint64_t events = 2 * n_spans;
  o << "\n  ],\n  \"displayTimeUnit\": \"us\",\n  \"otherData\": {";
  if (c.variant == kSkill) {
    o << R"("version": "1.0", "total_events": )";
    o.unum(events) << R"(, "total_ranks": 1, "clock_divisor": 50.0, "extra_mode": "seq", "depth": 0, )"
                   << R"("skipped_no_mapping": 0})";
  } else {
    o << R"("version": "1.0", "generator": "trace_collector_fifo_seq_sorted_us", "total_events": )";
    o.unum(events) << R"(, "skipped_events": 0, "unpaired_events": 0, "b_events": )";
    o.unum(n_spans) << R"(, "e_events": )";
    o.unum(n_spans) << R"(, "total_ranks": 1, "clock_divisor": 50.0, "extra_mode": "seq", "depth": 0})";
  }
  o << "\n}\n";
  return s;
}

}  // namespace

const char* moe_label_name(int label) { return kLabels[label].name; }

const char* moe_core_group_name(int group) {
  static const char* const kNames[kMoeCoreGroups] = {"cube", "vector_recv", "vector_send"};
  return kNames[group];
}

int64_t moe_call_span(const Scenario& sc, int rank, int step, int call) {
  return build(sc, rank, step, call, rank_faults(sc, rank), peer_delay(sc, rank, step, call), nullptr);
}

void moe_call_layout(const Scenario& sc, int rank, int step, int call, MoeCallLayout* out) {
  build(sc, rank, step, call, rank_faults(sc, rank), peer_delay(sc, rank, step, call), out);
}

int64_t moe_combine_delay(const Scenario& sc, int rank, int step, int call) {
  return combine_delay(sc, rank, step, call, rank_faults(sc, rank));
}

Status write_moe_trace(const Scenario& sc, int rank, const MoeTracedCall& call, const fs::path& rank_dir,
                       MoeTraceSummary* summary) {
  MoeCallLayout layout;
  moe_call_layout(sc, rank, call.step_index, call.call, &layout);
  if (layout.span * kMoeNsPerCycle + kMoeOverheadNs != call.row_dur_ns)
    return Status(ErrorCode::kInternal, "moe_trace: FusedDeepMoe row " + std::to_string(call.row_index) + " of rank " +
                                            std::to_string(rank) + " lasts " + std::to_string(call.row_dur_ns) +
                                            " ns, its trace spans " + std::to_string(layout.span * kMoeNsPerCycle) + " ns");
  int variant = kSkill;
  if (sc.moe_trace == "umdk") variant = kUmdk;
  else if (sc.moe_trace == "array") variant = kArray;
  TraceCtx ctx{sc, rank, variant, layout, {}};
  // T0 = the device counter at kernel entry: a seeded uptime plus the entry's offset in the capture,
  // and a few cycles apart per core (each core reads it after the entry barrier on its own)
  const int64_t boot = 1500000000000LL + static_cast<int64_t>(hash_of(sc.seed ^ 0xb007ULL, 0) % 1000000000000ULL);
  const int64_t base = boot + (call.row_start_ns + kMoeEntryNs - sc.base_time_ns) / kMoeNsPerCycle;
  for (int core = 0; core < kMoeCores; ++core)
    ctx.t0[static_cast<size_t>(core)] =
        base + static_cast<int64_t>(hash_of(sc.seed ^ 0x70ULL, static_cast<uint64_t>(rank), call_key(call.step_index, call.call),
                                            static_cast<uint64_t>(core)) %
                                    8);
  const std::string body = render(ctx);
  const fs::path dir = rank_dir / kMoeTraceFolder;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return file_error(ErrorCode::kIo, dir.string(), "", "cannot create folder: " + ec.message());
  const std::string name = "trace_call" + std::to_string(call.row_index) + ".json";
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(dir / name, body));
  summary->written = true;
  summary->file = std::string(kMoeTraceFolder) + "/" + name;
  summary->kernel_row_index = call.row_index;
  summary->kernel_dur_ns = call.row_dur_ns;
  summary->span_cycles = layout.span;
  summary->step_index = call.step_index;
  summary->call = call.call;
  summary->bytes = body.size();
  summarize(layout, summary);
  return {};
}

}  // namespace ascprof::synth
