#pragma once
// Private helpers shared by the small-JSON readers of this module (profiler_info, profiler_metadata).
// Kept out of include/ so simdjson.h never reaches public headers.
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "ascprof/common/files.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::importers::detail {

/// Loads `path` into a padded buffer (kIo error naming the file on failure).
inline Result<simdjson::padded_string> load_padded(const std::filesystem::path& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) return mapped.status();
  return simdjson::padded_string(mapped->data());
}

/// kParse error "FILE:byte N: <simdjson reason>" at the document's current position.
inline Status json_error(simdjson::error_code e, std::string_view label, const simdjson::padded_string& buf,
                         simdjson::ondemand::document& doc) {
  size_t offset = buf.size();
  const char* loc = nullptr;
  const bool at_end = e == simdjson::UNCLOSED_STRING || e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT;
  if (!at_end && doc.current_location().get(loc) == simdjson::SUCCESS && loc != nullptr && loc >= buf.data() &&
      loc <= buf.data() + buf.size())
    offset = static_cast<size_t>(loc - buf.data());
  std::string reason = simdjson::error_message(e);
  if (offset >= buf.size()) reason += " (file ends early: truncated?)";
  return file_error(ErrorCode::kParse, label, "byte " + std::to_string(offset), reason);
}

/// kParse error for a failed parser.iterate(): unclosed strings and unbalanced braces are found by
/// the whole-file pass and almost always mean a cut-short file, so the place is its end.
inline Status iterate_error(simdjson::error_code e, std::string_view label, size_t size) {
  std::string reason = simdjson::error_message(e);
  if (e == simdjson::UNCLOSED_STRING || e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    reason += " (file ends early: truncated?)";
    return file_error(ErrorCode::kParse, label, "byte " + std::to_string(size), reason);
  }
  return file_error(ErrorCode::kParse, label, "byte 0", reason);
}

/// Reads a small JSON file with `Reader(label, buffer, doc, stats, out).run()`. Counters reach
/// `stats` only when the whole file was read, so a failed file leaves no half-counted records.
template <class Reader, class Out>
Status read_json_file(const std::filesystem::path& path, Stats& stats, Out& out) {
  auto buf = load_padded(path);
  if (!buf.ok()) return buf.status();
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto e = parser.iterate(*buf).get(doc)) return iterate_error(e, path.string(), buf->size());
  Stats local;
  Reader reader(path.string(), *buf, doc, local, out);
  ASCPROF_RETURN_IF_ERROR(reader.run());
  stats.merge(local);
  return {};
}

/// Key without one leading '_' (E1 profiler_info spells schedule keys "_wait", "_warmup", ...).
inline std::string_view strip_underscore(std::string_view key) {
  return (!key.empty() && key.front() == '_') ? key.substr(1) : key;
}

}  // namespace ascprof::importers::detail
