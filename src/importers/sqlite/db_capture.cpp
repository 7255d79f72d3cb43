// Capture facts of a profiler database: schema version, rank, device, parallel groups.
#include <string>

#include "ascprof/importers/capture_info.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "sqlite_file.hpp"

namespace ascprof::importers {

namespace fs = std::filesystem;

Result<ProfilerDbInfo> read_profiler_db_info(const fs::path& path, Stats& stats) {
  auto opened = db::SqliteFile::open(path);
  if (!opened.ok()) return opened.status();
  const db::SqliteFile& f = *opened;
  ProfilerDbInfo info;
  info.schema_version = f.meta("SCHEMA_VERSION");
  if (info.schema_version.empty()) info.schema_version = "1.0.0";
  const std::string major = info.schema_version.substr(0, info.schema_version.find('.'));
  if (major != "1")
    return f.error("META_DATA", "schema version " + info.schema_version +
                                    " is not supported (this build reads the 1.x schemas of 2025-2026)");
  const size_t dot = info.schema_version.find('.');
  if (dot != std::string::npos && std::atoi(info.schema_version.c_str() + dot + 1) > 2)
    stats.note(Stat::db_newer_schema, f.path() + ":table META_DATA: schema version " + info.schema_version);
  if (!f.has_table("TASK")) return f.error("TASK", "missing: this is not a profiler database (no device tasks)");
  if (f.has_table("RANK_DEVICE_MAP")) {
    auto q = f.prepare("SELECT rankId, deviceId FROM RANK_DEVICE_MAP", "RANK_DEVICE_MAP");
    if (!q.ok()) return q.status();
    if (q->step()) {
      info.rank_id = q->i64(0, -1);
      const int64_t dev = q->i64(1, -1);
      info.device_id = dev >= 0 && dev <= INT32_MAX ? static_cast<int32_t>(dev) : -1;
    }
    if (!q->status().ok()) return q->status();
  }
  // parallel_group_info and distributed_args are JSON values: read them as profiler_metadata.json is.
  const std::string groups = f.meta("parallel_group_info"), args = f.meta("distributed_args");
  if (!groups.empty() || !args.empty()) {
    std::string json = "{";
    if (!groups.empty()) json += "\"parallel_group_info\": " + groups;
    if (!args.empty()) json += std::string(groups.empty() ? "" : ", ") + "\"distributed_args\": " + args;
    json += "}";
    auto meta = parse_profiler_metadata(json, f.path() + ":table META_DATA", stats);
    if (!meta.ok()) return meta.status();
    info.metadata = std::move(meta).value();
  }
  return info;
}

}  // namespace ascprof::importers
