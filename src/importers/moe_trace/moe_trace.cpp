// In-kernel MoE trace reader (moe-tracing.md §4, §7). The files are small (a call of a 72-core
// kernel is a few thousand events), so one On-Demand pass collects the events with views into the
// document's string buffer, and the pairing runs on indices sorted per core and name.
#include "ascprof/importers/moe_trace.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string>

#include "../capture_info/json_read.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

constexpr int64_t kNoRank = -1;

// One B, E or X event as read.
struct RawEvent {
  int64_t rank = kNoRank;
  uint32_t core_type = 0, core_id = 0;
  uint32_t name = 0;  // index into the file's distinct names
  char ph = 0;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t t0_cycles = -1;
};

template <size_t N>
bool key_is(od::raw_json_string k, const char (&lit)[N]) {
  return k.unsafe_is_equal(std::string_view(lit, N - 1));
}

// An integer written as a number, a float with no fraction, or a decimal string.
bool read_int(od::value v, int64_t* out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t == od::json_type::number) {
    if (v.get_int64().get(*out) == simdjson::SUCCESS) return true;
    double d = 0;
    if (v.get_double().get(d) != simdjson::SUCCESS || d != static_cast<double>(static_cast<int64_t>(d))) return false;
    *out = static_cast<int64_t>(d);
    return true;
  }
  std::string_view s;
  if (t != od::json_type::string || v.get_string().get(s) != simdjson::SUCCESS) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// µs as written (a number) -> integer ns, exactly for up to three decimals.
bool read_us(od::value v, int64_t* ns) {
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
    raw.remove_suffix(1);
  auto parsed = parse_us_to_ns(raw);
  if (!parsed) return false;
  *ns = *parsed;
  return true;
}

// "type<T>_core<CCC>"
bool core_from_tid(std::string_view tid, uint32_t* type, uint32_t* core) {
  if (tid.rfind("type", 0) != 0) return false;
  const size_t sep = tid.find("_core");
  if (sep == std::string_view::npos) return false;
  const char* b = tid.data();
  auto r1 = std::from_chars(b + 4, b + sep, *type);
  auto r2 = std::from_chars(b + sep + 5, b + tid.size(), *core);
  return r1.ec == std::errc() && r1.ptr == b + sep && r2.ec == std::errc() && r2.ptr == b + tid.size() && sep + 5 < tid.size();
}

// "<label> [extra:<x>] #<s>" -> label, x, s (either suffix may be missing).
void split_name(std::string_view name, std::string_view* label, int64_t* extra, int64_t* index) {
  *extra = 0;
  *index = 0;
  const size_t hash = name.rfind(" #");
  if (hash != std::string_view::npos) {
    int64_t v = 0;
    auto r = std::from_chars(name.data() + hash + 2, name.data() + name.size(), v);
    if (r.ec == std::errc() && r.ptr == name.data() + name.size() && hash + 2 < name.size()) {
      *index = v;
      name = name.substr(0, hash);
    }
  }
  if (name.size() > 8 && name.back() == ']') {
    const size_t open = name.rfind(" [extra:");
    if (open != std::string_view::npos) {
      int64_t v = 0;
      auto r = std::from_chars(name.data() + open + 8, name.data() + name.size() - 1, v);
      if (r.ec == std::errc() && r.ptr == name.data() + name.size() - 1) {
        *extra = v;
        name = name.substr(0, open);
      }
    }
  }
  *label = name;
}

class TraceReader {
 public:
  TraceReader(const fs::path& path, const simdjson::padded_string& buf, od::document& doc, model::MoeTraceCall& call)
      : label_(path.string()), buf_(buf), doc_(doc), call_(call) {}

  Status run() {
    od::json_type t;
    if (auto e = doc_.type().get(t)) return error(e);
    if (t == od::json_type::array) {
      call_.variant = "array";
      od::array list;
      if (auto e = doc_.get_array().get(list)) return error(e);
      return read_events(list);
    }
    if (t != od::json_type::object)
      return file_error(ErrorCode::kParse, label_, "byte 0", "not a trace (neither an object nor an array)");
    call_.variant = "unknown";
    od::object top;
    if (auto e = doc_.get_object().get(top)) return error(e);
    bool has_events = false;
    for (auto field : top) {
      od::raw_json_string key;
      if (auto e = field.key().get(key)) return error(e);
      od::value v;
      if (auto e = field.value().get(v)) return error(e);
      if (key_is(key, "traceEvents")) {
        od::array list;
        if (auto e = v.get_array().get(list)) return error(e);
        ASCPROF_RETURN_IF_ERROR(read_events(list));
        has_events = true;
      } else if (key_is(key, "otherData")) {
        ASCPROF_RETURN_IF_ERROR(read_other_data(v));
      }
    }
    if (!has_events) return file_error(ErrorCode::kParse, label_, "traceEvents", "not a trace (no traceEvents array)");
    return {};
  }

  std::vector<RawEvent> events;
  std::vector<std::string_view> names;  // distinct full names (views into the document's strings)
  uint64_t bad = 0;
  std::vector<std::string> bad_samples;

 private:
  Status error(error_code e) { return detail::json_error(e, label_, buf_, doc_); }

  Status read_other_data(od::value v) {
    od::object o;
    if (v.get_object().get(o) != simdjson::SUCCESS) return {};
    for (auto field : o) {
      od::raw_json_string key;
      od::value x;
      if (auto e = field.key().get(key)) return error(e);
      if (auto e = field.value().get(x)) return error(e);
      int64_t n = 0;
      if (key_is(key, "skipped_no_mapping") && read_int(x, &n)) {
        call_.unmapped_points += static_cast<uint64_t>(std::max<int64_t>(n, 0));
        if (call_.variant == "unknown") call_.variant = "skill";
      } else if (key_is(key, "skipped_events") && read_int(x, &n)) {
        call_.unmapped_points += static_cast<uint64_t>(std::max<int64_t>(n, 0));
        call_.variant = "umdk";
      } else if (key_is(key, "generator")) {
        call_.variant = "umdk";
      } else if (key_is(key, "clock_divisor")) {
        double d = 0;
        if (x.get_double().get(d) == simdjson::SUCCESS && d > 0) call_.clock_divisor = d;
      }
    }
    return {};
  }

  Status read_events(od::array arr) {
    size_t ordinal = 0;
    for (auto item : arr) {
      od::object ev;
      if (auto e = item.get_object().get(ev)) {
        if (e == simdjson::INCORRECT_TYPE) {
          drop(ordinal++, "not an object");
          continue;
        }
        return error(e);
      }
      ASCPROF_RETURN_IF_ERROR(read_event(ev, ordinal++));
    }
    return {};
  }

  void drop(size_t ordinal, const char* why) {
    ++bad;
    if (bad_samples.size() < Stats::kMaxSamples)
      bad_samples.push_back(label_ + ":event " + std::to_string(ordinal) + ": " + why);
  }

  Status read_event(od::object ev, size_t ordinal) {
    RawEvent r;
    std::string_view ph, name, tid;
    bool has_ts = false, has_dur = false, has_core_type = false, has_core_id = false;
    for (auto field : ev) {
      od::raw_json_string key;
      od::value v;
      if (auto e = field.key().get(key)) return error(e);
      if (auto e = field.value().get(v)) return error(e);
      if (key_is(key, "ph")) {
        if (v.get_string().get(ph) != simdjson::SUCCESS) ph = {};
      } else if (key_is(key, "name")) {
        if (v.get_string().get(name) != simdjson::SUCCESS) name = {};
      } else if (key_is(key, "ts")) {
        has_ts = read_us(v, &r.ts_ns);
      } else if (key_is(key, "dur")) {
        has_dur = read_us(v, &r.dur_ns);
      } else if (key_is(key, "tid")) {
        if (v.get_string().get(tid) != simdjson::SUCCESS) tid = {};
      } else if (key_is(key, "args")) {
        od::object args;
        if (v.get_object().get(args) != simdjson::SUCCESS) continue;
        for (auto a : args) {
          od::raw_json_string ak;
          od::value av;
          if (auto e = a.key().get(ak)) return error(e);
          if (auto e = a.value().get(av)) return error(e);
          int64_t n = 0;
          if (key_is(ak, "rank_id")) {
            if (read_int(av, &n)) r.rank = n;
          } else if (key_is(ak, "core_type")) {
            has_core_type = read_int(av, &n) && n >= 0 && n < (int64_t{1} << 31);
            r.core_type = static_cast<uint32_t>(n);
          } else if (key_is(ak, "core_id")) {
            has_core_id = read_int(av, &n) && n >= 0 && n < (int64_t{1} << 31);
            r.core_id = static_cast<uint32_t>(n);
          } else if (key_is(ak, "initial_timestamp")) {
            if (read_int(av, &n)) r.t0_cycles = n;
          }
        }
      }
    }
    if (ph.size() != 1 || (ph[0] != 'B' && ph[0] != 'E' && ph[0] != 'X')) {
      if (ph != "M" && ph != "i" && ph != "I" && ph != "C") drop(ordinal, "ph is not B, E or X");
      return {};
    }
    r.ph = ph[0];
    if (!(has_core_type && has_core_id) && !core_from_tid(tid, &r.core_type, &r.core_id)) {
      drop(ordinal, "no core (args core_type and core_id, or a typeT_coreCCC tid)");
      return {};
    }
    if (name.empty() || !has_ts || (r.ph == 'X' && (!has_dur || r.dur_ns < 0))) {
      drop(ordinal, name.empty() ? "no name" : !has_ts ? "no usable ts" : "no usable dur");
      return {};
    }
    auto it = name_index_.find(name);
    if (it == name_index_.end()) {
      it = name_index_.emplace(name, static_cast<uint32_t>(names.size())).first;
      names.push_back(name);
    }
    r.name = it->second;
    events.push_back(r);
    return {};
  }

  std::string label_;
  const simdjson::padded_string& buf_;
  od::document& doc_;
  model::MoeTraceCall& call_;
  std::map<std::string_view, uint32_t, std::less<>> name_index_;
};

}  // namespace

std::vector<fs::path> find_moe_traces(const fs::path& rank_dir, std::string_view folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path dir = rank_dir / folder;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json" && it->is_regular_file(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

int64_t moe_trace_call_index(const fs::path& file) {
  const std::string stem = file.stem().string();
  const size_t at = stem.rfind("call");
  if (at == std::string::npos) return -1;
  int64_t n = -1;
  const char* b = stem.data() + at + 4;
  const char* e = b;
  while (e < stem.data() + stem.size() && *e >= '0' && *e <= '9') ++e;
  if (e == b || std::from_chars(b, e, n).ec != std::errc()) return -1;
  return n;
}

void import_moe_trace(const fs::path& path, int64_t rank_id, uint32_t records_per_core, StringPool& pool,
                      model::MoeTraceCall& call, Stats& stats) {
  call.file = path.string();
  call.call_index = moe_trace_call_index(path);
  auto fail = [&](const Status& st) {
    call.error = st.message();
    call.intervals.clear();
    call.cores.clear();
    stats.note(Stat::moe_trace_unreadable, call.error);
  };
  auto buf = detail::load_padded(path);
  if (!buf.ok()) return fail(buf.status());
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(*buf).get(doc)) return fail(detail::iterate_error(e, path.string(), buf->size()));
  TraceReader reader(path, *buf, doc, call);
  if (Status st = reader.run(); !st.ok()) return fail(st);

  // whose events: this rank's, else the file's only rank
  std::set<int64_t> ranks;
  for (const auto& e : reader.events) ranks.insert(e.rank);
  int64_t kept = kNoRank;
  bool any = false;
  if (ranks.count(rank_id)) {
    kept = rank_id;
    any = true;
  } else if (ranks.size() == 1) {
    kept = *ranks.begin();
    any = true;
  } else if (!ranks.empty()) {
    stats.note(Stat::moe_trace_other_rank, path.string() + ": ranks " + std::to_string(*ranks.begin()) + ".." +
                                               std::to_string(*ranks.rbegin()) + ", none is rank " + std::to_string(rank_id));
  }
  call.trace_rank = kept;
  std::vector<uint32_t> order;
  order.reserve(reader.events.size());
  for (uint32_t i = 0; i < reader.events.size(); ++i) {
    if (any && reader.events[i].rank == kept) order.push_back(i);
    else ++call.other_rank_events;
  }
  call.events = order.size();
  call.bad_events = reader.bad;
  for (auto& s : reader.bad_samples) stats.note(Stat::moe_trace_bad_event, std::move(s));
  if (reader.bad > reader.bad_samples.size()) stats.inc(Stat::moe_trace_bad_event, reader.bad - reader.bad_samples.size());
  if (call.unmapped_points > 0)
    stats.note(Stat::moe_trace_unmapped, path.string() + ":otherData: " + std::to_string(call.unmapped_points) +
                                             " records without a point_map.json entry");

  // per core: record count and T0
  const auto& ev = reader.events;
  std::sort(order.begin(), order.end(), [&ev, &reader](uint32_t a, uint32_t b) {
    const RawEvent &x = ev[a], &y = ev[b];
    if (x.core_type != y.core_type) return x.core_type < y.core_type;
    if (x.core_id != y.core_id) return x.core_id < y.core_id;
    if (x.name != y.name) return reader.names[x.name] < reader.names[y.name];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return (x.ph == 'B') > (y.ph == 'B');  // at one instant a B opens before an E closes
  });
  for (uint32_t i : order) {
    const RawEvent& e = ev[i];
    if (call.cores.empty() || call.cores.back().core_type != e.core_type || call.cores.back().core_id != e.core_id)
      call.cores.push_back({e.core_type, e.core_id, -1, 0});
    auto& c = call.cores.back();
    c.records += e.ph == 'X' ? 2 : 1;  // an X stands for the B and the E the device recorded
    if (c.t0_cycles < 0) c.t0_cycles = e.t0_cycles;
  }
  for (const auto& c : call.cores)
    if (c.records >= records_per_core) {
      ++call.full_cores;
      stats.note(Stat::moe_trace_core_buffer_full, path.string() + ": core_type " + std::to_string(c.core_type) +
                                                       " core " + std::to_string(c.core_id) + ": " +
                                                       std::to_string(c.records) + " records");
    }

  // labels once per distinct name
  struct NameParts {
    uint32_t label;
    int64_t extra, index;
  };
  std::vector<NameParts> parts(reader.names.size());
  for (size_t i = 0; i < reader.names.size(); ++i) {
    std::string_view label;
    split_name(reader.names[i], &label, &parts[i].extra, &parts[i].index);
    parts[i].label = pool.intern(label);
  }
  auto emit = [&](const RawEvent& b, int64_t end_ns) {
    const NameParts& p = parts[b.name];
    call.intervals.push_back({p.label, b.core_type, b.core_id, p.extra, p.index, b.ts_ns, end_ns});
  };
  // FIFO pairing per (core, full name): the first open B closes with the next E (the collector's rule)
  std::vector<uint32_t> open;
  size_t head = 0;
  auto flush = [&] {
    call.unmatched_begin += open.size() - head;
    for (size_t k = head; k < open.size() && k < head + 2; ++k)
      stats.note(Stat::moe_trace_unmatched, path.string() + ": B without E: " + std::string(reader.names[ev[open[k]].name]));
    if (open.size() - head > 2) stats.inc(Stat::moe_trace_unmatched, open.size() - head - 2);
    open.clear();
    head = 0;
  };
  for (size_t k = 0; k < order.size(); ++k) {
    const RawEvent& e = ev[order[k]];
    if (k > 0) {
      const RawEvent& p = ev[order[k - 1]];
      if (p.core_type != e.core_type || p.core_id != e.core_id || p.name != e.name) flush();
    }
    if (e.ph == 'X') {
      emit(e, e.ts_ns + e.dur_ns);
    } else if (e.ph == 'B') {
      open.push_back(order[k]);
    } else if (head < open.size()) {
      emit(ev[open[head++]], e.ts_ns);
    } else {
      ++call.unmatched_end;
      stats.note(Stat::moe_trace_unmatched, path.string() + ": E without B: " + std::string(reader.names[e.name]));
    }
  }
  flush();
  std::sort(call.intervals.begin(), call.intervals.end(), [](const auto& a, const auto& b) {
    if (a.core_type != b.core_type) return a.core_type < b.core_type;
    if (a.core_id != b.core_id) return a.core_id < b.core_id;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;  // a container before what it holds
    return a.label < b.label;
  });
}

}  // namespace ascprof::importers
