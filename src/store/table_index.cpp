// Root tables kept as an index of the ranks' part-pack ranges (see table_index.hpp).
#include "ascprof/store/table_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <simdjson.h>
#include <zlib.h>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"

namespace fs = std::filesystem;

namespace ascprof::store {

uint64_t TableIndex::bytes() const {
  uint64_t n = header.size();
  for (const auto& p : parts) n += p.raw_length;
  return n;
}

fs::path table_index_path(const fs::path& table) {
  fs::path p = table;
  p += ".parts.json";
  return p;
}

Status write_table_index(const fs::path& table, const TableIndex& index) {
  JsonWriter w;
  w.begin_object();
  w.kv("format", kTableIndexFormat);
  w.kv("table", index.table);
  w.kv("header", index.header);
  w.kv("rows", index.rows);
  w.kv("bytes", index.bytes());
  w.key("parts");
  w.begin_array();
  for (const auto& p : index.parts) {
    w.begin_object();
    w.kv("rank_id", p.rank_id);
    w.kv("file", p.file);
    w.kv("offset", p.offset);
    w.kv("length", p.length);
    w.kv("rows", p.rows);
    w.kv("encoding", p.zlib ? "zlib" : "raw");
    w.kv("raw_length", p.raw_length);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  std::string text = w.take();
  text.push_back('\n');
  return write_file_atomic(table_index_path(table), text);
}

Result<TableIndex> read_table_index(const fs::path& table) {
  const fs::path path = table_index_path(table);
  ASCPROF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS)
    return file_error(ErrorCode::kParse, path.string(), "", "not JSON (a damaged table index)");
  auto bad = [&path](const std::string& where, const char* why) {
    return file_error(ErrorCode::kSchema, path.string(), where, why);
  };
  std::string_view s;
  if (doc["format"].get(s) != simdjson::SUCCESS || s != kTableIndexFormat)
    return bad("format", "not an ascprof table index of this version");
  TableIndex idx;
  if (doc["table"].get(s) != simdjson::SUCCESS) return bad("table", "missing");
  idx.table = std::string(s);
  if (doc["header"].get(s) != simdjson::SUCCESS) return bad("header", "missing");
  idx.header = std::string(s);
  if (doc["rows"].get(idx.rows) != simdjson::SUCCESS) return bad("rows", "missing");
  simdjson::dom::array parts;
  if (doc["parts"].get(parts) != simdjson::SUCCESS) return bad("parts", "missing");
  size_t i = 0;
  for (simdjson::dom::element e : parts) {
    TablePart p;
    const std::string where = "parts[" + std::to_string(i++) + "]";
    if (e["rank_id"].get(s) != simdjson::SUCCESS) return bad(where, "no rank_id");
    p.rank_id = std::string(s);
    if (e["file"].get(s) != simdjson::SUCCESS || s.empty()) return bad(where, "no file");
    p.file = std::string(s);
    if (e["offset"].get(p.offset) != simdjson::SUCCESS || e["length"].get(p.length) != simdjson::SUCCESS ||
        e["rows"].get(p.rows) != simdjson::SUCCESS)
      return bad(where, "offset, length and rows must be non-negative integers");
    if (e["encoding"].get(s) != simdjson::SUCCESS || (s != "zlib" && s != "raw")) return bad(where, "encoding must be \"zlib\" or \"raw\"");
    p.zlib = s == "zlib";
    if (e["raw_length"].get(p.raw_length) != simdjson::SUCCESS) return bad(where, "raw_length must be a non-negative integer");
    if (!p.zlib && p.raw_length != p.length) return bad(where, "a raw part's raw_length must equal its length");
    if (p.zlib && p.raw_length / 1032 > p.length) return bad(where, "raw_length impossible for a zlib part of this length");
    idx.parts.push_back(std::move(p));
  }
  return idx;
}

Status read_table_part(const fs::path& root_dir, const TablePart& part, std::string& out) {
  const fs::path path = fs::path(part.file).is_absolute() ? fs::path(part.file) : root_dir / part.file;
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  struct stat st {};
  Status status;
  if (::fstat(fd, &st) != 0) {
    status = file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  } else if (part.offset > static_cast<uint64_t>(st.st_size) ||
             part.length > static_cast<uint64_t>(st.st_size) - part.offset) {
    status = file_error(ErrorCode::kParse, path.string(), "bytes " + std::to_string(part.offset) + "+" + std::to_string(part.length),
                        "outside the file (the file changed after the table index was written)");
  } else {
    out.resize(static_cast<size_t>(part.length));
    for (size_t got = 0; got < out.size();) {
      const ssize_t r = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(part.offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        status = file_error(ErrorCode::kIo, path.string(), "byte " + std::to_string(part.offset + got),
                            r < 0 ? std::strerror(errno) : "the file ends early");
        break;
      }
      got += static_cast<size_t>(r);
    }
  }
  ::close(fd);
  if (!status.ok() || !part.zlib) return status;
  // one zlib stream of raw_length bytes
  std::string raw(static_cast<size_t>(part.raw_length), '\0');
  uLongf got = static_cast<uLongf>(raw.size());
  const int zr = raw.empty() ? Z_DATA_ERROR : ::uncompress(reinterpret_cast<Bytef*>(raw.data()), &got,
                                                          reinterpret_cast<const Bytef*>(out.data()), static_cast<uLong>(out.size()));
  if (zr != Z_OK || got != raw.size())
    return file_error(ErrorCode::kParse, path.string(), "bytes " + std::to_string(part.offset) + "+" + std::to_string(part.length),
                      "does not inflate to its raw length " + std::to_string(part.raw_length) +
                          " (the file changed after the table index was written)");
  out = std::move(raw);
  return {};
}

}  // namespace ascprof::store
