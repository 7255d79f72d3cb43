// A rank's row fragments in one file (see part_pack.hpp for the layout and why).
#include "ascprof/store/part_pack.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include <zlib.h>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"
#include "zlib_codec.hpp"

namespace ascprof::store {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHeader = "ascprof part pack 3\n";
// A pack of the layout before compressed segments: refused by name, so its rank is redone.
constexpr std::string_view kOldHeader = "ascprof part pack 2\n";
// Level 1: ~6x smaller on the packs' CSV/JSON rows at ~450 MB/s (libdeflate, zlib_codec.hpp); zlib's
// level 6 gained 25 % for 2.5x the CPU (measured on a 4,096-rank root's packs).
constexpr int kDeflateLevel = 1;
// zlib cannot expand more than ~1032:1; a raw length beyond this is a damaged index, and it bounds
// what a reader reserves.
constexpr uint64_t kMaxInflateRatio = 1032;
// Segments up to this raw length inflate whole (libdeflate, into a buffer of their raw length); a
// larger one (a single add beyond kSegmentBytes) streams through zlib's inflate in fixed buffers.
constexpr uint64_t kWholeInflateBytes = 16u << 20;
constexpr std::string_view kFooterMagic = "ASCPACK1";
constexpr size_t kFooterBytes = 24;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

Status pread_all(int fd, const fs::path& path, uint64_t offset, size_t n, char* out) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return file_error(ErrorCode::kIo, path.string(), "byte " + std::to_string(offset + got), std::strerror(errno));
    }
    if (r == 0)
      return file_error(ErrorCode::kParse, path.string(), "byte " + std::to_string(offset + got),
                        "damaged part pack: the file ends early");
    got += static_cast<size_t>(r);
  }
  return {};
}

}  // namespace

// ---- writer -------------------------------------------------------------------------------------

struct PartPackWriter::Deflater {
  detail::ZlibCompressor c{kDeflateLevel};
};

PartPackWriter::PartPackWriter() : deflater_(std::make_unique<Deflater>()) {}
PartPackWriter::~PartPackWriter() = default;

bool PartPackWriter::deflate_segment(std::string_view bytes) {
  detail::ZlibCompressor& c = deflater_->c;
  deflated_.resize(c.bound(bytes.size()));
  const size_t n = c.compress_into(bytes.data(), bytes.size(), reinterpret_cast<unsigned char*>(deflated_.data()),
                                   deflated_.size());
  deflated_.resize(n);
  return n > 0;
}

Status PartPackWriter::open(const fs::path& path) {
  ASCPROF_RETURN_IF_ERROR(file_.open(path));
  write(kHeader);
  return {};
}

void PartPackWriter::write(std::string_view bytes) {
  file_.write(bytes);  // a failed write is kept by the file and returned by commit()
  offset_ += bytes.size();
}

void PartPackWriter::segment(const std::string& name, Section& s, std::string_view bytes, uint64_t rows) {
  // a segment deflates in one call (uInt lengths): a larger one (a rank's single add of > 4 GiB)
  // is stored raw
  const bool raw = raw_sections_.count(name) > 0 || bytes.size() > (uint64_t{1} << 31);
  if (!raw && !deflate_segment(bytes)) {
    if (error_.ok()) error_ = file_error(ErrorCode::kIo, path().string(), "section " + name, "deflate failed (out of memory?)");
    return;
  }
  const std::string_view stored = raw ? bytes : std::string_view(deflated_);
  index_ += name + "\t" + std::to_string(offset_) + "\t" + std::to_string(stored.size()) + "\t" + std::to_string(rows) +
            (raw ? "\traw\t" : "\tzlib\t") + std::to_string(bytes.size()) + "\n";
  write(stored);
  s.has_segment = true;
}

void PartPackWriter::spill(const std::string& name, Section& s) {
  if (s.buffer.empty()) return;
  segment(name, s, s.buffer, s.buffer_rows);
  s.buffer.clear();
  s.buffer_rows = 0;
}

void PartPackWriter::add(std::string_view section, std::string_view bytes, uint64_t rows) {
  auto it = sections_.find(section);
  if (it == sections_.end()) {
    it = sections_.emplace(std::string(section), Section{}).first;
    order_.emplace_back(section);
  }
  Section& sec = it->second;
  if (sec.buffer.empty() && bytes.size() >= kSegmentBytes) return segment(it->first, sec, bytes, rows);  // no copy
  sec.buffer += bytes;
  sec.buffer_rows += rows;
  if (sec.buffer.size() >= kSegmentBytes) spill(it->first, sec);
}

Status PartPackWriter::commit() {
  for (const auto& name : order_) {
    Section& s = sections_.at(name);
    if (!s.buffer.empty()) spill(name, s);
    else if (!s.has_segment) index_ += name + "\t" + std::to_string(offset_) + "\t0\t0\traw\t0\n";
    std::string().swap(s.buffer);
  }
  const uint64_t index_at = offset_;
  write(index_);
  std::string footer(kFooterMagic);
  put_u64(footer, index_at);
  put_u64(footer, index_.size());
  write(footer);
  if (!error_.ok()) return error_;  // the temporary file is removed with the writer
  return file_.commit();
}

// ---- reader -------------------------------------------------------------------------------------

namespace {
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

Result<PartPackReader> PartPackReader::open(const fs::path& path) {
  PartPackReader r;
  r.path_ = path;
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  struct stat st {};
  if (fstat(f.fd, &st) != 0) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  const auto size = static_cast<uint64_t>(st.st_size);
  const auto damaged = [&path](std::string_view place, std::string_view why) {
    return file_error(ErrorCode::kParse, path.string(), place, "damaged part pack: " + std::string(why));
  };
  if (size < kHeader.size() + kFooterBytes) return damaged("", "shorter than a header and a footer");
  std::string head(kHeader.size(), '\0'), foot(kFooterBytes, '\0');
  ASCPROF_RETURN_IF_ERROR(pread_all(f.fd, path, 0, head.size(), head.data()));
  if (head == kOldHeader)
    return damaged("byte 0", "a part pack of an older layout (uncompressed segments); its rank is redone");
  if (head != kHeader) return damaged("byte 0", "not a part pack (no header)");
  ASCPROF_RETURN_IF_ERROR(pread_all(f.fd, path, size - kFooterBytes, foot.size(), foot.data()));
  if (std::string_view(foot).substr(0, kFooterMagic.size()) != kFooterMagic)
    return damaged("footer", "no footer (an unfinished or truncated file)");
  const uint64_t index_at = get_u64(foot.data() + 8), index_len = get_u64(foot.data() + 16);
  const uint64_t data_end = size - kFooterBytes;
  if (index_at < kHeader.size() || index_at > data_end || index_len != data_end - index_at)
    return damaged("footer", "index out of the file");
  std::string index(static_cast<size_t>(index_len), '\0');
  ASCPROF_RETURN_IF_ERROR(pread_all(f.fd, path, index_at, index.size(), index.data()));
  size_t line_no = 0;
  for (size_t at = 0; at < index.size();) {
    ++line_no;
    const size_t end = index.find('\n', at);
    if (end == std::string::npos) return damaged("index line " + std::to_string(line_no), "no line end");
    const std::string_view line(index.data() + at, end - at);
    at = end + 1;
    // "<section>\t<offset>\t<length>\t<rows>\t<codec>\t<raw length>"
    std::vector<std::string_view> fields;
    for (size_t from = 0;;) {
      const size_t tab = line.find('\t', from);
      fields.push_back(line.substr(from, tab == std::string_view::npos ? tab : tab - from));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    const auto number = [](std::string_view text) {
      const auto v = parse_int64(text);
      return v && *v >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(*v)) : std::nullopt;
    };
    const auto off_v = fields.size() == 6 ? number(fields[1]) : std::nullopt;
    const auto len_v = off_v ? number(fields[2]) : std::nullopt;
    const auto rows_v = len_v ? number(fields[3]) : std::nullopt;
    const auto raw_v = rows_v ? number(fields[5]) : std::nullopt;
    const bool zlib = fields.size() == 6 && fields[4] == "zlib";
    if (fields[0].empty() || !raw_v || (!zlib && fields[4] != "raw"))
      return damaged("index line " + std::to_string(line_no),
                     "not \"<section>\\t<offset>\\t<length>\\t<rows>\\t<raw|zlib>\\t<raw length>\"");
    const uint64_t off = *off_v, len = *len_v, rows = *rows_v, raw_len = *raw_v;
    if (off < kHeader.size() || off > index_at || len > index_at - off)
      return damaged("index line " + std::to_string(line_no), "segment out of the file");
    if (zlib ? (len == 0) != (raw_len == 0) || raw_len / kMaxInflateRatio > len : raw_len != len)
      return damaged("index line " + std::to_string(line_no), "raw length impossible for the stored length");
    auto& segs = r.sections_[std::string(fields[0])];
    if (len > 0) segs.push_back({off, len, rows, raw_len, zlib});
  }
  return r;
}
const PartPackReader::Segments* PartPackReader::segments(std::string_view section) const {
  const auto it = sections_.find(section);
  return it == sections_.end() ? nullptr : &it->second;
}

Status PartPackReader::missing(std::string_view section) const {
  return file_error(ErrorCode::kSchema, path_.string(), "section " + std::string(section), "the part pack has no such section");
}

uint64_t PartPackReader::size(std::string_view section) const {
  uint64_t n = 0;
  if (const auto* s = segments(section))
    for (const auto& seg : *s) n += seg.raw_length;
  return n;
}

Status PartPackReader::for_each_piece(const Segment& seg, size_t chunk, const PieceSink& sink) const {
  chunk = std::max<size_t>(chunk, 1);
  if (!seg.zlib) {
    std::string buf;
    for (uint64_t done = 0; done < seg.length;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, seg.length - done));
      buf.clear();
      ASCPROF_RETURN_IF_ERROR(read_at(seg.offset + done, n, buf));
      if (!sink(std::string_view(buf))) return {};
      done += n;
    }
    return {};
  }
  Fd f{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return file_error(ErrorCode::kIo, path_.string(), "", std::strerror(errno));
  const auto damaged = [&](std::string_view why) {
    return file_error(ErrorCode::kParse, path_.string(), "segment at byte " + std::to_string(seg.offset),
                      "damaged part pack: " + std::string(why));
  };
  if (seg.raw_length <= kWholeInflateBytes) {  // the usual segment (<= kSegmentBytes raw): one call
    thread_local detail::ZlibDecompressor inflater;  // done with before the sink runs
    // not zero-filled (zeroing a buffer per segment was ~5 % of a 1,024-rank root's outputs); not
    // thread_local either: a sink may read another pack
    const auto in_n = static_cast<size_t>(seg.length), out_n = static_cast<size_t>(seg.raw_length);
    const auto in = std::make_unique_for_overwrite<char[]>(in_n);
    const auto out = std::make_unique_for_overwrite<char[]>(out_n);
    ASCPROF_RETURN_IF_ERROR(pread_all(f.fd, path_, seg.offset, in_n, in.get()));
    if (const char* why = inflater.decompress_exact(in.get(), in_n, out.get(), out_n)) return damaged(why);
    for (size_t at = 0; at < out_n; at += chunk)
      if (!sink(std::string_view(out.get() + at, std::min(chunk, out_n - at)))) return {};
    return {};
  }
  struct Inflater {
    z_stream z{};
    bool ready = false;
    ~Inflater() {
      if (ready) inflateEnd(&z);
    }
  } inf;
  if (inflateInit(&inf.z) != Z_OK) return damaged("zlib inflate could not start (out of memory?)");
  inf.ready = true;
  constexpr size_t kIn = 256u << 10;
  std::string in(static_cast<size_t>(std::min<uint64_t>(kIn, seg.length)), '\0');
  std::string out(std::min<size_t>(chunk, 1u << 20), '\0');
  uint64_t read = 0, given = 0;
  int zr = Z_OK;
  while (zr != Z_STREAM_END) {
    if (inf.z.avail_in == 0) {
      if (read == seg.length) return damaged("the compressed segment ends early");
      const size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), seg.length - read));
      ASCPROF_RETURN_IF_ERROR(pread_all(f.fd, path_, seg.offset + read, n, in.data()));
      read += n;
      inf.z.next_in = reinterpret_cast<Bytef*>(in.data());
      inf.z.avail_in = static_cast<uInt>(n);
    }
    inf.z.next_out = reinterpret_cast<Bytef*>(out.data());
    inf.z.avail_out = static_cast<uInt>(out.size());
    zr = inflate(&inf.z, Z_NO_FLUSH);
    if (zr != Z_OK && zr != Z_STREAM_END) return damaged(std::string("does not inflate (zlib: ") + (inf.z.msg ? inf.z.msg : "error") + ")");
    const size_t got = out.size() - inf.z.avail_out;
    if (got > seg.raw_length - given) return damaged("inflates to more than its raw length");
    given += got;
    if (got > 0 && !sink(std::string_view(out.data(), got))) return {};
  }
  if (given != seg.raw_length || inf.z.avail_in != 0 || read != seg.length)
    return damaged("inflates to " + std::to_string(given) + " bytes, not its raw length " + std::to_string(seg.raw_length));
  return {};
}

uint64_t PartPackReader::rows(std::string_view section) const {
  uint64_t n = 0;
  if (const auto* s = segments(section))
    for (const auto& seg : *s) n += seg.rows;
  return n;
}

Status PartPackReader::copy_to(std::string_view section, int out_fd, const fs::path& out_name, uint64_t skip) const {
  // at the descriptor's position, which then follows the bytes (an O_APPEND file: pwrite appends)
  const off_t at = ::lseek(out_fd, 0, SEEK_CUR);
  if (at < 0) return file_error(ErrorCode::kIo, out_name.string(), "", std::string("seek failed: ") + std::strerror(errno));
  const uint64_t n = size(section) - std::min(skip, size(section));
  ASCPROF_RETURN_IF_ERROR(copy_at(section, out_fd, static_cast<uint64_t>(at), out_name, skip));
  if (::lseek(out_fd, at + static_cast<off_t>(n), SEEK_SET) < 0)
    return file_error(ErrorCode::kIo, out_name.string(), "", std::string("seek failed: ") + std::strerror(errno));
  return {};
}

Status PartPackReader::copy_at(std::string_view section, int out_fd, uint64_t out_offset, const fs::path& out_name,
                               uint64_t skip) const {
  const auto* segs = segments(section);
  if (segs == nullptr) return missing(section);
  if (segs->empty()) return {};
  auto write_at = [&](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t w = ::pwrite(out_fd, bytes.data(), bytes.size(), static_cast<off_t>(out_offset));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return file_error(ErrorCode::kIo, out_name.string(), "", std::string("write failed: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<size_t>(w));
      out_offset += static_cast<uint64_t>(w);
    }
    return Status{};
  };
  Fd in{-1};
  std::string buf;
  for (const auto& seg : *segs) {
    if (seg.zlib) {
      Status write_error;
      ASCPROF_RETURN_IF_ERROR(for_each_piece(seg, 1u << 20, [&](std::string_view piece) {
        const size_t drop = static_cast<size_t>(std::min<uint64_t>(skip, piece.size()));
        skip -= drop;
        write_error = write_at(piece.substr(drop));
        return write_error.ok();
      }));
      ASCPROF_RETURN_IF_ERROR(write_error);
      continue;
    }
    if (in.fd < 0) in.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (in.fd < 0) return file_error(ErrorCode::kIo, path_.string(), "", std::strerror(errno));
    const uint64_t skipped = std::min(skip, seg.length);
    skip -= skipped;
    auto off = static_cast<off64_t>(seg.offset + skipped);
    uint64_t left = seg.length - skipped;
    while (left > 0) {
      auto out_off = static_cast<off64_t>(out_offset);
      const ssize_t n = ::copy_file_range(in.fd, &off, out_fd, &out_off, static_cast<size_t>(left), 0);
      if (n > 0) {
        left -= static_cast<uint64_t>(n);
        out_offset += static_cast<uint64_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL || errno == EBADF) {
        // no kernel copy here (another file system, an old kernel, an O_APPEND target): through a
        // buffer (a truly bad descriptor then fails the write)
        const size_t piece = static_cast<size_t>(std::min<uint64_t>(left, 1u << 20));
        buf.resize(piece);
        ASCPROF_RETURN_IF_ERROR(pread_all(in.fd, path_, static_cast<uint64_t>(off), piece, buf.data()));
        ASCPROF_RETURN_IF_ERROR(write_at(buf));
        off += static_cast<off64_t>(piece);
        left -= piece;
        continue;
      }
      return file_error(ErrorCode::kIo, out_name.string(), "", std::string("write failed: ") + std::strerror(errno));
    }
  }
  return {};
}

Status run_section_copies(const std::vector<SectionCopy>& copies, size_t begin, size_t end) {
  end = std::min(end, copies.size());
  std::map<std::string, int> dests;  // a root has a dozen tables: each destination opened once
  auto close_all = [&dests] {
    for (const auto& [name, fd] : dests) ::close(fd);
  };
  std::optional<PartPackReader> pack;
  Status st;
  for (size_t i = begin; i < end && st.ok(); ++i) {
    const SectionCopy& c = copies[i];
    if (!pack || pack->path() != c.pack) {
      auto opened = PartPackReader::open(c.pack);
      if (!opened.ok()) {
        st = opened.status();
        break;
      }
      pack = std::move(opened).value();
    }
    if (pack->size(c.section) != c.length + c.skip) {
      st = file_error(ErrorCode::kParse, c.pack, "section " + c.section,
                      "holds " + std::to_string(pack->size(c.section)) + " bytes, planned " + std::to_string(c.length + c.skip) +
                          " (the pack changed while the root was written)");
      break;
    }
    auto it = dests.find(c.dest);
    if (it == dests.end()) {
      const int fd = ::open(c.dest.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) {
        st = file_error(ErrorCode::kIo, c.dest, "", std::strerror(errno));
        break;
      }
      it = dests.emplace(c.dest, fd).first;
    }
    st = pack->copy_at(c.section, it->second, c.offset, c.dest, c.skip);
  }
  close_all();
  return st;
}

Status run_section_copies_on_threads(const std::vector<SectionCopy>& copies, unsigned threads) {
  const std::vector<size_t> bounds = split_section_copies(copies, std::max(threads, 1u));
  std::vector<Status> results(bounds.size() - 1);
  std::vector<std::thread> helpers;
  for (size_t t = 1; t + 1 < bounds.size(); ++t)
    helpers.emplace_back([&, t] { results[t] = run_section_copies(copies, bounds[t], bounds[t + 1]); });
  results[0] = run_section_copies(copies, bounds[0], bounds[1]);
  for (auto& h : helpers) h.join();
  for (Status& st : results)
    if (!st.ok()) return std::move(st);
  return {};
}

std::vector<size_t> split_section_copies(const std::vector<SectionCopy>& copies, size_t parts) {
  parts = std::max<size_t>(parts, 1);
  uint64_t total = 0;
  for (const auto& c : copies) total += c.length;
  std::vector<size_t> bounds = {0};
  uint64_t done = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    // a boundary only where a pack's run ends, once this part holds its share
    const bool run_ends = i + 1 == copies.size() || copies[i + 1].pack != copies[i].pack;
    done += copies[i].length;
    if (run_ends && bounds.size() < parts && done * parts >= total * bounds.size()) bounds.push_back(i + 1);
  }
  while (bounds.size() < parts + 1) bounds.push_back(copies.size());
  bounds.back() = copies.size();
  return bounds;
}

Status PartPackReader::read_at(uint64_t offset, size_t n, std::string& out) const {
  const size_t at = out.size();
  out.resize(at + n);
  if (n == 0) return {};
  Fd f{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return file_error(ErrorCode::kIo, path_.string(), "", std::strerror(errno));
  return pread_all(f.fd, path_, offset, n, out.data() + at);
}

Result<std::string> PartPackReader::read(std::string_view section) const {
  const auto* segs = segments(section);
  if (segs == nullptr) return missing(section);
  std::string out;
  out.reserve(static_cast<size_t>(size(section)));
  for (const auto& seg : *segs) {
    if (!seg.zlib) {
      ASCPROF_RETURN_IF_ERROR(read_at(seg.offset, static_cast<size_t>(seg.length), out));
      continue;
    }
    ASCPROF_RETURN_IF_ERROR(for_each_piece(seg, 1u << 20, [&out](std::string_view piece) {
      out += piece;
      return true;
    }));
  }
  return out;
}

Status PartPackReader::read_section_at(std::string_view section, uint64_t pos, size_t n, std::string& out) const {
  out.clear();
  const auto* segs = segments(section);
  if (segs == nullptr) return missing(section);
  for (const auto& seg : *segs) {
    if (out.size() >= n) break;
    if (pos >= seg.raw_length) {
      pos -= seg.raw_length;
      continue;
    }
    if (seg.zlib) {  // the rest of the segment, whatever `n` (inflating it again per call would be quadratic)
      uint64_t at = 0;
      ASCPROF_RETURN_IF_ERROR(for_each_piece(seg, 1u << 20, [&](std::string_view piece) {
        if (at + piece.size() > pos) out.append(piece.substr(at >= pos ? 0 : static_cast<size_t>(pos - at)));
        at += piece.size();
        return true;
      }));
    } else {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(seg.length - pos, n - out.size()));
      ASCPROF_RETURN_IF_ERROR(read_at(seg.offset + pos, take, out));
    }
    pos = 0;
  }
  return {};
}

// ---- line cursor --------------------------------------------------------------------------------

PartLineCursor::PartLineCursor(const PartPackReader& pack, std::string section)
    : pack_(&pack), section_(std::move(section)), size_(pack.size(section_)) {
  if (!pack.has(section_)) st_ = pack.missing(section_);
}

bool PartLineCursor::next(std::string& line) {
  constexpr size_t kBuffer = 4u << 10;  // one per rank in a merge: 10,000 ranks hold 40 MB
  line.clear();
  while (st_.ok()) {
    const size_t nl = buf_.find('\n', at_);
    if (nl != std::string::npos) {
      line.append(buf_, at_, nl - at_);
      at_ = nl + 1;
      return true;
    }
    line.append(buf_, at_, std::string::npos);
    at_ = 0;
    if (pos_ >= size_) {
      buf_.clear();
      return !line.empty();  // a last line without '\n'
    }
    st_ = pack_->read_section_at(section_, pos_, kBuffer, buf_);
    pos_ += buf_.size();
    if (buf_.empty()) break;
  }
  return false;
}

}  // namespace ascprof::store
