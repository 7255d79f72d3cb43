#pragma once
/// A root table too large to concatenate (knowledge/summarize.rules [root_tables]): the root holds
/// `<table>.parts.json` instead of `<table>`, listing where the table's rows already are, byte
/// ranges of the ranks' part packs (ranks/<id>.parts), in the order the concatenation has them.
/// The header followed by the ranges' bytes (each inflated when its encoding is "zlib": the packs
/// store their sections deflated, part_pack.hpp), in order, is byte for byte the file the root
/// would have written; nothing is copied, so at 10,000 ranks the root does not rewrite ~20 GB of rows the
/// ranks' files hold already (issue 22: root outputs that do not grow with ranks x rows).
///
/// Readers: report::for_each_row reads an indexed table as it reads the file, and
/// `ascprof-mpi table OUT/<root>/<table>` writes the whole table to stdout.
///
/// Format (JSON, written atomically):
///   {"format": "ascprof table index 2", "table": "evidence_index.csv", "header": "<header line>\n",
///    "rows": <data rows>, "bytes": <header + the ranges' bytes as read>,
///    "parts": [{"rank_id": "r0", "file": "ranks/r0.parts", "offset": O, "length": L, "rows": R,
///               "encoding": "zlib" | "raw", "raw_length": bytes once inflated}, ...]}
/// A "zlib" part is one complete zlib stream (Python: zlib.decompress(the L bytes at O)).
/// `file` is relative to the root's output folder (absolute when the pack lies outside it). A part
/// with an empty rank_id holds rows merged over the ranks (evidence_index.csv's bubble rows, in a
/// root file of their own).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::store {

struct TablePart {
  std::string rank_id;
  std::string file;
  uint64_t offset = 0, length = 0, rows = 0;
  uint64_t raw_length = 0;  ///< the part's bytes as read (== length unless zlib)
  bool zlib = false;        ///< the range is one zlib stream
};

struct TableIndex {
  std::string table;   ///< the file name the table would have (e.g. "evidence_index.csv")
  std::string header;  ///< its header line, with the newline
  uint64_t rows = 0;
  std::vector<TablePart> parts;
  /// Bytes of the table the index stands for: header + the parts as read.
  uint64_t bytes() const;
};

inline constexpr const char* kTableIndexFormat = "ascprof table index 2";

/// `<table>.parts.json` beside `table`.
std::filesystem::path table_index_path(const std::filesystem::path& table);
/// Writes table_index_path(table) atomically.
Status write_table_index(const std::filesystem::path& table, const TableIndex& index);
/// Reads table_index_path(table). kIo if unreadable; kParse/kSchema naming the file if it is not
/// a complete index of this format.
Result<TableIndex> read_table_index(const std::filesystem::path& table);
/// `part`'s bytes (its file resolved against `root_dir`; inflated if zlib) into `out` (replacing
/// it). kIo naming the file; kParse if the range lies outside the file or does not inflate to its
/// raw length (a pack rewritten since the index was).
Status read_table_part(const std::filesystem::path& root_dir, const TablePart& part, std::string& out);

}  // namespace ascprof::store
