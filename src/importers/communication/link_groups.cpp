#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ascprof/importers/communication.hpp"

namespace ascprof::importers {

std::vector<int32_t> link_groups(const model::CommStatTable& table, const model::ProfilerMetadata& meta,
                                 Stats& stats, std::string_view file_label) {
  std::unordered_map<uint64_t, int32_t> by_hash;
  by_hash.reserve(meta.groups.size());
  for (size_t i = 0; i < meta.groups.size(); ++i) by_hash.emplace(meta.groups[i].hash, static_cast<int32_t>(i));

  std::vector<int32_t> out(table.size(), -1);
  std::unordered_set<uint64_t> unknown;
  for (size_t r = 0; r < table.size(); ++r) {
    const uint64_t h = table.group_hash[r];
    if (h == 0 || table.is_total[r]) continue;
    if (auto it = by_hash.find(h); it != by_hash.end()) {
      out[r] = it->second;
    } else if (unknown.insert(h).second) {
      stats.note(Stat::comm_unknown_group_hash,
                 std::string(file_label) + ": @" + std::to_string(h) + " matches none of the " +
                     std::to_string(meta.groups.size()) + " communicators in profiler_metadata.json");
    }
  }
  return out;
}

}  // namespace ascprof::importers
