#include "ascprof/common/stats.hpp"

#include "ascprof/common/json_writer.hpp"

namespace ascprof {
namespace {
constexpr StatInfo kInfos[] = {
#define ASCPROF_STAT(name, severity, description) {#name, StatSeverity::severity, description},
#include "ascprof/common/stats.def"
#undef ASCPROF_STAT
};
static_assert(sizeof(kInfos) / sizeof(kInfos[0]) == kStatCount);
}  // namespace

const StatInfo& stat_info(Stat s) { return kInfos[static_cast<size_t>(s)]; }

const char* severity_name(StatSeverity s) {
  switch (s) {
    case StatSeverity::kInfo: return "info";
    case StatSeverity::kWarning: return "warning";
    case StatSeverity::kDataLoss: return "data_loss";
  }
  return "info";
}

void Stats::note(Stat s, std::string detail) {
  const auto i = static_cast<size_t>(s);
  ++counts_[i];
  if (samples_[i].size() < kMaxSamples) samples_[i].push_back(std::move(detail));
}

uint64_t Stats::total(StatSeverity severity) const {
  uint64_t sum = 0;
  for (size_t i = 0; i < kStatCount; ++i)
    if (kInfos[i].severity == severity) sum += counts_[i];
  return sum;
}

void Stats::merge(const Stats& other) {
  for (size_t i = 0; i < kStatCount; ++i) {
    counts_[i] += other.counts_[i];
    for (const auto& s : other.samples_[i])
      if (samples_[i].size() < kMaxSamples) samples_[i].push_back(s);
  }
}

std::string Stats::to_json() const {
  JsonWriter w;
  w.begin_object();
  for (size_t i = 0; i < kStatCount; ++i) {
    if (counts_[i] == 0) continue;
    w.key(kInfos[i].name);
    w.begin_object();
    w.kv("count", counts_[i]);
    w.kv("severity", severity_name(kInfos[i].severity));
    w.kv("description", kInfos[i].description);
    w.key("samples");
    w.begin_array();
    for (const auto& s : samples_[i]) w.value(s);
    w.end_array();
    w.end_object();
  }
  w.end_object();
  return w.str();
}

}  // namespace ascprof
