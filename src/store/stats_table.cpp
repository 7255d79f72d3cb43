#include "ascprof/store/stats_table.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include "h5_detail.hpp"

namespace ascprof::store {

Status write_stats(H5Writer& writer, const Stats& stats, std::string_view group) {
  std::vector<std::string> names;
  std::vector<std::string> severities;
  std::vector<std::string> descriptions;
  std::vector<std::string> first_samples;
  std::vector<uint64_t> counts;
  for (size_t i = 0; i < kStatCount; ++i) {
    const auto s = static_cast<Stat>(i);
    const StatInfo& info = stat_info(s);
    names.emplace_back(info.name);
    severities.emplace_back(severity_name(info.severity));
    descriptions.emplace_back(info.description);
    const auto& samples = stats.samples(s);
    first_samples.emplace_back(samples.empty() ? std::string() : samples.front());
    counts.push_back(stats.count(s));
  }
  TableWriter t(writer, group, kStatCount);
  t.string_column("name", names)
      .string_column("severity", severities)
      .column("count", counts)
      .string_column("description", descriptions)
      .string_column("first_sample", first_samples);
  return t.finish();
}

Status read_stats(const H5Reader& reader, Stats* stats, std::string_view group) {
  const std::string g = detail::object_path(group);
  ASCPROF_ASSIGN_OR_RETURN(std::vector<std::string> names, reader.read_strings(g + "/name"));
  ASCPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> counts, reader.read_column<uint64_t>(g + "/count"));
  ASCPROF_ASSIGN_OR_RETURN(std::vector<std::string> samples, reader.read_strings(g + "/first_sample"));
  if (counts.size() != names.size() || samples.size() != names.size())
    return file_error(ErrorCode::kSchema, reader.path().string(), "table " + g, "columns differ in length");
  std::unordered_map<std::string_view, Stat> by_name;
  for (size_t i = 0; i < kStatCount; ++i) by_name.emplace(stat_info(static_cast<Stat>(i)).name, static_cast<Stat>(i));
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = by_name.find(names[i]);
    if (it == by_name.end() || counts[i] == 0) continue;
    uint64_t n = counts[i];
    if (!samples[i].empty()) {
      stats->note(it->second, samples[i]);
      --n;
    }
    if (n > 0) stats->inc(it->second, n);
  }
  return {};
}

}  // namespace ascprof::store
