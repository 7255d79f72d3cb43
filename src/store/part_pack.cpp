// A rank's row fragments in one file (see part_pack.hpp for the layout and why).
#include "ascprof/store/part_pack.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::store {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kHeader = "ascprof part pack 2\n";
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
  index_ += name + "\t" + std::to_string(offset_) + "\t" + std::to_string(bytes.size()) + "\t" + std::to_string(rows) + "\n";
  write(bytes);
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
    else if (!s.has_segment) index_ += name + "\t" + std::to_string(offset_) + "\t0\t0\n";
    std::string().swap(s.buffer);
  }
  const uint64_t index_at = offset_;
  write(index_);
  std::string footer(kFooterMagic);
  put_u64(footer, index_at);
  put_u64(footer, index_.size());
  write(footer);
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
    // "<section>\t<offset>\t<length>\t<rows>": three non-negative integers after the name
    const size_t t1 = line.find('\t'), t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    const size_t t3 = t2 == std::string_view::npos ? t2 : line.find('\t', t2 + 1);
    const auto field = [&](size_t from, size_t to) {
      const auto v = parse_int64(line.substr(from + 1, to == std::string_view::npos ? to : to - from - 1));
      return v && *v >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(*v)) : std::nullopt;
    };
    const auto off_v = t3 == std::string_view::npos ? std::nullopt : field(t1, t2);
    const auto len_v = off_v ? field(t2, t3) : std::nullopt;
    const auto rows_v = len_v ? field(t3, std::string_view::npos) : std::nullopt;
    if (t1 == 0 || !rows_v)
      return damaged("index line " + std::to_string(line_no), "not \"<section>\\t<offset>\\t<length>\\t<rows>\"");
    const uint64_t off = *off_v, len = *len_v, rows = *rows_v;
    if (off < kHeader.size() || off > index_at || len > index_at - off)
      return damaged("index line " + std::to_string(line_no), "segment out of the file");
    auto& segs = r.sections_[std::string(line.substr(0, t1))];
    if (len > 0) segs.push_back({off, len, rows});
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
    for (const auto& seg : *s) n += seg.length;
  return n;
}

uint64_t PartPackReader::rows(std::string_view section) const {
  uint64_t n = 0;
  if (const auto* s = segments(section))
    for (const auto& seg : *s) n += seg.rows;
  return n;
}

Status PartPackReader::copy_to(std::string_view section, int out_fd, const fs::path& out_name, uint64_t skip) const {
  const auto* segs = segments(section);
  if (segs == nullptr) return missing(section);
  if (segs->empty()) return {};
  Fd in{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return file_error(ErrorCode::kIo, path_.string(), "", std::strerror(errno));
  std::string buf;
  for (const auto& seg : *segs) {
    const uint64_t skipped = std::min(skip, seg.length);
    skip -= skipped;
    auto off = static_cast<off64_t>(seg.offset + skipped);
    uint64_t left = seg.length - skipped;
    while (left > 0) {
      const ssize_t n = ::copy_file_range(in.fd, &off, out_fd, nullptr, static_cast<size_t>(left), 0);
      if (n > 0) {
        left -= static_cast<uint64_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL || errno == EBADF) {
        // no kernel copy here (another file system, an old kernel, an O_APPEND target): through a
        // buffer (a truly bad descriptor then fails the write below)
        const size_t piece = static_cast<size_t>(std::min<uint64_t>(left, 1u << 20));
        buf.resize(piece);
        ASCPROF_RETURN_IF_ERROR(pread_all(in.fd, path_, static_cast<uint64_t>(off), piece, buf.data()));
        for (size_t done = 0; done < piece;) {
          const ssize_t w = ::write(out_fd, buf.data() + done, piece - done);
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) return file_error(ErrorCode::kIo, out_name.string(), "", std::string("write failed: ") + std::strerror(errno));
          done += static_cast<size_t>(w);
        }
        off += static_cast<off64_t>(piece);
        left -= piece;
        continue;
      }
      return file_error(ErrorCode::kIo, out_name.string(), "", std::string("write failed: ") + std::strerror(errno));
    }
  }
  return {};
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
  for (const auto& [off, len, rows] : *segs) ASCPROF_RETURN_IF_ERROR(read_at(off, static_cast<size_t>(len), out));
  return out;
}

Status PartPackReader::read_section_at(std::string_view section, uint64_t pos, size_t n, std::string& out) const {
  out.clear();
  const auto* segs = segments(section);
  if (segs == nullptr) return missing(section);
  for (const auto& [off, len, rows] : *segs) {
    if (out.size() >= n) break;
    if (pos >= len) {
      pos -= len;
      continue;
    }
    const size_t take = static_cast<size_t>(std::min<uint64_t>(len - pos, n - out.size()));
    ASCPROF_RETURN_IF_ERROR(read_at(off + pos, take, out));
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
