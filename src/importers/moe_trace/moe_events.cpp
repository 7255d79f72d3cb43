// Events of an in-kernel MoE trace -> one MoeTraceCall (moe_events.hpp).
#include "moe_events.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace ascprof::importers::detail {

namespace {

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

}  // namespace

int64_t number_after(const std::filesystem::path& file, std::string_view word, bool last) {
  const std::string stem = file.stem().string();
  const size_t at = last ? stem.rfind(word) : stem.find(word);
  if (at == std::string::npos) return -1;
  const char* b = stem.data() + at + word.size();
  const char* e = b;
  while (e < stem.data() + stem.size() && *e >= '0' && *e <= '9') ++e;
  int64_t n = -1;
  return e > b && std::from_chars(b, e, n).ec == std::errc() ? n : -1;
}

void finish_moe_call(const std::filesystem::path& path, int64_t rank_id, uint32_t records_per_core, StringPool& pool,
                     MoeEvents& ev, model::MoeTraceCall& call, Stats& stats) {
  // whose events: this rank's, else the file's only rank
  std::set<int64_t> ranks;
  for (const auto& e : ev.events) ranks.insert(e.rank);
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
  order.reserve(ev.events.size());
  for (uint32_t i = 0; i < ev.events.size(); ++i) {
    if (any && ev.events[i].rank == kept) order.push_back(i);
    else ++call.other_rank_events;
  }
  call.events = order.size();
  call.bad_events = ev.bad;
  for (auto& s : ev.bad_samples) stats.note(Stat::moe_trace_bad_event, std::move(s));
  if (ev.bad > ev.bad_samples.size()) stats.inc(Stat::moe_trace_bad_event, ev.bad - ev.bad_samples.size());

  // per core: record count and T0
  const auto& events = ev.events;
  std::sort(order.begin(), order.end(), [&events, &ev](uint32_t a, uint32_t b) {
    const MoeRawEvent &x = events[a], &y = events[b];
    if (x.core_type != y.core_type) return x.core_type < y.core_type;
    if (x.core_id != y.core_id) return x.core_id < y.core_id;
    if (x.name != y.name) return ev.names[x.name] < ev.names[y.name];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return (x.ph == 'B') > (y.ph == 'B');  // at one instant a B opens before an E closes
  });
  if (!ev.cores.empty()) {
    call.cores = std::move(ev.cores);  // the device's own record counts (rank*.pt)
  } else {
    for (uint32_t i : order) {
      const MoeRawEvent& e = events[i];
      if (call.cores.empty() || call.cores.back().core_type != e.core_type || call.cores.back().core_id != e.core_id)
        call.cores.push_back({e.core_type, e.core_id, -1, 0});
      auto& c = call.cores.back();
      c.records += e.ph == 'X' ? 2 : 1;  // an X stands for the B and the E the device recorded
      if (c.t0_cycles < 0) c.t0_cycles = e.t0_cycles;
    }
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
  std::vector<NameParts> parts(ev.names.size());
  for (size_t i = 0; i < ev.names.size(); ++i) {
    std::string_view label;
    split_name(ev.names[i], &label, &parts[i].extra, &parts[i].index);
    parts[i].label = pool.intern(label);
  }
  auto emit = [&](const MoeRawEvent& b, int64_t end_ns) {
    const NameParts& p = parts[b.name];
    call.intervals.push_back({p.label, b.core_type, b.core_id, p.extra, p.index, b.ts_ns, end_ns});
  };
  // FIFO pairing per (core, full name): the first open B closes with the next E (the collector's rule)
  std::vector<uint32_t> open;
  size_t head = 0;
  auto flush = [&] {
    call.unmatched_begin += open.size() - head;
    for (size_t k = head; k < open.size() && k < head + 2; ++k)
      stats.note(Stat::moe_trace_unmatched, path.string() + ": B without E: " + std::string(ev.names[events[open[k]].name]));
    if (open.size() - head > 2) stats.inc(Stat::moe_trace_unmatched, open.size() - head - 2);
    open.clear();
    head = 0;
  };
  for (size_t k = 0; k < order.size(); ++k) {
    const MoeRawEvent& e = events[order[k]];
    if (k > 0) {
      const MoeRawEvent& p = events[order[k - 1]];
      if (p.core_type != e.core_type || p.core_id != e.core_id || p.name != e.name) flush();
    }
    if (e.ph == 'X') {
      emit(e, e.ts_ns + e.dur_ns);
    } else if (e.ph == 'B') {
      open.push_back(order[k]);
    } else if (head < open.size()) {
      emit(events[open[head++]], e.ts_ns);
    } else {
      ++call.unmatched_end;
      stats.note(Stat::moe_trace_unmatched, path.string() + ": E without B: " + std::string(ev.names[e.name]));
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

}  // namespace ascprof::importers::detail
