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
#include "moe_events.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

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

  std::vector<detail::MoeRawEvent> events;
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
    detail::MoeRawEvent r;
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
    if ((it->path().extension() == ".json" && it->path().filename() != kMoePointMap) || it->path().extension() == ".pt")
      if (it->is_regular_file(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  const bool any_pt = std::any_of(out.begin(), out.end(), [](const fs::path& p) { return p.extension() == ".pt"; });
  if (any_pt && fs::is_regular_file(dir / kMoePointMap, ec)) out.push_back(dir / kMoePointMap);
  return out;
}

int64_t moe_trace_call_index(const fs::path& file) { return detail::number_after(file, "call", /*last=*/true); }

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

  if (call.unmapped_points > 0)
    stats.note(Stat::moe_trace_unmapped, path.string() + ":otherData: " + std::to_string(call.unmapped_points) +
                                             " records without a point_map.json entry");
  detail::MoeEvents events{std::move(reader.events), std::move(reader.names), reader.bad, std::move(reader.bad_samples), {}};
  detail::finish_moe_call(path, rank_id, records_per_core, pool, events, call, stats);
}

}  // namespace ascprof::importers
