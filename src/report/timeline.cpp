// report/timeline.json: every rank of a root in one Chrome-trace file (Perfetto, chrome://tracing).
// One process per rank, one thread per task type (the device lanes: AI_CORE, AI_VECTOR, HCCL, ...),
// times corrected by the rank's clock offset and made relative to the earliest event, findings as
// instant events. Streams raw_kernel_index.csv; memory does not grow with the capture. In-kernel MoE
// traces add one thread per core ("MoE <group> core N") holding the phases inside their kernel; nn.Module
// ranges (with_modules) add a "modules" thread per rank holding the module calls, nested.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/report/module_lanes.hpp"
#include "ascprof/report/moe_lanes.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "findings_reader.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

double parse(std::string_view s) {
  if (s.empty()) return std::nan("");
  std::string t(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return end != t.c_str() && *end == '\0' ? v : std::nan("");
}

std::string escaped(std::string_view s) {
  std::string out = "\"";
  json_escape_append(out, s);
  return out + "\"";
}

}  // namespace

Result<fs::path> write_timeline(const fs::path& root_out, const TimelineOptions& options) {
  // clock offsets (µs to subtract) per rank
  std::map<std::string, double> offset;
  {
    auto text = read_file(root_out / layout::kCrossRankManifestJson);
    simdjson::dom::parser parser;
    simdjson::dom::object offs;
    if (text.ok() && parser.parse(*text)["clock_offsets_us"].get(offs) == simdjson::SUCCESS)
      for (auto [k, v] : offs) {
        double us = 0;
        if (v.get(us) == simdjson::SUCCESS) offset[std::string(k)] = us;
      }
  }
  // the step windows that bound each rank's events (--timeline-steps), on the rank's own clock
  std::map<std::string, std::pair<double, double>> window;
  std::map<std::string, double> first_step_start;
  ASCPROF_ASSIGN_OR_RETURN(TextTable steps, read_table(root_out / layout::kStepSummaryCsv));
  {
    std::map<std::string, uint32_t> taken;
    for (size_t i = 0; i < steps.rows.size(); ++i) {
      if (steps.cell(i, "segment_type") != "step") continue;
      const std::string& r = steps.cell(i, "rank_id");
      const double s = steps.number(i, "start_us"), e = steps.number(i, "end_us");
      if (!std::isfinite(s) || !std::isfinite(e)) continue;
      if (!first_step_start.count(r)) first_step_start[r] = s;
      if (options.max_steps == 0 || taken[r] < options.max_steps) {
        auto [it, inserted] = window.emplace(r, std::make_pair(s, e));
        if (!inserted) it->second = {std::min(it->second.first, s), std::max(it->second.second, e)};
        ++taken[r];
      }
    }
  }
  // time origin: the earliest corrected start over the ranks' first rows (one pass over the index
  // would double the work; the first step of each rank, or its rank_summary start, is enough)
  double origin = INFINITY;
  ASCPROF_ASSIGN_OR_RETURN(TextTable ranks, read_table(root_out / layout::kRankSummaryCsv));
  std::map<std::string, uint32_t> pid;
  for (size_t i = 0; i < ranks.rows.size(); ++i) {
    const std::string& r = ranks.cell(i, "rank_id");
    pid[r] = static_cast<uint32_t>(i);
    const double s = ranks.number(i, "start_us") - (offset.count(r) ? offset[r] : 0.0);
    if (std::isfinite(s)) origin = std::min(origin, s);
  }
  if (!std::isfinite(origin)) origin = 0;
  // the findings: instant events at the end, and the ranks they suspect shown first when the
  // timeline holds fewer ranks than the root (a findings file that cannot be read leaves the
  // timeline without markers; the report stage's evidence-chain check has said why)
  auto diagnosis = read_findings_file(root_out);
  std::set<std::string, std::less<>> shown;  // empty: every rank
  if (options.max_ranks > 0 && pid.size() > options.max_ranks) {
    if (diagnosis.ok())
      for (const model::Finding& f : diagnosis->findings)
        for (const std::string& r : f.suspected_ranks)
          if (shown.size() < options.max_ranks && pid.count(r)) shown.insert(r);
    std::vector<std::pair<uint32_t, std::string>> in_order;  // the rest in rank order
    for (const auto& [r, p] : pid) in_order.emplace_back(p, r);
    std::sort(in_order.begin(), in_order.end());
    for (const auto& [p, r] : in_order) {
      if (shown.size() >= options.max_ranks) break;
      shown.insert(r);
    }
  }
  const auto is_shown = [&shown](std::string_view r) { return shown.empty() || shown.count(r) > 0; };
  // module calls run on the host ahead of their kernels: the origin moves back to the earliest of them
  // (a root without modules keeps its origin)
  ASCPROF_ASSIGN_OR_RETURN(const std::vector<ModuleLanes> modules, read_module_lanes(root_out));
  for (const ModuleLanes& rank : modules)
    if (!rank.calls.empty()) {
      const double off = offset.count(rank.rank_id) ? offset[rank.rank_id] : 0.0;
      origin = std::min(origin, std::floor(static_cast<double>(rank.calls.front().start_ns) / 1e3 - off));
    }

  AtomicFileWriter out;
  const fs::path path = root_out / layout::kReportDir / layout::kTimelineJson;
  ASCPROF_RETURN_IF_ERROR(out.open(path));
  out.write("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"ascprof-mpi\",\"time_origin_us\":");
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.3f", origin);
  out.write(buf);
  out.write(",\"clock_corrected\":true,\"ranks_total\":" + std::to_string(pid.size()) +
            ",\"ranks_shown\":" + std::to_string(shown.empty() ? pid.size() : shown.size()));
  if (!shown.empty())
    out.write(",\"ranks_left_out\":" + escaped("the findings' suspects first, then rank order, up to --timeline-ranks " +
                                                std::to_string(options.max_ranks) +
                                                " (0 = all); raw_kernel_index.csv holds every rank's kernels"));
  out.write("},\"traceEvents\":[\n");
  bool first = true;
  auto emit = [&out, &first](const std::string& ev) {
    out.write(first ? "" : ",\n");
    out.write(ev);
    first = false;
  };
  for (const auto& [r, p] : pid)
    if (is_shown(r))
      emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(p) + ",\"args\":{\"name\":" + escaped(r) +
         "}}");
  std::map<std::pair<uint32_t, std::string>, uint32_t> tid;  // (pid, task type) -> thread
  uint64_t events = 0;
  int c_rank = -1, c_name = -1, c_type = -1, c_start = -1, c_dur = -1, c_event = -1, c_wait = -1;
  const Status st = for_each_row(root_out / layout::kRawKernelIndexCsv, [&](const std::vector<std::string_view>& f, bool header) {
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        const int ix = static_cast<int>(i);
        if (f[i] == "rank_id") c_rank = ix;
        else if (f[i] == "name") c_name = ix;
        else if (f[i] == "task_type") c_type = ix;
        else if (f[i] == "start_us") c_start = ix;
        else if (f[i] == "duration_us") c_dur = ix;
        else if (f[i] == "event_id") c_event = ix;
        else if (f[i] == "wait_us") c_wait = ix;
      }
      return c_rank >= 0 && c_start >= 0 && c_dur >= 0;
    }
    if (!is_shown(f[static_cast<size_t>(c_rank)])) return true;
    const std::string rank(f[static_cast<size_t>(c_rank)]);
    const double start = parse(f[static_cast<size_t>(c_start)]);
    const double dur = parse(f[static_cast<size_t>(c_dur)]);
    if (!std::isfinite(start) || !std::isfinite(dur)) return true;
    if (options.max_steps > 0) {
      auto w = window.find(rank);
      if (w == window.end() || start < w->second.first || start >= w->second.second) return true;
    }
    const uint32_t p = pid.count(rank) ? pid[rank] : static_cast<uint32_t>(pid.size());
    const std::string type = c_type >= 0 && !f[static_cast<size_t>(c_type)].empty() ? std::string(f[static_cast<size_t>(c_type)]) : "UNKNOWN";
    auto [it, inserted] = tid.emplace(std::make_pair(p, type), static_cast<uint32_t>(tid.size()));
    if (inserted)
      emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) +
           ",\"args\":{\"name\":" + escaped(type) + "}}");
    const double ts = start - (offset.count(rank) ? offset[rank] : 0.0) - origin;
    std::string ev = "{\"ph\":\"X\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) + ",\"ts\":";
    std::snprintf(buf, sizeof buf, "%.3f,\"dur\":%.3f", ts, dur);
    ev += buf;
    ev += ",\"name\":" + escaped(c_name >= 0 ? f[static_cast<size_t>(c_name)] : std::string_view("?"));
    ev += ",\"args\":{\"event_id\":" + escaped(c_event >= 0 ? f[static_cast<size_t>(c_event)] : std::string_view());
    if (c_wait >= 0 && !f[static_cast<size_t>(c_wait)].empty()) ev += ",\"wait_us\":" + escaped(f[static_cast<size_t>(c_wait)]);
    ev += "}}";
    emit(ev);
    ++events;
    return true;
  });
  ASCPROF_RETURN_IF_ERROR(st);
  // in-kernel MoE phases: one thread per core under the rank, inside the attached kernel's time
  ASCPROF_ASSIGN_OR_RETURN(const std::vector<MoeCallLanes> moe, read_moe_lanes(root_out, offset));
  for (const MoeCallLanes& call : moe) {
    if (!is_shown(call.rank_id)) continue;
    if (options.max_steps > 0) {  // the kernel's own clock is the window's (offsets are applied after)
      const auto off = offset.count(call.rank_id) ? offset[call.rank_id] : 0.0;
      auto w = window.find(call.rank_id);
      if (w == window.end() || call.kernel_start_us + off < w->second.first || call.kernel_start_us + off >= w->second.second)
        continue;
    }
    const uint32_t p = pid.count(call.rank_id) ? pid[call.rank_id] : static_cast<uint32_t>(pid.size());
    for (const MoeLaneInterval& iv : call.intervals) {
      const std::string lane = "MoE " + (iv.core_type < call.core_groups.size() ? call.core_groups[iv.core_type] : "core") +
                               " core " + std::to_string(iv.core_id);
      auto [it, inserted] = tid.emplace(std::make_pair(p, lane), static_cast<uint32_t>(tid.size()));
      if (inserted)
        emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) +
             ",\"args\":{\"name\":" + escaped(lane + " (" + call.kernel_name + ")") + "}}");
      std::string ev = "{\"ph\":\"X\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) + ",\"ts\":";
      std::snprintf(buf, sizeof buf, "%.3f,\"dur\":%.3f", (call.kernel_start_us - origin) + iv.start_us, iv.end_us - iv.start_us);
      ev += buf;
      const std::string& label = call.labels[iv.label];
      ev += ",\"name\":" + escaped(iv.index != 0 ? label + " #" + std::to_string(iv.index) : label);
      ev += ",\"args\":{\"role\":" + escaped(call.roles[iv.label]) + ",\"kernel_event_id\":" + escaped(call.kernel_event_id) +
            ",\"placement\":" + escaped(call.t0_aligned ? "row start + core T0" : "row start (cores' T0 unknown)") + "}}";
      emit(ev);
      ++events;
    }
  }
  // nn.Module calls: one lane per Python thread of the rank, the calls nested by time (issue 21)
  for (const ModuleLanes& rank : modules) {
    if (!is_shown(rank.rank_id)) continue;
    const uint32_t p = pid.count(rank.rank_id) ? pid[rank.rank_id] : static_cast<uint32_t>(pid.size());
    const double off = offset.count(rank.rank_id) ? offset[rank.rank_id] : 0.0;
    const auto w = window.find(rank.rank_id);
    // ts on the corrected clock from the origin, in ns first: epoch µs in a double keep only ~0.25 µs
    const int64_t base_ns = std::llround((origin + off) * 1000.0);
    for (const ModuleLaneCall& c : rank.calls) {
      const double own_start_us = static_cast<double>(c.start_ns) / 1e3;
      if (options.max_steps > 0 &&  // the window is on the rank's own clock
          (w == window.end() || own_start_us < w->second.first || own_start_us >= w->second.second))
        continue;
      const std::string lane = rank.threads > 1 ? "modules (thread " + std::to_string(c.tid) + ")" : std::string("modules");
      auto [it, inserted] = tid.emplace(std::make_pair(p, lane), static_cast<uint32_t>(tid.size()));
      if (inserted)
        emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) +
             ",\"args\":{\"name\":" + escaped(lane) + "}}");
      std::string ev = "{\"ph\":\"X\",\"pid\":" + std::to_string(p) + ",\"tid\":" + std::to_string(it->second) + ",\"ts\":";
      std::snprintf(buf, sizeof buf, "%.3f,\"dur\":%.3f", static_cast<double>(c.start_ns - base_ns) / 1e3,
                    static_cast<double>(c.end_ns - c.start_ns) / 1e3);
      ev += buf;
      ev += ",\"name\":" + escaped(rank.names[c.row]) + ",\"args\":{\"module_path\":" + escaped(rank.paths[c.row]);
      std::snprintf(buf, sizeof buf, ",\"self_device_us\":%.3f,\"total_device_us\":%.3f,\"tasks\":%llu}}", c.self_device_us,
                    c.total_device_us, static_cast<unsigned long long>(c.tasks));
      ev += buf;
      emit(ev);
      ++events;
    }
  }
  // findings as global instant events at the start of their first suspected rank's first step
  {
    if (diagnosis.ok())
      for (const model::Finding& f : diagnosis->findings) {
        if (f.finding_type.empty()) continue;
        const std::string r = f.suspected_ranks.empty() ? std::string() : f.suspected_ranks.front();
        const double t0 = first_step_start.count(r) ? first_step_start[r] - (offset.count(r) ? offset[r] : 0.0) - origin : 0.0;
        const uint32_t p = pid.count(r) ? pid[r] : 0;
        std::snprintf(buf, sizeof buf, "%.3f", std::max(0.0, t0));
        emit("{\"ph\":\"i\",\"s\":\"p\",\"pid\":" + std::to_string(p) + ",\"tid\":0,\"ts\":" + buf + ",\"name\":" +
             escaped("finding: " + f.finding_type) + ",\"args\":{\"severity\":" + escaped(f.severity) +
             ",\"summary\":" + escaped(f.summary) + "}}");
      }
  }
  out.write("\n]}\n");
  ASCPROF_RETURN_IF_ERROR(out.commit());
  return path;
}

}  // namespace ascprof::report
