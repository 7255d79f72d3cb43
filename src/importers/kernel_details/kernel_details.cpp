#include "ascprof/importers/kernel_details.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::importers {

namespace {

using model::kAbsentI32;
using model::kAbsentI64;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Ranges of integer columns; the minimum is reserved for "absent".
constexpr int64_t kI32Lo = std::numeric_limits<int32_t>::min() + 1;
constexpr int64_t kI32Hi = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Lo = std::numeric_limits<int64_t>::min() + 1;
constexpr int64_t kI64Hi = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------------------------------------
// Cell parsing. The hot loop parses ~25 numbers per row, so plain decimals ("0.0", "50.522") take
// an exact fast path (Clinger: an integer mantissa <= 2^53 divided by an exact power of ten <= 1e22
// is correctly rounded by one IEEE division); anything else falls back to from_chars.

enum class CellKind : uint8_t { kEmpty, kNull, kOk, kBad };

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

inline bool is_digit(char c) { return static_cast<unsigned>(c - '0') < 10u; }

inline bool is_ws(char c) {
  // Printable bytes (nearly every cell edge) leave after one compare.
  return static_cast<unsigned char>(c) <= ' ' && (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

// Same as ascprof::trim, inlined: it runs on every cell.
[[gnu::always_inline]] inline std::string_view trim_cell(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && is_ws(s[b])) ++b;
  while (e > b && is_ws(s[e - 1])) --e;
  return std::string_view(s.data() + b, e - b);  // no substr: its range check blocks inlining
}

[[gnu::always_inline]] inline bool fast_decimal(std::string_view s, double* out) {
  // Pointer walks without per-digit counters: this runs on ~25 cells per row.
  const char* p = s.data();
  const char* const e = p + s.size();
  bool neg = false;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    ++p;
  }
  const char* const d0 = p;
  uint64_t m = 0;
  while (p != e && is_digit(*p)) m = m * 10 + static_cast<uint64_t>(*p++ - '0');
  size_t digits = static_cast<size_t>(p - d0);
  size_t frac = 0;
  if (p != e && *p == '.') {
    const char* const f0 = ++p;
    while (p != e && is_digit(*p)) m = m * 10 + static_cast<uint64_t>(*p++ - '0');
    frac = static_cast<size_t>(p - f0);
    digits += frac;
  }
  if (p != e || digits == 0 || digits > 19 || frac > 22 || m > (uint64_t{1} << 53)) return false;
  // Zeros and integers (half the metric cells) need no division.
  const double v = (m == 0 || frac == 0) ? static_cast<double>(m) : static_cast<double>(m) / kPow10[frac];
  *out = neg ? -v : v;
  return true;
}

// Numbers written with thousands separators ("1,234.5") are accepted like the reference does.
inline std::string without_commas(std::string_view s) {
  std::string t;
  t.reserve(s.size());
  for (char c : s)
    if (c != ',') t.push_back(c);
  return t;
}

inline CellKind parse_double_cell(std::string_view v, double* out) {
  if (v.empty()) return CellKind::kEmpty;
  if (fast_decimal(v, out)) return CellKind::kOk;
  if (is_null_cell(v)) return CellKind::kNull;
  if (auto d = parse_double(v)) {
    *out = *d;
    return CellKind::kOk;
  }
  if (v.find(',') != std::string_view::npos) {
    const std::string t = without_commas(v);
    if (auto d = parse_double(t)) {
      *out = *d;
      return CellKind::kOk;
    }
  }
  return CellKind::kBad;
}

inline CellKind parse_int_cell(std::string_view v, int64_t lo, int64_t hi, int64_t* out) {
  if (v.empty()) return CellKind::kEmpty;
  std::string_view s = v;
  if (s.front() == '+') s.remove_prefix(1);
  int64_t x = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), x);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
    if (x < lo || x > hi) return CellKind::kBad;
    *out = x;
    return CellKind::kOk;
  }
  if (is_null_cell(v)) return CellKind::kNull;
  // Integral floats ("48.0") from files re-saved by spreadsheet tools.
  if (auto d = parse_double(v);
      d && std::floor(*d) == *d && *d >= static_cast<double>(lo) && *d <= static_cast<double>(hi)) {
    *out = static_cast<int64_t>(*d);
    return CellKind::kOk;
  }
  return CellKind::kBad;
}

// "digits[.digits]" (at most 16 integer digits): the exact integer-ns value without the general
// parser. Everything else goes to parse_us_to_ns, which agrees on this subset.
inline bool is_eight_digits(uint64_t v) {
  return ((v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
         0x3333333333333333ULL;
}

// Value of eight ASCII digits loaded little-endian (the SWAR method simdjson uses).
inline uint64_t eight_digits(uint64_t v) {
  constexpr uint64_t kMask = 0x000000FF000000FFULL;
  constexpr uint64_t kMul1 = 100 + (uint64_t{1000000} << 32);
  constexpr uint64_t kMul2 = 1 + (uint64_t{10000} << 32);
  v -= 0x3030303030303030ULL;
  v = (v * 10) + (v >> 8);
  return (((v & kMask) * kMul1) + (((v >> 16) & kMask) * kMul2)) >> 32;
}

[[gnu::always_inline]] inline bool fast_us_to_ns(std::string_view s, int64_t* out) {
  const size_t n = s.size();
  size_t i = 0;
  uint64_t whole = 0;
  // Timestamps have 16 integer digits: two 8-byte steps instead of 16 byte steps. Overflow past 19
  // digits only wraps (unsigned) and is rejected by the length check below.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (n - i >= 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (!is_eight_digits(w)) break;
    whole = whole * 100000000 + eight_digits(w);
    i += 8;
  }
#endif
  for (; i < n && is_digit(s[i]); ++i) whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
  // Same bound as parse_us_to_ns: whole * 1000 + 999 + 1 must fit in int64.
  if (i == 0 || i > 16 || whole > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - 1000) / 1000)
    return false;
  uint64_t frac = 0;
  int fd = 0;
  bool round_up = false;
  if (i < n && s[i] == '.') {
    ++i;
    for (; i < n && fd < 3 && is_digit(s[i]); ++i, ++fd) frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
    // Beyond ns the 4th decimal rounds (as parse_us_to_ns does), the rest must still be digits.
    if (i < n && is_digit(s[i])) round_up = s[i] >= '5';
    while (i < n && is_digit(s[i])) ++i;
  }
  if (i != n) return false;
  for (; fd < 3; ++fd) frac *= 10;
  *out = static_cast<int64_t>(whole * 1000 + frac + (round_up ? 1 : 0));
  return true;
}

inline CellKind parse_time_cell(std::string_view v, int64_t* out) {
  if (v.empty()) return CellKind::kEmpty;
  if (fast_us_to_ns(v, out)) return CellKind::kOk;
  if (auto ns = parse_us_to_ns(v)) {
    *out = *ns;
    return CellKind::kOk;
  }
  if (is_null_cell(v)) return CellKind::kNull;
  if (v.find(',') != std::string_view::npos) {
    if (auto ns = parse_us_to_ns(without_commas(v))) {
      *out = *ns;
      return CellKind::kOk;
    }
  }
  return CellKind::kBad;
}

// ---------------------------------------------------------------------------------------------
// Interning. Most string cells repeat (dtypes, formats, core types, kernel names), so a small
// direct-mapped cache per column answers most lookups with one hash and one memcmp before the
// pool's hash map is consulted.

inline uint64_t hash_bytes(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  uint64_t h = s.size() * kMul;
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  // Tail without a byte loop (a byte-wise copy then an 8-byte load stalls store forwarding).
  uint64_t w = 0;
  if (s.size() >= 8) {
    std::memcpy(&w, s.data() + s.size() - 8, 8);
  } else if (n >= 4) {
    uint32_t lo;
    uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    w = (static_cast<uint64_t>(hi) << 32) | lo;
  } else if (n > 0) {
    w = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
        (static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8) |
        (static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16);
  }
  h = (h ^ w) * kMul;
  return h ^ (h >> 32);
}

// Byte equality of two n-byte ranges with word loads that stay inside both: cells are short, and
// a libc memcmp call per cell cost more than the compare itself.
inline bool same_bytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    uint64_t x;
    uint64_t y;
    for (size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) return false;
    }
    std::memcpy(&x, a + n - 8, 8);
    std::memcpy(&y, b + n - 8, 8);
    return x == y;
  }
  if (n >= 4) {
    uint32_t x0;
    uint32_t y0;
    uint32_t x1;
    uint32_t y1;
    std::memcpy(&x0, a, 4);
    std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4);
    std::memcpy(&y1, b + n - 4, 4);
    return x0 == y0 && x1 == y1;
  }
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

class InternCache {
 public:
  explicit InternCache(size_t slots_log2 = 10) : mask_((size_t{1} << slots_log2) - 1), slots_(mask_ + 1) {}

  [[gnu::always_inline]] StrId get(std::string_view s, StringPool& pool) {
    if (s.empty()) return 0;
    // Consecutive rows usually repeat dtypes, formats, core types: check the previous value first.
    if (s.size() == prev_.len && same_bytes(prev_.data, s.data(), s.size())) return prev_.id;
    return get_slow(s, pool);
  }

 private:
  [[gnu::noinline]] StrId get_slow(std::string_view s, StringPool& pool) {
    const uint64_t h = hash_bytes(s);
    Slot& sl = slots_[h & mask_];
    if (sl.hash == h && sl.len == s.size() && same_bytes(sl.data, s.data(), s.size())) {
      prev_ = sl;
      return sl.id;
    }
    const StrId id = pool.intern(s);
    // Pool views never move, so the slot can point at the pooled bytes.
    sl = Slot{h, pool.view(id).data(), id, static_cast<uint32_t>(s.size())};
    prev_ = sl;
    return id;
  }

  struct Slot {
    uint64_t hash = 0;
    const char* data = nullptr;
    StrId id = 0;
    uint32_t len = 0;
  };
  size_t mask_;
  std::vector<Slot> slots_;
  Slot prev_{0, nullptr, 0, UINT32_MAX};
};

// ---------------------------------------------------------------------------------------------
// Column plan.

// Candidate columns of one logical field, in priority order; the first whose trimmed cell is
// non-empty wins (the reference's `pick`).
struct Pick {
  std::array<uint32_t, 8> cols{};
  uint32_t n = 0;
  std::string label;  // header name of the first candidate present, for messages

  bool present() const { return n > 0; }
  [[gnu::always_inline]] std::string_view get(const std::string_view* f) const {
    if (n == 1) return trim_cell(f[cols[0]]);  // the usual case, kept inline
    return get_any(f);
  }
  // The cell of a single-candidate field as written (untrimmed): the fast number parsers reject
  // blanks, so a cell they accept reads the same as its trimmed form and the trim can be skipped.
  // With several candidates the picked, trimmed cell.
  [[gnu::always_inline]] std::string_view raw(const std::string_view* f) const {
    if (n == 1) return f[cols[0]];
    return get_any(f);
  }
  [[gnu::noinline]] std::string_view get_any(const std::string_view* f) const {
    for (uint32_t i = 0; i < n; ++i) {
      const std::string_view v = trim_cell(f[cols[i]]);
      if (!v.empty()) return v;
    }
    return {};
  }
};

struct MetricPlan {
  Pick src;
  size_t out_index = 0;
  bool tentative = false;  // unknown column before Context ID: kept only if numeric
  bool rejected = false;
  uint64_t numeric = 0;
  uint32_t first_col = 0;
};

struct Plan {
  Pick name, type, core, stream, start, dur, wait, end;
  Pick step, device, model, task, op_state, block, mix_block, hf32, context;
  Pick in_shapes, in_dtypes, in_formats, out_shapes, out_dtypes, out_formats;
  std::vector<MetricPlan> metrics;
};

std::string strip_us(std::string_view canonical) {
  std::string s(canonical);
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "(us)") == 0) s.resize(s.size() - 4);
  return s;
}

// Hands out header columns to logical fields. A column marked as used is not offered again, but
// marking happens only after all the core fields are claimed, so they can share a column (the
// reference's `Type` is a candidate of both task_type and accelerator_core).
class PlanBuilder {
 public:
  explicit PlanBuilder(const CsvHeader& h) : h_(h), used_(h.size(), false) {}

  Pick claim(std::initializer_list<std::string_view> candidates) const {
    Pick p;
    for (int c : h_.find_all(candidates)) {
      if (used_[static_cast<size_t>(c)]) continue;
      if (p.n < p.cols.size()) p.cols[p.n++] = static_cast<uint32_t>(c);
    }
    if (p.n > 0) p.label = h_.name(p.cols[0]);
    return p;
  }
  void mark(const Pick& p) {
    for (uint32_t i = 0; i < p.n; ++i) used_[p.cols[i]] = true;
  }
  bool used(size_t i) const { return used_[i]; }

 private:
  const CsvHeader& h_;
  std::vector<bool> used_;
};

Plan build_plan(const CsvHeader& h, model::KernelTable& out) {
  Plan p;
  PlanBuilder b(h);
  p.name = b.claim({"Name", "Op Name", "Kernel Name", "Operation Name"});
  p.type = b.claim({"Task Type", "Kernel Type", "Type"});
  p.core = b.claim({"Accelerator Core", "Core Type", "Task Type", "Kernel Type", "Type"});
  p.stream = b.claim({"Stream ID", "StreamId", "Stream", "stream_id"});
  p.start = b.claim({"Start Time(us)", "Start Time", "Start(us)", "Start", "ts"});
  p.dur = b.claim({"Duration(us)", "Duration", "dur"});
  p.wait = b.claim({"Wait Time(us)", "Wait Time", "Wait(us)", "wait"});
  p.end = b.claim({"End Time(us)", "End Time", "End(us)", "End"});
  p.step = b.claim({"Step Id"});
  p.device = b.claim({"Device_id", "Device ID"});
  p.model = b.claim({"Model ID"});
  p.task = b.claim({"Task ID"});
  p.op_state = b.claim({"OP State"});
  p.block = b.claim({"Block Dim", "Block Num"});
  p.mix_block = b.claim({"Mix Block Dim", "Mix Block Num"});
  p.hf32 = b.claim({"HF32 Eligible"});
  p.context = b.claim({"Context ID"});
  p.in_shapes = b.claim({"Input Shapes", "Input Shape"});
  p.in_dtypes = b.claim({"Input Data Types", "Input Data Type"});
  p.in_formats = b.claim({"Input Formats", "Input Format"});
  p.out_shapes = b.claim({"Output Shapes", "Output Shape"});
  p.out_dtypes = b.claim({"Output Data Types", "Output Data Type"});
  p.out_formats = b.claim({"Output Formats", "Output Format"});
  for (const Pick* k :
       {&p.name,    &p.type,      &p.core,      &p.stream,     &p.start,      &p.dur,        &p.wait,       &p.end,
        &p.step,    &p.device,    &p.model,     &p.task,       &p.op_state,   &p.block,      &p.mix_block,  &p.hf32,
        &p.context, &p.in_shapes, &p.in_dtypes, &p.in_formats, &p.out_shapes, &p.out_dtypes, &p.out_formats})
    b.mark(*k);

  // Pipeline columns: canonical name, then the name without "(us)", then the GUI-style totals.
  for (size_t i = 0; i < std::size(kPipelineMetricNames); ++i) {
    const std::string_view canon = kPipelineMetricNames[i];
    const std::string bare = strip_us(canon);
    Pick src;
    if (i == 0)
      src = b.claim({canon, bare, "AI Core Time(us)"});
    else if (i == 1)
      src = b.claim({canon, bare, "AI Vector Time(us)"});
    else
      src = b.claim({canon, bare});
    if (!src.present()) continue;
    b.mark(src);
    MetricPlan m;
    m.first_col = *std::min_element(src.cols.begin(), src.cols.begin() + src.n);
    m.src = std::move(src);
    m.src.label = std::string(canon);
    p.metrics.push_back(std::move(m));
  }

  const long context_col = p.context.present() ? static_cast<long>(p.context.cols[0]) : -1;
  for (size_t c = 0; c < h.size(); ++c) {
    if (b.used(c) || h.name(c).empty()) continue;
    MetricPlan m;
    m.src.cols[0] = static_cast<uint32_t>(c);
    m.src.n = 1;
    m.src.label = h.name(c);
    m.first_col = static_cast<uint32_t>(c);
    m.tentative = context_col < 0 || static_cast<long>(c) < context_col;
    p.metrics.push_back(std::move(m));
  }
  std::stable_sort(p.metrics.begin(), p.metrics.end(),
                   [](const MetricPlan& a, const MetricPlan& z) { return a.first_col < z.first_col; });
  out.metrics.clear();
  for (MetricPlan& m : p.metrics) {
    m.out_index = out.metrics.size();
    out.metrics.push_back(model::MetricColumn{m.src.label, {}});
  }
  return p;
}

void fill_header_info(const CsvHeader& h, const Plan& p, model::KernelHeaderInfo& info) {
  info.columns = h.names();
  info.has_step_id = p.step.present();
  info.has_device_id = p.device.present();
  info.has_op_state = p.op_state.present();
  info.has_hf32 = p.hf32.present();
  info.has_stream_id = p.stream.present();
  info.level0_short = !p.model.present() && !p.task.present() && !p.stream.present();
  info.block_column = p.block.present() ? h.name(p.block.cols[0]) : std::string();
  const bool block_num = ascii_lower(info.block_column) == "block num" ||
                         (p.mix_block.present() && ascii_lower(h.name(p.mix_block.cols[0])) == "mix block num");
  std::string era;
  if (block_num)
    era = "E4";
  else if (info.has_device_id)
    era = "E3";
  else if (info.has_op_state || info.level0_short)
    era = "E2";
  else
    era = "E1";
  info.era = info.level0_short ? "level0-" + era : era;
}

size_t count_newlines(const char* p, const char* e) {
  size_t nl = 0;
  while (p < e) {
    const void* q = std::memchr(p, '\n', static_cast<size_t>(e - p));
    if (q == nullptr) break;
    ++nl;
    p = static_cast<const char*>(q) + 1;
  }
  return nl;
}

// Row-count estimate for reserving (and prefaulting) the columns: exact for files up to 4 MiB, else
// the densest of four 256 KiB windows spread over the file, so one unusual region (a block of short
// communication rows) does not make the guess far too high or too low.
size_t estimate_rows(std::string_view data) {
  constexpr size_t kExactBelow = size_t{4} << 20;
  constexpr size_t kWindow = size_t{256} << 10;
  const char* d = data.data();
  if (data.size() <= kExactBelow) return count_newlines(d, d + data.size()) + 1;
  double density = 0;
  for (size_t k = 0; k < 4; ++k) {
    const size_t at = k == 3 ? data.size() - kWindow : data.size() / 3 * k;
    density = std::max(density, static_cast<double>(count_newlines(d + at, d + at + kWindow)) / kWindow);
  }
  return static_cast<size_t>(density * static_cast<double>(data.size()) * 1.02) + 16;
}

std::string quote_cell(std::string_view v) {
  std::string s = "'";
  s.append(v.substr(0, 64));
  if (v.size() > 64) s += "...";
  s += "'";
  return s;
}

inline std::string_view strip_outer_quotes(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

class RowReader {
 public:
  RowReader(const Plan& plan, std::string_view file, StringPool& pool, model::KernelTable& out, Stats& stats)
      : plan_(plan),
        file_(file),
        pool_(pool),
        out_(out),
        stats_(stats),
        name_cache_(13),
        shape_in_cache_(12),
        shape_out_cache_(12) {}

  // Reads one data row; false when it was dropped.
  bool read(const std::vector<std::string_view>& fields, uint64_t line) {
    const std::string_view* f = fields.data();
    line_ = line;
    int64_t start = 0;
    // Trimmed first: start cells of E3/E4 files end in a TAB.
    if (const std::string_view v = plan_.start.get(f); v.empty() || !fast_us_to_ns(v, &start)) {
      const CellKind k = parse_time_cell(v, &start);
      if (k != CellKind::kOk) {
        if (wants_sample(stats_, Stat::kd_bad_start_time)) {
          note(Stat::kd_bad_start_time,
               v.empty() ? plan_.start.label + " is empty; row dropped"
                         : plan_.start.label + " " + quote_cell(v) + " is not a number; row dropped");
        } else {
          stats_.inc(Stat::kd_bad_start_time);
        }
        return false;
      }
    }
    int64_t dur = read_nonneg_time(plan_.dur, f, Stat::kd_bad_duration);
    const int64_t wait = read_nonneg_time(plan_.wait, f, Stat::kd_bad_wait);
    if (plan_.end.present()) {
      int64_t end = 0;
      if (parse_time_cell(plan_.end.get(f), &end) == CellKind::kOk && end > start && dur <= 0) dur = end - start;
    }
    if (have_prev_ && start < prev_start_) {
      if (wants_sample(stats_, Stat::kd_rows_out_of_order))
        note(Stat::kd_rows_out_of_order, "row starts before the previous row");
      else
        stats_.inc(Stat::kd_rows_out_of_order);
    }
    have_prev_ = true;
    prev_start_ = start;

    // Cells go into a small per-column chunk (cache resident, no capacity check or pointer reload
    // per cell); full chunks are appended to the table columns with one copy each.
    Chunk& c = *chunk_;
    const size_t k = k_;
    c.source_line[k] = line;
    c.start_ns[k] = start;
    c.dur_ns[k] = dur;
    c.wait_ns[k] = wait;
    c.step_id[k] = static_cast<int32_t>(read_int(plan_.step, f, kI32Lo, kI32Hi, kAbsentI32));
    c.device_id[k] = static_cast<int32_t>(read_int(plan_.device, f, kI32Lo, kI32Hi, kAbsentI32));
    c.model_id[k] = read_int(plan_.model, f, kI64Lo, kI64Hi, kAbsentI64);
    c.task_id[k] = read_int(plan_.task, f, kI64Lo, kI64Hi, kAbsentI64);
    c.stream_id[k] = static_cast<int32_t>(read_int(plan_.stream, f, kI32Lo, kI32Hi, kAbsentI32));
    c.block_dim[k] = static_cast<int32_t>(read_int(plan_.block, f, kI32Lo, kI32Hi, kAbsentI32));
    c.mix_block_dim[k] = static_cast<int32_t>(read_int(plan_.mix_block, f, kI32Lo, kI32Hi, kAbsentI32));
    c.context_id[k] = static_cast<int32_t>(read_int(plan_.context, f, kI32Lo, kI32Hi, kAbsentI32));

    c.name[k] = name_cache_.get(plan_.name.get(f), pool_);
    c.type[k] = type_cache_.get(plan_.type.get(f), pool_);
    c.accelerator_core[k] = core_cache_.get(plan_.core.get(f), pool_);
    c.op_state[k] = op_state_cache_.get(plan_.op_state.get(f), pool_);
    c.hf32_eligible[k] = hf32_cache_.get(plan_.hf32.get(f), pool_);
    c.input_shapes[k] = shape_in_cache_.get(strip_outer_quotes(plan_.in_shapes.get(f)), pool_);
    c.input_dtypes[k] = dtype_in_cache_.get(plan_.in_dtypes.get(f), pool_);
    c.input_formats[k] = format_in_cache_.get(plan_.in_formats.get(f), pool_);
    c.output_shapes[k] = shape_out_cache_.get(strip_outer_quotes(plan_.out_shapes.get(f)), pool_);
    c.output_dtypes[k] = dtype_out_cache_.get(plan_.out_dtypes.get(f), pool_);
    c.output_formats[k] = format_out_cache_.get(plan_.out_formats.get(f), pool_);

    // Without metric columns metric_chunk_ is empty and data() may be null: null + k is UB.
    double* mv = metrics_.empty() ? nullptr : metric_chunk_.data() + k;
    for (MetricPlan& m : metrics_) {
      double& slot = *mv;
      mv += kChunk;
      if (m.rejected) {
        slot = kNaN;
        continue;
      }
      double d = 0;
      const std::string_view raw = m.src.raw(f);
      // "0.0" / "0": over a third of all metric cells (the idle pipe of single-core kernels).
      if ((raw.size() == 3 && raw[0] == '0' && raw[1] == '.' && raw[2] == '0') ||
          (raw.size() == 1 && raw[0] == '0')) {
        ++m.numeric;
        slot = 0.0;
        continue;
      }
      if (!raw.empty() && fast_decimal(raw, &d)) {
        ++m.numeric;
        slot = d;
        continue;
      }
      const std::string_view v = m.src.get(f);
      switch (parse_double_cell(v, &d)) {
        case CellKind::kOk:
          ++m.numeric;
          slot = d;
          break;
        case CellKind::kEmpty:
          slot = kNaN;
          break;
        case CellKind::kNull:
          if (!m.tentative) count_na(m.src.label);
          slot = kNaN;
          break;
        case CellKind::kBad:
          if (m.tentative) {
            m.rejected = true;  // a text column: dropped after the last row
          } else if (wants_sample(stats_, Stat::kd_bad_metric)) {
            note(Stat::kd_bad_metric, m.src.label + " " + quote_cell(v) + " is not a number; read as absent");
          } else {
            stats_.inc(Stat::kd_bad_metric);
          }
          slot = kNaN;
          break;
      }
    }
    if (++k_ == kChunk) flush();
    return true;
  }

  std::vector<MetricPlan>& metrics() { return metrics_; }
  void set_metrics(std::vector<MetricPlan> m) {
    metrics_ = std::move(m);
    metric_chunk_.assign(metrics_.size() * kChunk, 0.0);
  }

  /// Appends the buffered rows to the table; call once after the last row.
  void flush() {
    const Chunk& c = *chunk_;
    const size_t n = k_;
    auto put = [n](auto& col, const auto* src) { col.insert(col.end(), src, src + n); };
    put(out_.source_line, c.source_line);
    put(out_.start_ns, c.start_ns);
    put(out_.dur_ns, c.dur_ns);
    put(out_.wait_ns, c.wait_ns);
    put(out_.step_id, c.step_id);
    put(out_.device_id, c.device_id);
    put(out_.model_id, c.model_id);
    put(out_.task_id, c.task_id);
    put(out_.stream_id, c.stream_id);
    put(out_.block_dim, c.block_dim);
    put(out_.mix_block_dim, c.mix_block_dim);
    put(out_.context_id, c.context_id);
    put(out_.name, c.name);
    put(out_.type, c.type);
    put(out_.accelerator_core, c.accelerator_core);
    put(out_.op_state, c.op_state);
    put(out_.hf32_eligible, c.hf32_eligible);
    put(out_.input_shapes, c.input_shapes);
    put(out_.input_dtypes, c.input_dtypes);
    put(out_.input_formats, c.input_formats);
    put(out_.output_shapes, c.output_shapes);
    put(out_.output_dtypes, c.output_dtypes);
    put(out_.output_formats, c.output_formats);
    for (size_t i = 0; i < metrics_.size(); ++i)
      put(out_.metrics[metrics_[i].out_index].values, metric_chunk_.data() + i * kChunk);
    k_ = 0;
  }

 private:
  void note(Stat s, std::string_view reason) { note_line(stats_, s, file_, line_, reason); }

  void count_na(const std::string& column) {
    if (wants_sample(stats_, Stat::kd_na_value))
      note(Stat::kd_na_value, column + " is N/A; read as absent");
    else
      stats_.inc(Stat::kd_na_value);
  }

  [[gnu::always_inline]] int64_t read_nonneg_time(const Pick& p, const std::string_view* f, Stat bad) {
    if (!p.present()) return 0;
    int64_t ns = 0;
    if (const std::string_view raw = p.raw(f); !raw.empty() && fast_us_to_ns(raw, &ns)) return ns;
    return read_nonneg_time_slow(p, f, bad);
  }

  [[gnu::noinline]] int64_t read_nonneg_time_slow(const Pick& p, const std::string_view* f, Stat bad) {
    const std::string_view v = p.get(f);
    int64_t ns = 0;
    switch (parse_time_cell(v, &ns)) {
      case CellKind::kOk:
        if (ns >= 0) return ns;
        break;
      case CellKind::kEmpty:
        return 0;
      case CellKind::kNull:
        count_na(p.label);
        return 0;
      case CellKind::kBad:
        break;
    }
    if (wants_sample(stats_, bad))
      note(bad, p.label + " " + quote_cell(v) + " is not a non-negative number; read as 0");
    else
      stats_.inc(bad);
    return 0;
  }

  [[gnu::always_inline]] int64_t read_int(const Pick& p, const std::string_view* f, int64_t lo, int64_t hi,
                                          int64_t absent) {
    if (!p.present()) return absent;
    const std::string_view v = p.raw(f);
    // Plain non-negative integers of up to 18 digits (every integer cell of real files) need no
    // from_chars call.
    if (!v.empty() && v.size() <= 18) {
      int64_t x = 0;
      size_t i = 0;
      for (; i < v.size() && is_digit(v[i]); ++i) x = x * 10 + (v[i] - '0');
      if (i == v.size() && x <= hi) return x;
    }
    return read_int_slow(p, p.get(f), lo, hi, absent);
  }

  [[gnu::noinline]] int64_t read_int_slow(const Pick& p, std::string_view v, int64_t lo, int64_t hi, int64_t absent) {
    int64_t x = 0;
    switch (parse_int_cell(v, lo, hi, &x)) {
      case CellKind::kOk:
        return x;
      case CellKind::kEmpty:
        return absent;
      case CellKind::kNull:
        count_na(p.label);
        return absent;
      case CellKind::kBad:
        break;
    }
    if (wants_sample(stats_, Stat::kd_bad_integer))
      note(Stat::kd_bad_integer, p.label + " " + quote_cell(v) + " is not an integer; read as absent");
    else
      stats_.inc(Stat::kd_bad_integer);
    return absent;
  }

  static constexpr size_t kChunk = 64;
  struct Chunk {
    uint64_t source_line[kChunk];
    int64_t start_ns[kChunk], dur_ns[kChunk], wait_ns[kChunk], model_id[kChunk], task_id[kChunk];
    int32_t step_id[kChunk], device_id[kChunk], stream_id[kChunk], block_dim[kChunk], mix_block_dim[kChunk],
        context_id[kChunk];
    StrId name[kChunk], type[kChunk], accelerator_core[kChunk], op_state[kChunk], hf32_eligible[kChunk];
    StrId input_shapes[kChunk], input_dtypes[kChunk], input_formats[kChunk];
    StrId output_shapes[kChunk], output_dtypes[kChunk], output_formats[kChunk];
  };

  const Plan& plan_;
  std::vector<MetricPlan> metrics_;
  std::unique_ptr<Chunk> chunk_ = std::make_unique<Chunk>();
  std::vector<double> metric_chunk_;  // metric i of buffered row k at [i * kChunk + k]
  size_t k_ = 0;
  std::string_view file_;
  StringPool& pool_;
  model::KernelTable& out_;
  Stats& stats_;
  uint64_t line_ = 0;
  bool have_prev_ = false;
  int64_t prev_start_ = 0;
  InternCache name_cache_, type_cache_, core_cache_, op_state_cache_, hf32_cache_;
  InternCache shape_in_cache_, shape_out_cache_, dtype_in_cache_, dtype_out_cache_, format_in_cache_, format_out_cache_;
};

// Output columns of a big file are together as large as the file. Touching them page by page costs
// one fault per 4 KiB (~47k for a 200 MB file), which in a VM guest cost more than the parsing
// itself. So the reserved buffers of large columns ask for transparent huge pages and are populated
// in one call each. Buffers under 2 MiB are left alone; for larger ones the row estimate is a close
// upper bound (see estimate_rows), so only a few percent is committed needlessly.
template <typename T>
void prefault(std::vector<T>& v) {
#if defined(MADV_POPULATE_WRITE)
  constexpr uintptr_t kPage = 4096;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const size_t bytes = v.capacity() * sizeof(T);
  if (bytes < kHuge) return;
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  const uintptr_t hlo = (begin + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hhi = (begin + bytes) & ~(kHuge - 1);
  if (hhi > hlo) madvise(reinterpret_cast<void*>(hlo), hhi - hlo, MADV_HUGEPAGE);
  const uintptr_t lo = (begin + kPage - 1) & ~(kPage - 1);
  const uintptr_t hi = (begin + bytes) & ~(kPage - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);  // best effort
#else
  (void)v;
#endif
}

void reserve_all(model::KernelTable& t, size_t n) {
  t.source_line.reserve(n);
  t.step_id.reserve(n);
  t.device_id.reserve(n);
  t.model_id.reserve(n);
  t.task_id.reserve(n);
  t.stream_id.reserve(n);
  t.name.reserve(n);
  t.type.reserve(n);
  t.op_state.reserve(n);
  t.accelerator_core.reserve(n);
  t.start_ns.reserve(n);
  t.dur_ns.reserve(n);
  t.wait_ns.reserve(n);
  t.block_dim.reserve(n);
  t.mix_block_dim.reserve(n);
  t.hf32_eligible.reserve(n);
  t.input_shapes.reserve(n);
  t.input_dtypes.reserve(n);
  t.input_formats.reserve(n);
  t.output_shapes.reserve(n);
  t.output_dtypes.reserve(n);
  t.output_formats.reserve(n);
  t.context_id.reserve(n);
  for (auto& m : t.metrics) m.values.reserve(n);
  auto advise = [](auto&... cols) { (prefault(cols), ...); };
  advise(t.source_line, t.step_id, t.device_id, t.model_id, t.task_id, t.stream_id, t.name, t.type, t.op_state,
         t.accelerator_core, t.start_ns, t.dur_ns, t.wait_ns, t.block_dim, t.mix_block_dim, t.hf32_eligible,
         t.input_shapes, t.input_dtypes, t.input_formats, t.output_shapes, t.output_dtypes, t.output_formats,
         t.context_id);
  for (auto& m : t.metrics) prefault(m.values);
}

// Estimates grossly above the real count (a sample of short rows) would waste memory; fix the
// capacity once the real count is known when the guess was far off.
void shrink_if_wasteful(model::KernelTable& t) {
  if (t.start_ns.capacity() <= t.start_ns.size() + t.start_ns.size() / 4 + 1024) return;
  t.source_line.shrink_to_fit();
  t.step_id.shrink_to_fit();
  t.device_id.shrink_to_fit();
  t.model_id.shrink_to_fit();
  t.task_id.shrink_to_fit();
  t.stream_id.shrink_to_fit();
  t.name.shrink_to_fit();
  t.type.shrink_to_fit();
  t.op_state.shrink_to_fit();
  t.accelerator_core.shrink_to_fit();
  t.start_ns.shrink_to_fit();
  t.dur_ns.shrink_to_fit();
  t.wait_ns.shrink_to_fit();
  t.block_dim.shrink_to_fit();
  t.mix_block_dim.shrink_to_fit();
  t.hf32_eligible.shrink_to_fit();
  t.input_shapes.shrink_to_fit();
  t.input_dtypes.shrink_to_fit();
  t.input_formats.shrink_to_fit();
  t.output_shapes.shrink_to_fit();
  t.output_dtypes.shrink_to_fit();
  t.output_formats.shrink_to_fit();
  t.context_id.shrink_to_fit();
  for (auto& m : t.metrics) m.values.shrink_to_fit();
}

bool all_blank(std::string_view data) {
  for (char c : data)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') return false;
  return true;
}

Status import_impl(std::string_view content, std::string_view display_name, MappedFile* file, StringPool& pool,
                   model::KernelTable& out, Stats& stats, const CsvOptions& options) {
  out = model::KernelTable{};
  CsvCursor cur(content, display_name, stats, options);
  if (file != nullptr) cur.attach(file);
  std::vector<std::string_view> fields;
  fields.reserve(64);
  if (!cur.next_row(fields)) {
    if (!cur.status().ok()) return cur.status();
    std::string_view body = content;
    if (body.size() >= 3 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
    if (all_blank(body)) return file_error(ErrorCode::kSchema, display_name, "", "empty file");
    return file_error(ErrorCode::kParse, display_name, "line 1", "no complete header row (unterminated quote)");
  }
  const CsvHeader header(fields);
  const std::string header_place = "line " + std::to_string(cur.line());
  Plan plan = build_plan(header, out);
  for (const auto& [pick, column] : {std::pair<const Pick*, const char*>{&plan.name, "Name"},
                                     std::pair<const Pick*, const char*>{&plan.start, "Start Time(us)"}}) {
    if (pick->present()) continue;
    out = model::KernelTable{};
    return file_error(ErrorCode::kSchema, display_name, header_place,
                      std::string("missing required column '") + column + "' (header has: " + header.joined() + ")");
  }
  fill_header_info(header, plan, out.header);
  reserve_all(out, estimate_rows(content));

  RowReader reader(plan, display_name, pool, out, stats);
  reader.set_metrics(std::move(plan.metrics));
  while (cur.next_row(fields)) reader.read(fields, cur.line());
  reader.flush();
  if (!cur.status().ok()) {
    out = {};
    return cur.status();
  }

  // Unknown columns before Context ID turned out to be text (or held nothing): not metrics.
  std::vector<model::MetricColumn> kept;
  kept.reserve(out.metrics.size());
  for (const MetricPlan& m : reader.metrics()) {
    if (m.tentative && (m.rejected || m.numeric == 0)) continue;
    kept.push_back(std::move(out.metrics[m.out_index]));
  }
  out.metrics = std::move(kept);
  shrink_if_wasteful(out);
  return {};
}

}  // namespace

Status import_kernel_details(const std::filesystem::path& path, StringPool& pool, model::KernelTable& out, Stats& stats,
                             const CsvOptions& options) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) {
    out = model::KernelTable{};
    return mapped.status();
  }
  MappedFile file = std::move(mapped).value();
  return import_impl(file.data(), path.string(), &file, pool, out, stats, options);
}

Status import_kernel_details(std::string_view content, std::string_view display_name, StringPool& pool,
                             model::KernelTable& out, Stats& stats, const CsvOptions& options) {
  return import_impl(content, display_name, nullptr, pool, out, stats, options);
}

}  // namespace ascprof::importers
