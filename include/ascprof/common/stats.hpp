#pragma once
/// Data-quality counters declared once in stats.def (name, severity, description).
///
/// Importers never stop on a malformed record: they count it here (keeping the first few
/// "file:place: reason" samples so users can find the record) and carry on. Counters merge
/// across ranks and are written to each rank's HDF5 `/stats` table and to the manifests.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ascprof {

enum class StatSeverity : uint8_t { kInfo, kWarning, kDataLoss };

enum class Stat : uint16_t {
#define ASCPROF_STAT(name, severity, description) name,
#include "ascprof/common/stats.def"
#undef ASCPROF_STAT
  kCount
};

struct StatInfo {
  const char* name;
  StatSeverity severity;
  const char* description;
};

/// Declared metadata for a counter.
const StatInfo& stat_info(Stat s);
const char* severity_name(StatSeverity s);
constexpr size_t kStatCount = static_cast<size_t>(Stat::kCount);

class Stats {
 public:
  static constexpr size_t kMaxSamples = 5;

  void inc(Stat s, uint64_t n = 1) { counts_[static_cast<size_t>(s)] += n; }
  /// Increments and keeps `detail` ("file:line: reason") if fewer than kMaxSamples are kept.
  void note(Stat s, std::string detail);
  uint64_t count(Stat s) const { return counts_[static_cast<size_t>(s)]; }
  const std::vector<std::string>& samples(Stat s) const { return samples_[static_cast<size_t>(s)]; }
  /// Sum of counts with the given severity.
  uint64_t total(StatSeverity severity) const;
  void merge(const Stats& other);
  /// JSON object {name: {count, severity, description, samples[]}} of the non-zero counters.
  std::string to_json() const;

 private:
  std::array<uint64_t, kStatCount> counts_{};
  std::array<std::vector<std::string>, kStatCount> samples_{};
};

}  // namespace ascprof
