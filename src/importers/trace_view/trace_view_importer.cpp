// trace_view.json import: a byte scanner (object_scanner) finds each top-level event object, events are
// parsed with simdjson On-Demand (a run of events at a time, copied into one padded buffer as a JSON
// array), and TraceBuilder places them into the tables. The file is never one simdjson document, so there
// is no 4 GiB limit and damage between events costs only the damaged bytes.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "event_fields.hpp"
#include "mem_advice.hpp"
#include "object_scanner.hpp"
#include "trace_builder.hpp"

namespace ascprof::importers {

namespace {

using namespace tv;  // NOLINT(google-build-using-namespace): private implementation namespace
namespace od = simdjson::ondemand;
using simdjson::error_code;

std::optional<int64_t> integral_from_text(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return v;
  // "3.0", "1e3": accept only exact integers.
  const auto d = parse_double(s);
  if (!d || std::trunc(*d) != *d || std::fabs(*d) > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(*d);
}

class Importer {
 public:
  Importer(std::string_view data, std::string file, MappedFile* mapped, StringPool& pool, model::TraceTables& out,
           Stats& stats, const TraceViewOptions& opts)
      : data_(data),
        file_(file),
        mapped_(mapped),
        out_(out),
        stats_(stats),
        opts_(opts),
        builder_(std::move(file), pool, out, stats) {
    builder_.set_args_reader(&Importer::reread_args, this);
  }

  Status run();

 private:
  enum class Next { kGap, kObject, kStop };
  struct Step {
    Next next;
    size_t pos;  // kGap: first byte after the object; kObject: start of a resynchronised object
  };
  // What lies between two events (computed without side effects, reported by the caller).
  struct Gap {
    bool end = false;        // no further object: the events array ended (or the file did)
    size_t obj = 0;          // start of the next object when !end
    bool damage = false;     // bytes that are not ", " / whitespace (or a missing comma)
    size_t damage_off = 0;
    size_t damage_len = 0;
    const char* reason = "";
    bool truncated = false;  // the file ended before the closing ']'
  };
  // An event copied into the batch buffer.
  struct Pending {
    uint64_t file_off;
    uint32_t buf_off;
    uint32_t len;
  };

  Status find_trace_events(size_t obj_start, size_t* first);
  void scan(size_t pos, bool object_form);
  Gap read_gap(size_t gap, bool after_object, bool object_form) const;
  Step take_object(size_t begin);
  Step process_single(size_t begin, size_t end);
  size_t flush();
  void copy_run();
  error_code parse_batch(size_t* done);
  error_code parse_event(const char* p, size_t len, size_t capacity);
  error_code parse_fields(od::object& obj);
  error_code parse_args(od::value& v);
  enum class ArgsAction { kSkip, kRead };
  ArgsAction args_action();
  static bool reread_args(void* ctx, uint64_t offset, ArgFields* out);
  void dispatch(uint64_t offset);
  void damaged(size_t offset, size_t length, std::string reason);
  void truncated(size_t offset, std::string_view reason);
  std::string where(uint64_t offset, std::string_view reason) const { return builder_.where(offset, reason); }
  size_t skip_ws(size_t p) const {
    while (p < data_.size() && is_json_ws(data_[p])) ++p;
    return p;
  }

  // Events up to this size join a batch; a batch is parsed once it holds this many bytes.
  static constexpr size_t kBatchMaxEvent = size_t{16} << 10;
  static constexpr size_t kBatchBytes = size_t{64} << 10;
  // Largest separator kept inside a run of consecutive events (longer gaps start a new run).
  static constexpr size_t kMaxRunGap = 64;
  // File bytes mapped ahead of the scanner in one madvise call each (far fewer page faults).
  static constexpr size_t kPopulateAhead = size_t{8} << 20;

  std::string_view data_;
  std::string file_;
  MappedFile* mapped_;
  model::TraceTables& out_;
  Stats& stats_;
  TraceViewOptions opts_;
  TraceBuilder builder_;
  od::parser parser_;
  EventFields ev_;
  std::unique_ptr<char[]> buf_;  // single-event copies
  size_t buf_cap_ = 0;
  std::unique_ptr<char[]> batch_;  // '[' ev ',' ev ... ']' + padding
  size_t batch_size_ = 0;
  std::vector<Pending> pending_;
  size_t run_begin_ = kNpos;  // file offset of the run not yet copied into batch_ (kNpos: none)
  size_t run_buf_ = 0;        // where that run goes in batch_
  size_t next_release_ = 0;
  size_t populated_ = 0;
  bool force_args_ = false;  // re-reading an event for its args
  bool stopped_ = false;     // scan() returned early because the run was interrupted
  uint32_t until_stop_check_ = 0;
};

Status Importer::run() {
  out_ = model::TraceTables{};
  out_.file_bytes = data_.size();
  builder_.reserve_for(data_.size());
  size_t pos = 0;
  if (data_.size() >= 3 && data_.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  pos = skip_ws(pos);
  if (pos >= data_.size())
    return file_error(ErrorCode::kParse, file_, "byte " + std::to_string(pos),
                      data_.empty() ? "empty file: no JSON array of trace events" : "no JSON array of trace events");
  const char c = data_[pos];
  if (c == '[') {
    scan(pos + 1, false);
  } else if (c == '{') {
    size_t first = 0;
    ASCPROF_RETURN_IF_ERROR(find_trace_events(pos, &first));
    scan(first, true);
  } else {
    return file_error(ErrorCode::kParse, file_, "byte " + std::to_string(pos),
                      std::string("expected '[' (array of trace events) or '{' at the start, found '") + c + "'");
  }
  if (stopped_) return interrupted_status(file_);
  builder_.finish();
  sort_aicore_freq(out_.aicore_freq);
  return {};
}

Status Importer::find_trace_events(size_t obj_start, size_t* first) {
  size_t pos = obj_start + 1;
  auto at = [](size_t p) { return "byte " + std::to_string(p); };
  for (;;) {
    pos = skip_ws(pos);
    if (pos >= data_.size())
      return file_error(ErrorCode::kParse, file_, at(pos), "file ends inside the top-level object");
    if (data_[pos] == '}')
      return file_error(ErrorCode::kSchema, file_, at(pos),
                        "no traceEvents array (expected [events...] or {\"traceEvents\": [events...]})");
    if (data_[pos] != '"')
      return file_error(ErrorCode::kParse, file_, at(pos), "expected a key in the top-level object");
    const size_t key_end = skip_string(data_, pos);
    if (key_end == kNpos) return file_error(ErrorCode::kParse, file_, at(pos), "unterminated key");
    const std::string_view key = data_.substr(pos + 1, key_end - pos - 2);
    pos = skip_ws(key_end);
    if (pos >= data_.size() || data_[pos] != ':')
      return file_error(ErrorCode::kParse, file_, at(pos), "expected ':' after a key");
    pos = skip_ws(pos + 1);
    if (key == "traceEvents") {
      if (pos < data_.size() && data_[pos] == '[') {
        *first = pos + 1;
        return {};
      }
      return file_error(ErrorCode::kSchema, file_, at(pos), "traceEvents is not an array");
    }
    const size_t value_end = skip_value(data_, pos);
    if (value_end == kNpos)
      return file_error(ErrorCode::kParse, file_, at(pos),
                        "file ends inside the value of key '" + std::string(key) + "'");
    pos = skip_ws(value_end);
    if (pos < data_.size() && data_[pos] == ',') {
      ++pos;
      continue;
    }
    if (pos < data_.size() && data_[pos] == '}')
      return file_error(ErrorCode::kSchema, file_, at(pos),
                        "no traceEvents array (expected [events...] or {\"traceEvents\": [events...]})");
    return file_error(ErrorCode::kParse, file_, at(pos), "expected ',' or '}' in the top-level object");
  }
}

void Importer::damaged(size_t offset, size_t length, std::string reason) {
  stats_.note(Stat::tv_damaged_span, where(offset, reason + " (" + std::to_string(length) + " bytes)"));
  out_.damaged_spans.push_back(model::DamagedSpan{offset, length, std::move(reason)});
}

void Importer::truncated(size_t offset, std::string_view reason) {
  stats_.note(Stat::tv_truncated, where(offset, reason));
}

void Importer::scan(size_t pos, bool object_form) {
  size_t gap = pos;
  bool after_object = false;
  size_t obj = kNpos;  // set when the next object start is known (after a resynchronisation)
  for (;;) {
    // a multi-GB trace takes seconds: a SIGTERM must not wait for its end (one load per 4096 events)
    if (++until_stop_check_ == 4096) {
      until_stop_check_ = 0;
      if (interrupted()) {
        stopped_ = true;
        return;
      }
    }
    if (obj == kNpos) {
      const Gap g = read_gap(gap, after_object, object_form);
      if (g.damage || g.truncated || g.end) {
        // Batched events come first: parse them before reporting, so reports stay in file order, and
        // drop this gap if the batch had to resynchronise inside one of its events.
        const size_t r = flush();
        if (r != kNpos) {
          obj = r;
          continue;
        }
        if (g.damage) damaged(g.damage_off, g.damage_len, g.reason);
        if (g.truncated) truncated(data_.size(), "file ends before the closing ']' of the events array");
        if (g.end) return;
      }
      obj = g.obj;
    }
    const Step s = take_object(obj);
    obj = kNpos;
    if (s.next == Next::kStop) return;
    if (s.next == Next::kObject) {  // resynchronised inside a damaged event
      obj = s.pos;
      continue;
    }
    gap = s.pos;
    after_object = true;
    if (mapped_ != nullptr && gap > next_release_) {
      mapped_->release_before(gap);
      next_release_ = gap + (size_t{16} << 20);
    }
    if (mapped_ != nullptr && gap + kPopulateAhead / 2 > populated_ && populated_ < data_.size()) {
      const size_t len = std::min(kPopulateAhead, data_.size() - populated_);
      populate_read(data_.data() + populated_, len);
      populated_ += len;
    }
  }
}

// Reads the bytes after an object (or after '['): normally ", " then '{'.
Importer::Gap Importer::read_gap(size_t gap, bool after_object, bool object_form) const {
  const size_t n = data_.size();
  const char* d = data_.data();
  Gap g;
  if (after_object && gap + 2 < n && d[gap] == ',' && d[gap + 1] == ' ' && d[gap + 2] == '{') {
    g.obj = gap + 2;
    return g;
  }
  auto damage = [&](size_t len, const char* reason) {
    g.damage = true;
    g.damage_off = gap;
    g.damage_len = len;
    g.reason = reason;
  };
  static constexpr const char* kInvalid = "invalid bytes between events";
  size_t p = gap;
  bool comma = false, junk = false;
  for (;;) {
    if (p >= n) {
      g.end = true;
      g.truncated = true;
      if (junk) damage(n - gap, kInvalid);
      return g;
    }
    const char c = d[p];
    if (is_json_ws(c)) {
      ++p;
      continue;
    }
    if (c == ',') {
      if (!after_object || comma) junk = true;
      comma = true;
      ++p;
      continue;
    }
    if (c == '{') break;
    if (c == ']') {
      if (comma) junk = true;  // trailing comma
      const size_t rest = skip_ws(p + 1);
      if (object_form || rest >= n) {
        g.end = true;
        if (junk) damage(p - gap, kInvalid);
        return g;
      }
      const void* hit = std::memchr(d + rest, '{', n - rest);
      if (hit == nullptr) {
        g.end = true;
        damage(n - gap, "bytes after the closing ']' of the events array");
        return g;
      }
      g.obj = static_cast<size_t>(static_cast<const char*>(hit) - d);
      damage(g.obj - gap, "events array closed and another one opened (torch_npu concatenation defect)");
      return g;
    }
    // Garbage: skip to the next '{' or ']' whichever comes first.
    // In chunks, releasing what was skipped: a damaged stretch can be gigabytes (a 4 GiB hole of zeros
    // after a killed writer) and must neither stay resident nor be walked byte by byte.
    junk = true;
    while (p < n) {
      const size_t end = std::min(n, p + (size_t{1} << 20));
      const char* open = static_cast<const char*>(std::memchr(d + p, '{', end - p));
      const char* close = static_cast<const char*>(std::memchr(d + p, ']', open ? open - (d + p) : end - p));
      if (close != nullptr || open != nullptr) {
        p = static_cast<size_t>((close != nullptr ? close : open) - d);
        break;
      }
      p = end;
      if (mapped_ != nullptr) mapped_->release_before(p);
    }
  }
  g.obj = p;
  if (junk) damage(p - gap, kInvalid);
  else if (after_object && !comma) damage(0, "missing ',' between events (concatenated objects)");
  return g;
}

Importer::Step Importer::take_object(size_t begin) {
  const size_t end = find_object_end(data_, begin);
  const size_t len = end == kNpos ? 0 : end - begin + 1;
  if (end != kNpos && opts_.parse_mode == TraceViewParseMode::kBatched && len <= kBatchMaxEvent &&
      len <= opts_.max_event_bytes) {
    if (batch_ == nullptr) {
      batch_ = std::make_unique<char[]>(kBatchBytes + kBatchMaxEvent + kMaxRunGap + 2 + simdjson::SIMDJSON_PADDING);
      pending_.reserve(kBatchBytes / 64);
    }
    // Consecutive events are copied as one run of file bytes, separators included: a pending event means
    // the gap before this one was clean (whitespace and exactly one comma, see scan()), so the run is
    // still a valid array body, and one large copy is far cheaper than one per event.
    const Pending* last = pending_.empty() ? nullptr : &pending_.back();
    const size_t last_end = last == nullptr ? 0 : last->file_off + last->len;
    if (last != nullptr && run_begin_ != kNpos && begin - last_end <= kMaxRunGap) {
      batch_size_ += begin - last_end;
    } else {
      copy_run();
      batch_[batch_size_++] = pending_.empty() ? '[' : ',';
      run_begin_ = begin;
      run_buf_ = batch_size_;
    }
    pending_.push_back(Pending{begin, static_cast<uint32_t>(batch_size_), static_cast<uint32_t>(len)});
    batch_size_ += len;
    if (batch_size_ >= kBatchBytes) {
      const size_t r = flush();
      if (r != kNpos) return {Next::kObject, r};
    }
    return {Next::kGap, end + 1};
  }
  // Truncated, oversized or unbatched: earlier batched events first, then this one alone.
  const size_t r = flush();
  if (r != kNpos) return {Next::kObject, r};
  return process_single(begin, end);
}

// Parses the pending batch and dispatches its events. When the batch document fails, the events from the
// failing one on are parsed one by one, which reports each error at its own offset; if that resynchronises
// inside an event, the rest of the batch is dropped and the scan restarts at the returned offset.
size_t Importer::flush() {
  if (pending_.empty()) return kNpos;
  size_t done = 0;
  const error_code err = parse_batch(&done);
  size_t restart = kNpos;
  if (err != simdjson::SUCCESS) {
    for (size_t i = done; i < pending_.size(); ++i) {
      const Pending& ev = pending_[i];
      const Step s = process_single(ev.file_off, ev.file_off + ev.len - 1);
      if (s.next == Next::kObject) {
        restart = s.pos;
        break;
      }
    }
  }
  pending_.clear();
  batch_size_ = 0;
  run_begin_ = kNpos;
  return restart;
}

void Importer::copy_run() {
  if (run_begin_ == kNpos) return;
  std::memcpy(batch_.get() + run_buf_, data_.data() + run_begin_, batch_size_ - run_buf_);
  run_begin_ = kNpos;
}

error_code Importer::parse_batch(size_t* done) {
  copy_run();
  batch_[batch_size_] = ']';
  std::memset(batch_.get() + batch_size_ + 1, ' ', simdjson::SIMDJSON_PADDING);
  const size_t size = batch_size_ + 1;
  od::document doc;
  error_code err = parser_.iterate(simdjson::padded_string_view(batch_.get(), size, size + simdjson::SIMDJSON_PADDING))
                       .get(doc);
  if (err) return err;
  od::array arr;
  if ((err = doc.get_array().get(arr))) return err;
  size_t i = 0;
  for (auto element : arr) {
    od::value v;
    if ((err = std::move(element).get(v))) return err;
    // Each element must start where its event was copied, or the batch lost alignment (malformed event).
    const char* at = nullptr;
    if ((err = v.current_location().get(at))) return err;
    if (i >= pending_.size() || at != batch_.get() + pending_[i].buf_off) return simdjson::TAPE_ERROR;
    od::object obj;
    if ((err = v.get_object().get(obj))) return err;
    ev_.reset();
    if ((err = parse_fields(obj))) return err;
    dispatch(pending_[i].file_off);
    *done = ++i;
  }
  return i == pending_.size() ? simdjson::SUCCESS : simdjson::TAPE_ERROR;
}

Importer::Step Importer::process_single(size_t begin, size_t end) {
  if (end == kNpos) {
    const size_t r = find_resync_point(data_, begin, data_.size());
    if (r != kNpos) {
      damaged(begin, r - begin, "event never closes; resynchronised at byte " + std::to_string(r));
      return {Next::kObject, r};
    }
    truncated(begin, "file ends inside the event starting here");
    return {Next::kStop, 0};
  }
  const size_t len = end - begin + 1;
  if (len > opts_.max_event_bytes) {
    ++out_.events_total;
    stats_.note(Stat::tv_event_too_large,
                where(begin, "event of " + std::to_string(len) + " bytes exceeds the bound of " +
                                 std::to_string(opts_.max_event_bytes) + " bytes"));
    return {Next::kGap, end + 1};
  }
  // Always a space-padded copy: On-Demand may read the byte after the document when it skips a malformed
  // value, and the next event's '}' or ',' there would hide the error.
  const size_t cap = len + simdjson::SIMDJSON_PADDING;
  if (buf_cap_ < cap) {
    buf_cap_ = std::max(cap, buf_cap_ * 2);
    buf_ = std::make_unique<char[]>(buf_cap_);
  }
  std::memcpy(buf_.get(), data_.data() + begin, len);
  std::memset(buf_.get() + len, ' ', simdjson::SIMDJSON_PADDING);
  const error_code err = parse_event(buf_.get(), len, cap);
  if (len > (size_t{8} << 20)) parser_ = od::parser{};  // drop buffers sized for a huge event
  if (err != simdjson::SUCCESS) {
    const size_t r = find_resync_point(data_, begin, end + 1);
    if (r != kNpos) {
      damaged(begin, r - begin,
              std::string("unparseable bytes (") + simdjson::error_message(err) + "); resynchronised at byte " +
                  std::to_string(r));
      return {Next::kObject, r};
    }
    ++out_.events_total;
    stats_.note(Stat::tv_event_bad_json, where(begin, simdjson::error_message(err)));
    return {Next::kGap, end + 1};
  }
  dispatch(begin);
  return {Next::kGap, end + 1};
}

void Importer::dispatch(uint64_t offset) {
  ++out_.events_total;
  const EventFields& ev = ev_;
  if ((ev.has & kHasPh) == 0) {
    stats_.note(Stat::tv_event_missing_field, where(offset, "event without ph"));
    return;
  }
  const char ph = ev.ph.size() == 1 ? ev.ph[0] : '\0';
  switch (ph) {
    case 'X': builder_.add_complete(ev, offset); return;
    case 'M':
      ++out_.metadata_events;
      builder_.add_metadata(ev, offset);
      return;
    case 's':
    case 'f': builder_.add_flow(ev, offset, static_cast<uint8_t>(ph)); return;
    case 'C':
      ++out_.counter_events;
      // (an event without a name keeps the previous event's name view: test kHasName first; the
      // fuzzer found that view pointing into a freed unescape buffer)
      if ((ev.has & kHasName) != 0 && ev.name == kAicoreFreqCounter) {
        if ((ev.args.present & kArgMhz) != 0 && (ev.has & kHasTs) != 0 && ev.args.mhz >= 0 && ev.args.mhz < 1e6) {
          out_.aicore_freq.ts_ns.push_back(ev.ts_ns);
          out_.aicore_freq.mhz.push_back(static_cast<uint32_t>(std::lround(ev.args.mhz)));
        } else {
          stats_.note(Stat::tv_event_missing_field, where(offset, "AI Core Freq sample without a ts or an MHz in 0..1e6; not kept"));
        }
      }
      builder_.add_other(ev, offset);
      return;
    default:
      stats_.note(Stat::tv_unknown_ph, where(offset, "ph \"" + std::string(ev.ph.substr(0, 16)) + "\""));
      builder_.add_other(ev, offset);
      return;
  }
}

// --- per-event parsing (hot) ---

template <size_t N>
inline bool key_is(const od::raw_json_string& k, const char (&lit)[N]) {
  return k.unsafe_is_equal(std::string_view(lit, N - 1));
}

// A scalar value's text, classified by its first byte without consuming the value (ondemand skips it
// later). Strings without escapes are returned between their quotes with no copy; strings with escapes
// are unescaped by get_string().
enum class Tok : uint8_t { kNumber, kString, kBool, kNull, kOther };

inline error_code scalar_text(od::value& v, Tok* kind, std::string_view* text) {
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && is_json_ws(raw.back())) raw.remove_suffix(1);
  if (raw.empty()) {
    *kind = Tok::kOther;
    return simdjson::SUCCESS;
  }
  const char c = raw[0];
  if (c == '"') {
    *kind = Tok::kString;
    if (raw.size() >= 2 && raw.back() == '"') {
      const std::string_view inner = raw.substr(1, raw.size() - 2);
      if (std::memchr(inner.data(), '\\', inner.size()) == nullptr) {
        *text = inner;
        return simdjson::SUCCESS;
      }
    }
    return v.get_string().get(*text);
  }
  if ((c >= '0' && c <= '9') || c == '-') {
    *kind = Tok::kNumber;
    *text = raw;
  } else if (c == 't' || c == 'f') {
    *kind = Tok::kBool;
    *text = raw;
  } else {
    *kind = c == 'n' ? Tok::kNull : Tok::kOther;
  }
  return simdjson::SUCCESS;
}

// Plain "[-]digits" (up to 18 digits); anything else goes to the tolerant parser.
inline std::optional<int64_t> to_int(std::string_view s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const size_t digits = s.size() - i;
  if (digits > 0 && digits <= 18) {
    uint64_t v = 0;
    bool ok = true;
    for (; i < s.size(); ++i) {
      const auto d = static_cast<unsigned>(s[i] - '0');
      if (d > 9) {
        ok = false;
        break;
      }
      v = v * 10 + d;
    }
    if (ok) return s[0] == '-' ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }
  return integral_from_text(s);
}

// Plain "digits[.digits]" µs -> ns with exactly parse_us_to_ns's rounding (3 decimals kept, half away from
// zero on the 4th); other shapes (sign, exponent, spaces, 17+ digits) go to parse_us_to_ns itself.
inline std::optional<int64_t> to_ns(std::string_view s) {
  const char* p = s.data();
  const char* e = p + s.size();
  uint64_t whole = 0;
  const char* q = p;
  while (q < e && static_cast<unsigned>(*q - '0') <= 9) whole = whole * 10 + static_cast<unsigned>(*q++ - '0');
  const auto int_digits = q - p;
  if (int_digits == 0 || int_digits > 16) return parse_us_to_ns(s);
  uint64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (q < e && *q == '.') {
    ++q;
    for (; q < e && static_cast<unsigned>(*q - '0') <= 9; ++q, ++frac_digits) {
      if (frac_digits < 3) frac = frac * 10 + static_cast<unsigned>(*q - '0');
      else if (frac_digits == 3) round_up = *q >= '5';
    }
  }
  if (q != e) return parse_us_to_ns(s);
  for (int k = frac_digits; k < 3; ++k) frac *= 10;
  constexpr uint64_t kMaxWhole = (static_cast<uint64_t>(INT64_MAX) - 1000) / 1000;
  if (whole > kMaxWhole) return parse_us_to_ns(s);
  return static_cast<int64_t>(whole * 1000 + frac + (round_up ? 1 : 0));
}

// Reads an integer given as a number or a numeric string. Wrong types mark `bad_bit` (with `has_bit`, so
// the field counts as present but unusable rather than missing); a non-numeric string goes to `str_out`
// when given.
inline error_code read_int(od::value& v, int64_t* out, uint32_t* has, uint32_t has_bit, uint32_t* bad, uint32_t bad_bit,
                           std::string_view* str_out = nullptr, uint32_t str_bit = 0) {
  Tok kind;
  std::string_view text;
  if (const error_code err = scalar_text(v, &kind, &text)) return err;
  if (kind == Tok::kNull) return simdjson::SUCCESS;
  *has |= has_bit;
  if (kind != Tok::kNumber && kind != Tok::kString) {
    *bad |= bad_bit;
    return simdjson::SUCCESS;
  }
  if (const auto i = to_int(text)) *out = *i;
  else if (str_out != nullptr && kind == Tok::kString && !text.empty()) {
    *str_out = text;
    *has |= str_bit;
  } else {
    *bad |= bad_bit;
  }
  return simdjson::SUCCESS;
}

// Reads a µs time (decimal string or JSON number, from its text: never through double) into exact ns.
inline error_code read_time(od::value& v, int64_t* out, uint32_t* has, uint32_t has_bit, uint32_t* bad,
                            uint32_t bad_bit) {
  Tok kind;
  std::string_view text;
  if (const error_code err = scalar_text(v, &kind, &text)) return err;
  if (kind == Tok::kNull) return simdjson::SUCCESS;
  *has |= has_bit;
  if (kind != Tok::kNumber && kind != Tok::kString) {
    *bad |= bad_bit;
    return simdjson::SUCCESS;
  }
  if (const auto ns = to_ns(text)) *out = *ns;
  else *bad |= bad_bit;
  return simdjson::SUCCESS;
}

// Strings stay strings; numbers/booleans keep their JSON text; other types are "absent".
inline error_code read_text(od::value& v, std::string_view* out, uint32_t* present, uint32_t bit) {
  Tok kind;
  std::string_view text;
  if (const error_code err = scalar_text(v, &kind, &text)) return err;
  if (kind == Tok::kString || kind == Tok::kNumber || kind == Tok::kBool) {
    *out = text;
    *present |= bit;
  }
  return simdjson::SUCCESS;
}

inline error_code read_arg_int(od::value& v, int64_t* out, uint32_t* present, uint32_t bit) {
  uint32_t has = 0, bad = 0;
  const error_code err = read_int(v, out, &has, 1, &bad, 1);
  if (err == simdjson::SUCCESS && has != 0 && bad == 0) *present |= bit;
  return err;
}

// A string-valued top-level field; other types leave it absent.
inline error_code read_str(od::value& v, std::string_view* out, uint32_t* has, uint32_t bit) {
  Tok kind;
  std::string_view text;
  if (const error_code err = scalar_text(v, &kind, &text)) return err;
  if (kind == Tok::kString) {
    *out = text;
    *has |= bit;
  }
  return simdjson::SUCCESS;
}

inline error_code read_arg_double(od::value& v, double* out, uint32_t* present, uint32_t bit) {
  Tok kind;
  std::string_view text;
  if (const error_code err = scalar_text(v, &kind, &text)) return err;
  if (kind != Tok::kNumber && kind != Tok::kString) return simdjson::SUCCESS;
  if (const auto d = parse_double(text)) {
    *out = *d;
    *present |= bit;
  }
  return simdjson::SUCCESS;
}

bool is_metadata_name(std::string_view n) {
  return n == "process_name" || n == "thread_name" || n == "process_labels" || n == "process_sort_index" ||
         n == "thread_sort_index";
}

// Whether the args object must be read: metadata always; X args only for processes whose tables use
// them (device tasks, communication, CANN: its connection_id links a launch to its device tasks) or
// whose kind is not known yet. torch_npu events (they carry "cat", written before "args") of a
// pid not named yet are taken as the Python process: their args are re-read by reread_args() only if
// the guess turns out wrong.
Importer::ArgsAction Importer::args_action() {
  const EventFields& ev = ev_;
  if (force_args_) return ArgsAction::kRead;
  // The one counter kept (AI Core Freq): its args usually come before its ph, so without a ph the
  // name decides; an X event whose ph came first never pays for the name compare.
  if ((ev.has & kHasPh) != 0) {
    if (ev.ph == "M") return ArgsAction::kRead;
    if (ev.ph == "C") return (ev.has & kHasName) != 0 && ev.name == kAicoreFreqCounter ? ArgsAction::kRead : ArgsAction::kSkip;
    if (ev.ph != "X") return ArgsAction::kSkip;
  } else if ((ev.has & kHasName) != 0 && (is_metadata_name(ev.name) || ev.name == kAicoreFreqCounter)) {
    return ArgsAction::kRead;
  }
  if ((ev.has & kHasPid) == 0 || (ev.bad & kBadPid) != 0) return ArgsAction::kRead;
  bool named = false;
  switch (builder_.known_kind(ev.pid, &named)) {
    case model::ProcessKind::kPython:
    case model::ProcessKind::kOverlapAnalysis:
    case model::ProcessKind::kCounter: return ArgsAction::kSkip;
    case model::ProcessKind::kUnknown:
      if (named) return ArgsAction::kSkip;  // a process the analysis does not use
      return (ev.has & kHasCat) != 0 && !ev.cat.empty() ? ArgsAction::kSkip : ArgsAction::kRead;
    default: return ArgsAction::kRead;
  }
}

bool Importer::reread_args(void* ctx, uint64_t offset, ArgFields* out) {
  auto* self = static_cast<Importer*>(ctx);
  const std::string_view data = self->data_;
  if (offset >= data.size() || data[offset] != '{') return false;
  const size_t end = find_object_end(data, offset);
  if (end == kNpos) return false;
  const size_t len = end - offset + 1;
  if (self->buf_cap_ < len + simdjson::SIMDJSON_PADDING) {
    self->buf_cap_ = len + simdjson::SIMDJSON_PADDING;
    self->buf_ = std::make_unique<char[]>(self->buf_cap_);
  }
  std::memcpy(self->buf_.get(), data.data() + offset, len);
  std::memset(self->buf_.get() + len, ' ', simdjson::SIMDJSON_PADDING);
  self->force_args_ = true;
  const error_code err = self->parse_event(self->buf_.get(), len, len + simdjson::SIMDJSON_PADDING);
  self->force_args_ = false;
  if (err != simdjson::SUCCESS) return false;
  *out = self->ev_.args;
  return true;
}

error_code Importer::parse_args(od::value& v) {
  od::json_type t;
  error_code err = v.type().get(t);
  if (err) return err;
  if (t != od::json_type::object) return simdjson::SUCCESS;
  od::object obj;
  if ((err = v.get_object().get(obj))) return err;
  ArgFields& a = ev_.args;
  uint32_t& pr = a.present;
  for (auto item : obj) {
    // The key and value are used in place (not copied out through simdjson_result, each copy of which
    // stalls on store forwarding).
    od::field field;
    if ((err = std::move(item).get(field))) return err;
    const od::raw_json_string k = field.key();
    od::value& val = field.value();
    switch (k.raw()[0]) {
      case 'n':
        if (key_is(k, "name")) err = read_text(val, &a.meta_name, &pr, kArgMetaName);
        break;
      case 'l':
        if (key_is(k, "labels")) err = read_text(val, &a.labels, &pr, kArgLabels);
        else if (key_is(k, "link type")) err = read_text(val, &a.link_type, &pr, kArgLinkType);
        break;
      case 's':
        if (key_is(k, "sort_index")) err = read_arg_int(val, &a.sort_index, &pr, kArgSortIndex);
        else if (key_is(k, "src rank")) err = read_arg_int(val, &a.src_rank, &pr, kArgSrcRank);
        else if (key_is(k, "size(Byte)")) err = read_arg_int(val, &a.size_bytes, &pr, kArgSize);
        break;
      case 'T':
        if (key_is(k, "Task Type")) err = read_text(val, &a.task_type, &pr, kArgTaskType);
        else if (key_is(k, "Task Id")) err = read_arg_int(val, &a.task_id, &pr, kArgTaskId);
        break;
      case 'c':
        if (key_is(k, "connection_id")) err = read_arg_int(val, &a.connection_id, &pr, kArgConnectionId);
        else if (key_is(k, "count")) err = read_arg_int(val, &a.count, &pr, kArgCount);
        break;
      case 'P':
        if (key_is(k, "Physic Stream Id")) err = read_arg_int(val, &a.stream_id, &pr, kArgStreamId);
        break;
      case 'S':
        if (key_is(k, "Stream Id")) err = read_arg_int(val, &a.stream_id, &pr, kArgStreamId);
        break;
      case 'd':
        if (key_is(k, "data_type")) err = read_text(val, &a.data_type, &pr, kArgDataType);
        else if (key_is(k, "dst rank")) err = read_arg_int(val, &a.dst_rank, &pr, kArgDstRank);
        break;
      case 'a':
        if (key_is(k, "alg_type")) err = read_text(val, &a.alg_type, &pr, kArgAlgType);
        break;
      case 't':
        if (key_is(k, "task type")) err = read_text(val, &a.plane_task_type, &pr, kArgPlaneTaskType);
        else if (key_is(k, "transport type")) err = read_text(val, &a.transport, &pr, kArgTransport);
        break;
      case 'b':
        if (key_is(k, "bandwidth(GB/s)")) err = read_arg_double(val, &a.bandwidth, &pr, kArgBandwidth);
        break;
      case 'M':
        if (key_is(k, "MHz")) err = read_arg_double(val, &a.mhz, &pr, kArgMhz);
        break;
      default: break;
    }
    if (err) return err;
  }
  ev_.has |= kHasArgs;
  return simdjson::SUCCESS;
}

error_code Importer::parse_event(const char* p, size_t len, size_t capacity) {
  ev_.reset();
  od::document doc;
  error_code err = parser_.iterate(simdjson::padded_string_view(p, len, capacity)).get(doc);
  if (err) return err;
  od::object obj;
  if ((err = doc.get_object().get(obj))) return err;
  return parse_fields(obj);
}

error_code Importer::parse_fields(od::object& obj) {
  EventFields& ev = ev_;
  error_code err = simdjson::SUCCESS;
  for (auto item : obj) {
    od::field field;  // used in place, as in parse_args()
    if ((err = std::move(item).get(field))) return err;
    const od::raw_json_string k = field.key();
    od::value& v = field.value();
    const char* r = k.raw();
    switch (r[0]) {
      case 'p':
        if (r[1] == 'h' && r[2] == '"') {
          err = read_str(v, &ev.ph, &ev.has, kHasPh);
        } else if (r[1] == 'i' && r[2] == 'd' && r[3] == '"') {
          err = read_int(v, &ev.pid, &ev.has, kHasPid, &ev.bad, kBadPid);
        }
        break;
      case 'n':
        if (key_is(k, "name")) err = read_str(v, &ev.name, &ev.has, kHasName);
        break;
      case 't':
        if (r[1] == 's' && r[2] == '"') {
          err = read_time(v, &ev.ts_ns, &ev.has, kHasTs, &ev.bad, kBadTs);
        } else if (r[1] == 'i' && r[2] == 'd' && r[3] == '"') {
          err = read_int(v, &ev.tid, &ev.has, kHasTid, &ev.bad, kBadTid, &ev.tid_str, kTidIsString);
        }
        break;
      case 'd':
        if (key_is(k, "dur")) err = read_time(v, &ev.dur_ns, &ev.has, kHasDur, &ev.bad, kBadDur);
        break;
      case 'c':
        if (key_is(k, "cat")) err = read_str(v, &ev.cat, &ev.has, kHasCat);
        break;
      case 'i':
        if (r[1] == 'd' && r[2] == '"') {
          Tok kind;
          std::string_view text;
          if ((err = scalar_text(v, &kind, &text))) return err;
          if (kind != Tok::kNumber && kind != Tok::kString) {
            if (kind != Tok::kNull) ev.bad |= kBadId;
            break;
          }
          text = trim(text);
          int64_t id = 0;
          const auto res = std::from_chars(text.data(), text.data() + text.size(), id);
          if (res.ec == std::errc() && res.ptr == text.data() + text.size() && id >= 0 && !text.empty() &&
              text[0] != '-') {
            ev.id = id;
            ev.has |= kHasId;
          } else if (!text.empty()) {
            ev.id_str = text;
            ev.has |= kHasId | kIdIsString;
          } else {
            ev.bad |= kBadId;
          }
        }
        break;
      case 'a':
        if (key_is(k, "args") && args_action() == ArgsAction::kRead) err = parse_args(v);
        break;
      default: break;
    }
    if (err) return err;
  }
  return simdjson::SUCCESS;
}

}  // namespace

Status import_trace_view(const std::filesystem::path& path, StringPool& pool, model::TraceTables& out, Stats& stats,
                         const TraceViewOptions& opts) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) return mapped.status();
  MappedFile file = std::move(mapped).value();
  Importer imp(file.data(), path.string(), &file, pool, out, stats, opts);
  return imp.run();
}

Status import_trace_view(std::string_view data, std::string_view display_name, StringPool& pool,
                         model::TraceTables& out, Stats& stats, const TraceViewOptions& opts) {
  Importer imp(data, std::string(display_name), nullptr, pool, out, stats, opts);
  return imp.run();
}

}  // namespace ascprof::importers
