// rank*.pt + point_map.json: the device's own profiling slots of one kernel call, decoded as the
// collectors decode them (moe-tracing.md §1.2, §4.1) but keeping what they drop: each core's T0 and
// its record counter, so a buffer that overflowed is seen.
#include <simdjson.h>

#include <charconv>
#include <deque>
#include <map>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/moe_trace.hpp"
#include "moe_events.hpp"
#include "torch_pt.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;

namespace {

struct Point {
  std::string label;
  char ph = 0;  // 'B', 'E', or 0 for another type
};

// point_map.json: {"points": {"<id>": {...}}} (skill) or the inner object at top level (UMDK).
Result<std::map<int64_t, Point>> read_point_map(const fs::path& path) {
  ASCPROF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.parse(text).get(doc))
    return file_error(ErrorCode::kParse, path.string(), "document", simdjson::error_message(e));
  simdjson::dom::object points;
  if (doc["points"].get(points) != simdjson::SUCCESS && doc.get(points) != simdjson::SUCCESS)
    return file_error(ErrorCode::kParse, path.string(), "points", "not a point map (an object of point ids)");
  std::map<int64_t, Point> out;
  for (auto [key, value] : points) {
    int64_t id = 0;
    auto r = std::from_chars(key.data(), key.data() + key.size(), id);
    std::string_view label, type;
    if (r.ec != std::errc() || r.ptr != key.data() + key.size() || value["label"].get(label) != simdjson::SUCCESS) continue;
    Point p;
    p.label = std::string(label);
    if (value["event_type"].get(type) == simdjson::SUCCESS && type.size() == 1) {
      const char c = static_cast<char>(type[0] & ~0x20);  // "b" / "e" opt out of the nesting check only
      if (c == 'B' || c == 'E') p.ph = c;
    }
    out.emplace(id, std::move(p));
  }
  return out;
}


}  // namespace

void import_moe_rank_pt(const fs::path& pt, const fs::path& point_map, int64_t rank_id, double cycles_per_us,
                        StringPool& pool, model::MoeTraceCall& call, Stats& stats) {
  call.file = pt.string();
  call.call_index = moe_trace_call_index(pt);
  call.variant = "rank_pt";
  call.clock_divisor = cycles_per_us;
  auto fail = [&](const Status& st) {
    call.error = st.message();
    stats.note(Stat::moe_trace_unreadable, call.error);
  };
  auto map = read_point_map(point_map);
  if (!map.ok()) return fail(map.status());
  auto groups = detail::read_torch_int64_list(pt);
  if (!groups.ok()) return fail(groups.status());
  detail::MoeEvents ev;
  std::deque<std::string> names;             // owns what ev.names views
  std::map<std::string, uint32_t, std::less<>> name_ix;
  const int64_t rank = detail::number_after(pt, "rank", /*last=*/false);  // "rank003.pt" -> 3
  uint32_t capacity = UINT32_MAX;
  for (size_t g = 0; g < groups->size(); ++g) {
    const detail::Int64Tensor& t = (*groups)[g];
    if (t.shape.size() != 2 || t.shape[1] < 4)
      return fail(file_error(ErrorCode::kParse, pt.string(), "tensor " + std::to_string(g), "not [cores, words per core]"));
    const int64_t words = t.shape[1];
    const int64_t cap = (words - 2) / 2;  // ids grow from the front, timestamps from the back
    capacity = std::min(capacity, static_cast<uint32_t>(cap));
    for (int64_t row = 0; row < t.shape[0]; ++row) {
      const int64_t* w = t.data.data() + row * words;
      const int64_t counter = w[0];
      if (counter <= 1) continue;  // never written (or saved before the device synchronised)
      const int64_t t0 = w[words - 1];
      ev.cores.push_back({static_cast<uint32_t>(g), static_cast<uint32_t>(row), t0, static_cast<uint32_t>(std::min<int64_t>(counter - 1, UINT32_MAX))});
      const int64_t n = std::min(counter - 1, cap);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t id = static_cast<uint64_t>(w[1 + i]);
        const auto base = static_cast<int32_t>(id & 0xFFFFFFFFu);
        const auto extra = static_cast<int32_t>(id >> 32);
        auto p = map->find(base);
        if (p == map->end() || p->second.ph == 0) {
          ++call.unmapped_points;
          continue;
        }
        // the collectors' seq names: extraId (low 8 bits of the extra word) and index (the rest)
        const std::string name = p->second.label + " [extra:" + std::to_string(extra & 0xFF) + "] #" + std::to_string(extra >> 8);
        auto [it, fresh] = name_ix.emplace(name, static_cast<uint32_t>(names.size()));
        if (fresh) {
          names.push_back(name);
          ev.names.emplace_back(names.back());
        }
        const uint64_t rel = static_cast<uint64_t>(w[words - 2 - i]) - static_cast<uint64_t>(t0);  // mod 2^64, as they do
        detail::MoeRawEvent r;
        r.rank = rank;
        r.core_type = static_cast<uint32_t>(g);
        r.core_id = static_cast<uint32_t>(row);
        r.name = it->second;
        r.ph = p->second.ph;
        r.ts_ns = static_cast<int64_t>(static_cast<double>(rel) * 1000.0 / cycles_per_us + 0.5);
        r.t0_cycles = t0;
        ev.events.push_back(r);
      }
    }
  }
  if (call.unmapped_points > 0)
    stats.note(Stat::moe_trace_unmapped, pt.string() + ": " + std::to_string(call.unmapped_points) + " records whose point id " +
                                             point_map.filename().string() + " does not name (a map from another build?)");
  detail::finish_moe_call(pt, rank_id, capacity, pool, ev, call, stats);
}

}  // namespace ascprof::importers
