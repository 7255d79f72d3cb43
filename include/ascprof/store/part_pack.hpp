#pragma once
/// A rank's rendered row fragments (the parts of the root's CSV and JSONL tables) in ONE file,
/// `ranks/<rank_id>.parts`, instead of a folder of one file per table.
///
/// Why: a rank wrote 17 part files (each created under a temporary name and renamed) in a folder
/// of its own; file creation measured ~0.1-0.2 ms each here, and parallel file systems handle
/// tens of thousands of small files badly (issue 22: few files per rank). A pack is created,
/// appended to and renamed once.
///
/// Layout (all offsets from the start of the file):
///   "ascprof part pack 3\n"                      header, 20 bytes
///   segment bytes ...                             each section's bytes, in one or more segments
///   index                                         one line per segment:
///                                                 "<section>\t<offset>\t<length>\t<rows>\t<codec>\t<raw length>\n"
///                                                 (a section's segments in order; an empty section
///                                                 is one line of length 0; rows as the writer counted
///                                                 them, so the root knows a table's rows unread;
///                                                 codec "zlib" (the segment is one zlib stream of
///                                                 <raw length> bytes) or "raw" (stored as is))
///   "ASCPACK1" <u64 LE index offset> <u64 LE index length>   footer, 24 bytes
/// Sections are written as they are rendered: each keeps up to kSegmentBytes in memory, then
/// becomes a segment, so a GB-class rank's table is never held whole and tables interleave.
///
/// Why compressed (issue 22, output <= 1.0 x input): the packs hold the rank's rows of the root
/// tables that the root also copies (a rerun reuses a rank from its pack), 0.71 x the input on a
/// 4,096-rank root as text; zlib level 1 stores them in ~1/6 (measured ~190 MB/s to deflate, the
/// root inflates while it copies). A section read line by line over thousands of ranks at once
/// (the k-way merges) is stored raw (store_raw): a cursor then needs no inflate state per rank.
/// Readers see section bytes only; the codec shows in section_segments() for the table index.
///
/// Atomicity: the writer works on a temporary sibling (temp_sibling) and commit() renames it; a
/// writer destroyed without commit() removes it. A reader checks the header, the footer and that
/// every segment lies inside the file with a possible raw length, and fails with kParse naming the
/// file otherwise; a deflated segment is checked when read (it must inflate to exactly its raw
/// length), its error kParse naming the file and the segment's byte.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::store {

class PartPackWriter {
 public:
  /// A section spills its buffer as a segment once it holds this many bytes.
  static constexpr size_t kSegmentBytes = 4u << 20;

  PartPackWriter();
  ~PartPackWriter();
  PartPackWriter(const PartPackWriter&) = delete;
  PartPackWriter& operator=(const PartPackWriter&) = delete;
  // Without a successful commit() the temporary file is removed (AtomicFileWriter).

  /// Opens the temporary file for `path` (creating its folder). kIo naming the path otherwise.
  Status open(const std::filesystem::path& path);
  /// Appends `bytes`, holding `rows` rows, to `section` (declaring it: a section added with no
  /// bytes is an empty section).
  void add(std::string_view section, std::string_view bytes, uint64_t rows = 0);
  /// Stores `section` uncompressed (call before its bytes are added): for the sections the root
  /// merges line by line over every rank at once.
  void store_raw(std::string_view section) { raw_sections_.emplace(section); }
  /// Writes the buffered bytes, the index and the footer, closes and renames onto the path. Returns
  /// the first error of any call (the file is then removed).
  Status commit();
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  struct Section {
    std::string buffer;
    uint64_t buffer_rows = 0;
    bool has_segment = false;
  };
  void segment(const std::string& name, Section& s, std::string_view bytes, uint64_t rows);
  void spill(const std::string& name, Section& s);
  void write(std::string_view bytes);
  /// `bytes` deflated into deflated_ (false, with the error kept for commit(), if the compressor fails).
  bool deflate_segment(std::string_view bytes);

  AtomicFileWriter file_;  ///< the temporary file, renamed by commit() or removed
  uint64_t offset_ = 0;
  std::vector<std::string> order_;  ///< sections in first-add order
  std::map<std::string, Section, std::less<>> sections_;
  std::string index_;
  std::set<std::string, std::less<>> raw_sections_;
  struct Deflater;  // the segments' compressor (libdeflate stays out of this header)
  std::unique_ptr<Deflater> deflater_;
  std::string deflated_;  ///< scratch: the last segment deflated
  Status error_;          ///< a deflate failure, returned by commit()
};

class PartPackReader {
 public:
  /// A run of a section's bytes in the file: `length` stored bytes holding `raw_length` section
  /// bytes (equal unless `zlib`).
  struct Segment {
    uint64_t offset = 0, length = 0, rows = 0, raw_length = 0;
    bool zlib = false;
  };
  /// Opens `path` and reads its index. kIo if it cannot be read, kParse (naming the file and what
  /// is wrong) if it is not a complete pack.
  static Result<PartPackReader> open(const std::filesystem::path& path);

  // Holds no open file between calls (each read opens, reads and closes): a root's merges keep
  // one reader per rank, and 10,000 ranks must not mean 10,000 open descriptors.

  const std::filesystem::path& path() const { return path_; }
  bool has(std::string_view section) const { return sections_.find(section) != sections_.end(); }
  /// The section names, sorted.
  std::vector<std::string> sections() const {
    std::vector<std::string> out;
    for (const auto& [name, segs] : sections_) out.push_back(name);
    return out;
  }
  /// Where `section`'s bytes are in the file, in order (empty when absent or empty): a root table
  /// kept as an index points at them (table_index.hpp), with their codec.
  std::vector<Segment> section_segments(std::string_view section) const {
    const auto* s = segments(section);
    return s == nullptr ? std::vector<Segment>{} : *s;
  }
  /// Bytes of `section` as read (inflated; 0 when absent).
  uint64_t size(std::string_view section) const;
  /// Rows of `section` as its writer counted them (0 when absent).
  uint64_t rows(std::string_view section) const;
  /// Appends the section, from its byte `skip` on, to the open file `out_fd` at its current
  /// position: a raw segment copied inside the kernel (copy_file_range; read/write where that is
  /// not supported), a zlib one inflated through a buffer. kIo naming the pack or `out_name` on a
  /// failure, kParse naming the pack and the segment if one does not inflate to its length.
  Status copy_to(std::string_view section, int out_fd, const std::filesystem::path& out_name, uint64_t skip = 0) const;
  /// Writes the section, from its byte `skip` on, into `out_fd` from byte `out_offset` on (pwrite /
  /// copy_file_range at an explicit offset; the descriptor's position is not used), so several
  /// writers can fill one file's disjoint ranges. Errors as copy_to.
  Status copy_at(std::string_view section, int out_fd, uint64_t out_offset, const std::filesystem::path& out_name,
                 uint64_t skip = 0) const;
  /// The whole section. kSchema naming the file if the pack has no such section.
  Result<std::string> read(std::string_view section) const;
  /// Reads `section` in order, `chunk` bytes at most at a time, handing each piece to `sink`
  /// (which returns false to stop, e.g. on a write error). kSchema if absent, kIo on a read error,
  /// kParse if a segment does not inflate.
  template <class Sink>
  Status stream(std::string_view section, size_t chunk, Sink&& sink) const {
    const auto* segs = segments(section);
    if (segs == nullptr) return missing(section);
    bool stopped = false;
    for (const auto& seg : *segs) {
      ASCPROF_RETURN_IF_ERROR(for_each_piece(seg, chunk, [&](std::string_view piece) {
        stopped = !sink(piece);
        return !stopped;
      }));
      if (stopped) break;
    }
    return {};
  }

 private:
  friend class PartLineCursor;
  using Segments = std::vector<Segment>;
  PartPackReader() = default;
  /// Up to `n` bytes of `section` from its byte `pos` on into `out` (fewer at its end; from a zlib
  /// segment, the rest of that segment, so a cursor inflates each segment once).
  Status read_section_at(std::string_view section, uint64_t pos, size_t n, std::string& out) const;
  const Segments* segments(std::string_view section) const;
  Status missing(std::string_view section) const;
  /// Appends the file's `n` bytes at `offset` to `out`.
  Status read_at(uint64_t offset, size_t n, std::string& out) const;
  using PieceSink = std::function<bool(std::string_view)>;
  /// Hands `seg`'s section bytes to `sink` in order, at most `chunk` at a time (inflating a zlib
  /// segment through fixed buffers), until it returns false.
  Status for_each_piece(const Segment& seg, size_t chunk, const PieceSink& sink) const;

  std::filesystem::path path_;
  std::map<std::string, Segments, std::less<>> sections_;
};

/// One rank's section placed at an offset of a root file: the root's concatenated tables are
/// assembled from these by whichever process runs them (issue 17: no serial tail). `length` is the
/// section's size as the planner read it from the pack's index; a pack that no longer holds that
/// many bytes is an error, not a shifted table.
struct SectionCopy {
  std::string pack;     ///< the rank's part pack
  std::string section;  ///< its section
  std::string dest;     ///< the file written into (a temporary name, renamed once every copy is done)
  uint64_t offset = 0;  ///< where the section's first byte (after `skip`) goes
  uint64_t length = 0;  ///< the section's bytes as read, `skip` not counted
  uint64_t skip = 0;    ///< bytes of the section's start left out (a JSON array's first ",")
};

/// Runs `copies[i]` for every i in [begin, end), each pack opened once for its run of copies and
/// each destination once. Returns the first error (naming the pack or the destination).
Status run_section_copies(const std::vector<SectionCopy>& copies, size_t begin, size_t end);

/// Runs a root's section copies wherever it chooses (the orchestration's runner spreads them over
/// the processes); an empty runner means run_section_copies over all of them here.
using SectionCopyRunner = std::function<Status(const std::vector<SectionCopy>&)>;

/// Splits `copies` (grouped by pack, as the planner lists them) into `parts` contiguous runs of
/// about equal bytes, never splitting a pack's run; returns the part boundaries (parts + 1 values).
std::vector<size_t> split_section_copies(const std::vector<SectionCopy>& copies, size_t parts);

/// Runs `copies` split into `threads` runs (split_section_copies), each on its own thread (the
/// runs share no reader and write disjoint bytes); returns the first error in copy order.
Status run_section_copies_on_threads(const std::vector<SectionCopy>& copies, unsigned threads);

/// Reads a section line by line through a small buffer (k-way merges hold one cursor per rank).
class PartLineCursor {
 public:
  PartLineCursor(const PartPackReader& pack, std::string section);
  /// The next line without its '\n' into `line`; false at the end (or on a read error: status()).
  bool next(std::string& line);
  const Status& status() const { return st_; }

 private:
  const PartPackReader* pack_;
  std::string section_;
  uint64_t pos_ = 0, size_ = 0;
  std::string buf_;
  size_t at_ = 0;
  Status st_;
};

}  // namespace ascprof::store
