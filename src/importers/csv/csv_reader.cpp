#include "ascprof/importers/csv_reader.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ASCPROF_CSV_AVX2 1
#endif

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"

namespace ascprof::importers {

namespace {

constexpr size_t kBlock = 64;
// Release consumed pages of an attached mapping every this many bytes (MappedFile batches further).
constexpr size_t kReleaseStride = size_t{8} << 20;

// Bit i set when p[i] may end or start something: the delimiter, a quote, or a byte <= '\r'
// (LF, CR, NUL; TAB and other control bytes are false positives the caller skips). Reading
// 64 bytes at once and walking set bits keeps the common unquoted field at a few instructions.
inline uint64_t special_mask(const char* p, char delim) {
#if defined(__SSE2__)
  const __m128i d = _mm_set1_epi8(delim);
  const __m128i q = _mm_set1_epi8('"');
  const __m128i ctl = _mm_set1_epi8('\r');
  uint64_t m = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v);  // unsigned v <= '\r'
    const __m128i t = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, d), _mm_cmpeq_epi8(v, q)), low);
    m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(t))) << (16 * k);
  }
  return m;
#else
  uint64_t m = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == static_cast<unsigned char>(delim) || c == '"' || c <= '\r') m |= uint64_t{1} << i;
  }
  return m;
#endif
}

struct PlainRun {
  size_t pos;
  size_t count;
};

// Plain fields from `pos` that end at a delimiter before `end` (the end of the block `base` whose
// special-byte mask is `mask`, or of the input), written to out[0..room). Out of line so its few
// live values stay in registers. Stops before a field it cannot take whole: one that starts with a
// quote, ends at a row end or past the block, or exceeds a limit (`row_limit`: last allowed offset).
[[gnu::noinline]] PlainRun scan_plain(const char* data, size_t pos, size_t end, size_t base, uint64_t mask,
                                      char delim, size_t max_field, size_t row_limit, std::string_view* out,
                                      size_t room) {
  size_t n = 0;
  while (n != room && pos < end) {
    const uint64_t m = mask >> (pos - base);
    if (m == 0) break;
    const size_t s = pos + static_cast<size_t>(__builtin_ctzll(m));
    if (data[s] != delim || s - pos > max_field || s > row_limit) break;
    out[n++] = std::string_view(data + pos, s - pos);
    pos = s + 1;
  }
  return {pos, n};
}

#if defined(ASCPROF_CSV_AVX2)
// Same mask in two 32-byte steps on CPUs that have AVX2 (chosen at run time: the build targets
// baseline x86-64).
__attribute__((target("avx2"))) uint64_t special_mask_avx2(const char* p, char delim) {
  const __m256i d = _mm256_set1_epi8(delim);
  const __m256i q = _mm256_set1_epi8('"');
  const __m256i ctl = _mm256_set1_epi8('\r');
  uint64_t m = 0;
  for (int k = 0; k < 2; ++k) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * k));
    const __m256i low = _mm256_cmpeq_epi8(_mm256_min_epu8(v, ctl), v);
    const __m256i t = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, d), _mm256_cmpeq_epi8(v, q)), low);
    m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(t))) << (32 * k);
  }
  return m;
}

bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
#else
bool cpu_has_avx2() { return false; }
#endif

inline uint64_t block_mask(const char* p, char delim, bool avx2) {
#if defined(ASCPROF_CSV_AVX2)
  if (avx2) return special_mask_avx2(p, delim);
#endif
  (void)avx2;
  return special_mask(p, delim);
}

}  // namespace

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

void note_line(Stats& stats, Stat s, std::string_view file, uint64_t line, std::string_view reason) {
  if (!wants_sample(stats, s)) {
    stats.inc(s);
    return;
  }
  std::string msg;
  msg.reserve(file.size() + reason.size() + 32);
  msg.append(file);
  msg.append(":line ");
  msg.append(std::to_string(line));
  msg.append(": ");
  msg.append(reason);
  stats.note(s, std::move(msg));
}

CsvCursor::CsvCursor(std::string_view data, std::string_view display_name, Stats& stats, const CsvOptions& options)
    : data_(data.data()),
      size_(data.size()),
      name_(display_name),
      stats_(&stats),
      opt_(options),
      avx2_(cpu_has_avx2()) {
  if (size_ >= 3 && static_cast<unsigned char>(data_[0]) == 0xEF && static_cast<unsigned char>(data_[1]) == 0xBB &&
      static_cast<unsigned char>(data_[2]) == 0xBF) {
    pos_ = 3;
    note(Stat::csv_bom_skipped, "UTF-8 byte order mark skipped", 1);
  }
}

void CsvCursor::note(Stat s, std::string_view reason, uint64_t line) { note_line(*stats_, s, name_, line, reason); }

void CsvCursor::load_block(size_t base) {
  if (base + kBlock <= size_) {
    // Mapped file pages are scattered in physical memory, so the hardware prefetcher restarts at
    // every 4 KiB page; asking a page ahead keeps the scan from waiting on each new one.
    __builtin_prefetch(data_ + base + 4096);
    mask_ = block_mask(data_ + base, opt_.delimiter, avx2_);
  } else {
    // Last partial block: pad with a byte that is never special so bits past the end stay clear.
    char tail[kBlock];
    std::memset(tail, 'a', kBlock);
    std::memcpy(tail, data_ + base, size_ - base);
    mask_ = block_mask(tail, opt_.delimiter, avx2_);
  }
  mask_base_ = base;
}

size_t CsvCursor::next_special(size_t pos) {
  while (pos < size_) {
    const size_t base = pos & ~(kBlock - 1);
    if (base != mask_base_) load_block(base);
    const uint64_t m = mask_ >> (pos - base);
    if (m != 0) return pos + static_cast<size_t>(__builtin_ctzll(m));
    pos = base + kBlock;
  }
  return size_;
}

bool CsvCursor::fail_limit(std::vector<std::string_view>& fields, std::string_view what, size_t bytes, size_t limit) {
  fields.clear();
  status_ = file_error(ErrorCode::kLimit, name_, "line " + std::to_string(row_line_),
                       std::string(what) + " of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                           std::to_string(limit) + " bytes");
  done_ = true;
  return false;
}

size_t CsvCursor::read_quoted(size_t open, uint32_t field_index, std::vector<std::string_view>& fields) {
  const char delim = opt_.delimiter;
  bool& nul_seen = quoted_nul_;
  std::string_view& value = quoted_value_;
  // torch_npu writes shape cells as """X""" (X without quotes or newlines), which unescapes to
  // "X": exactly the input bytes from the third quote to the first closing one, so the value can
  // point into the input with no copy. Anything else (or a limit hit) takes the general path.
  if (open + 3 < size_ && data_[open + 1] == '"' && data_[open + 2] == '"') {
    size_t q = next_special(open + 3);
    while (q < size_ && data_[q] != '"' && data_[q] != '\n' && data_[q] != '\0' && q - open <= opt_.max_field_bytes)
      q = next_special(q + 1);
    if (q + 2 < size_ && data_[q] == '"' && data_[q + 1] == '"' && data_[q + 2] == '"' &&
        q + 2 - open <= opt_.max_field_bytes &&
        (q + 3 == size_ || data_[q + 3] == delim || data_[q + 3] == '\n' || data_[q + 3] == '\r')) {
      value = std::string_view(data_ + open + 2, q + 1 - (open + 2));
      return q + 3;
    }
  }
  size_t p = open + 1;
  size_t seg = p;
  bool copied = false;
  size_t scratch_off = 0;
  for (;;) {
    // Quoted fields are short (shapes): walking the special-byte mask beats memchr + a newline scan.
    size_t qi = next_special(p);
    while (qi < size_ && data_[qi] != '"') {
      if (data_[qi] == '\n')
        ++line_;
      else if (data_[qi] == '\0')
        nul_seen = true;
      if (qi - open > opt_.max_field_bytes) {
        fail_limit(fields, "quoted field", qi - open, opt_.max_field_bytes);
        return kStop;
      }
      qi = next_special(qi + 1);
    }
    if (qi >= size_) {
      note(Stat::csv_unterminated_quote, "file ended inside a quoted field; partial row dropped", row_line_);
      fields.clear();
      pos_ = size_;
      done_ = true;
      return kStop;
    }
    if (qi - open > opt_.max_field_bytes) {
      fail_limit(fields, "quoted field", qi - open, opt_.max_field_bytes);
      return kStop;
    }
    if (qi + 1 < size_ && data_[qi + 1] == '"') {  // doubled quote = one literal quote
      if (!copied) {
        scratch_off = scratch_.size();
        copied = true;
      }
      scratch_.append(data_ + seg, qi + 1 - seg);
      p = qi + 2;
      seg = p;
      continue;
    }
    size_t after = qi + 1;
    if (after < size_ && data_[after] != delim && data_[after] != '\n' && data_[after] != '\r') {
      // Text after the closing quote is kept as part of the value (Python csv's lenient rule).
      if (!copied) {
        scratch_off = scratch_.size();
        copied = true;
      }
      scratch_.append(data_ + seg, qi - seg);
      size_t s = after;
      for (;;) {
        s = next_special(s);
        if (s >= size_) break;
        const char ch = data_[s];
        if (ch == delim || ch == '\n' || ch == '\r') break;
        if (ch == '\0') nul_seen = true;
        ++s;
      }
      if (s - open > opt_.max_field_bytes) {
        fail_limit(fields, "field", s - open, opt_.max_field_bytes);
        return kStop;
      }
      scratch_.append(data_ + after, s - after);
      after = s;
    } else if (copied) {
      scratch_.append(data_ + seg, qi - seg);
    }
    if (copied) {
      fixups_.push_back(
          {field_index, static_cast<uint32_t>(scratch_off), static_cast<uint32_t>(scratch_.size() - scratch_off)});
      value = std::string_view();
    } else {
      value = std::string_view(data_ + open + 1, qi - open - 1);
    }
    return after;
  }
}

std::string_view* CsvCursor::grow(std::vector<std::string_view>& fields) {
  fields.resize(fields.size() * 2);
  return fields.data();
}

bool CsvCursor::next_row(std::vector<std::string_view>& fields) {
  if (done_) {
    fields.clear();
    return false;
  }
  if (file_ != nullptr && pos_ - last_release_ >= kReleaseStride) {
    file_->release_before(pos_);
    last_release_ = pos_;
  }

  // Blank lines between rows are skipped (Python's csv module and pandas do the same).
  for (;;) {
    if (pos_ >= size_) {
      done_ = true;
      fields.clear();
      return false;
    }
    const char c = data_[pos_];
    if (c == '\n') {
      note(Stat::csv_blank_line, "blank line skipped", line_);
      ++pos_;
      ++line_;
      continue;
    }
    if (c == '\r') {
      note(Stat::csv_blank_line, "blank line skipped", line_);
      ++pos_;
      if (pos_ < size_ && data_[pos_] == '\n') ++pos_;
      ++line_;
      continue;
    }
    break;
  }

  row_start_ = pos_;
  row_line_ = line_;
  scratch_.clear();
  fixups_.clear();
  quoted_nul_ = false;

  // The plain-field loop keeps everything in locals: stores into `fields` (pointer- and
  // size_t-typed) may alias the members, which would force reloading each of them per field.
  // Quoted fields (a few per row) go through read_quoted, out of line, so this loop stays small.
  const char* const data = data_;
  const size_t size = size_;
  const char delim = opt_.delimiter;
  const size_t max_field = opt_.max_field_bytes;
  const size_t max_row = opt_.max_row_bytes;
  const size_t row_start = pos_;
  bool nul_seen = false;
  size_t pos = pos_;
  size_t mb = mask_base_;
  uint64_t mk = mask_;

  // Fields are written by index, `fields` kept at least as long as the previous row so that the
  // resize below is a no-op on all rows but the first; it is cut to the real count at the end.
  const size_t want = std::max<size_t>(expected_, 16);
  if (fields.size() < want) fields.resize(want);
  std::string_view* out = fields.data();
  size_t cap = fields.size();
  size_t nf = 0;

  for (;;) {
    // Fast path: plain fields that end at a delimiter inside the loaded block, a few instructions
    // each. Anything else (a quote, a row end, a block edge, a limit, a full `fields`) leaves it for
    // the general code below, which then handles that field from the same position.
    if (pos < size && (pos & ~(kBlock - 1)) == mb) {
      const PlainRun run = scan_plain(data, pos, std::min(size, mb + kBlock), mb, mk, delim, max_field,
                                      max_row > ~size_t{0} - row_start ? ~size_t{0} : row_start + max_row,
                                      out + nf, cap - nf);
      pos = run.pos;
      nf += run.count;
    }
    if (nf == cap) {
      out = grow(fields);
      cap = fields.size();
    }
    if (pos < size && data[pos] == '"') {
      mask_base_ = mb;
      mask_ = mk;
      pos = read_quoted(pos, static_cast<uint32_t>(nf), fields);
      if (pos == kStop) return false;
      mb = mask_base_;
      mk = mask_;
      out[nf++] = quoted_value_;
    } else {
      const size_t start = pos;
      size_t s = pos;
      for (;;) {
        const size_t base = s & ~(kBlock - 1);
        if (base != mb) {
          if (base >= size) {
            s = size;
            break;
          }
          load_block(base);
          mb = base;
          mk = mask_;
        }
        const uint64_t m = mk >> (s - base);
        if (m == 0) {
          s = base + kBlock;
          continue;
        }
        // Bits past the end of the input are never set, so s < size here.
        s += static_cast<size_t>(__builtin_ctzll(m));
        const char ch = data[s];
        if (ch == delim || ch == '\n' || ch == '\r') break;
        if (ch == '\0') nul_seen = true;
        ++s;  // a quote inside an unquoted field, TAB or another control byte: literal
      }
      if (s - start > max_field) {
        mask_base_ = mb;
        mask_ = mk;
        return fail_limit(fields, "field", s - start, max_field);
      }
      out[nf++] = std::string_view(data + start, s - start);
      pos = s;
    }

    if (pos - row_start > max_row) {
      mask_base_ = mb;
      mask_ = mk;
      return fail_limit(fields, "row", pos - row_start, max_row);
    }
    if (pos >= size) {
      note(Stat::csv_truncated_last_row, "file ends without a final newline; last row kept", row_line_);
      break;
    }
    const char ch = data[pos];
    ++pos;
    if (ch == delim) continue;
    // ch is LF or CR: end of row.
    if (ch == '\r' && pos < size && data[pos] == '\n') ++pos;
    ++line_;
    break;
  }

  mask_base_ = mb;
  mask_ = mk;
  pos_ = pos;
  fields.resize(nf);
  for (const Fixup& f : fixups_) fields[f.field] = std::string_view(scratch_.data() + f.offset, f.length);
  if (nul_seen || quoted_nul_) note(Stat::csv_embedded_nul, "field contains a NUL byte", row_line_);

  if (opt_.fix_width) {
    if (expected_ == 0) {
      expected_ = fields.size();
    } else if (fields.size() != expected_) {
      const bool few = fields.size() < expected_;
      const Stat st = few ? Stat::csv_row_too_few_fields : Stat::csv_row_too_many_fields;
      if (wants_sample(*stats_, st)) {
        note(st,
             std::to_string(fields.size()) + " fields, header has " + std::to_string(expected_) +
                 (few ? "; missing fields read as empty" : "; extra fields ignored"),
             row_line_);
      } else {
        stats_->inc(st);
      }
      fields.resize(expected_);
    }
  } else if (expected_ == 0) {
    expected_ = fields.size();
  } else if (fields.size() != expected_) {
    stats_->inc(fields.size() < expected_ ? Stat::csv_row_too_few_fields : Stat::csv_row_too_many_fields);
  }
  ++rows_;
  return true;
}

CsvHeader::CsvHeader(const std::vector<std::string_view>& fields) {
  names_.reserve(fields.size());
  keys_.reserve(fields.size());
  for (std::string_view f : fields) {
    names_.emplace_back(trim(f));
    keys_.push_back(ascii_lower(names_.back()));
  }
}

int CsvHeader::find(std::string_view name) const {
  const std::string key = ascii_lower(trim(name));
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key) return static_cast<int>(i);
  return -1;
}

int CsvHeader::find_first(std::initializer_list<std::string_view> candidates) const {
  for (std::string_view c : candidates) {
    const int i = find(c);
    if (i >= 0) return i;
  }
  return -1;
}

std::vector<int> CsvHeader::find_all(std::initializer_list<std::string_view> candidates) const {
  std::vector<int> out;
  for (std::string_view c : candidates) {
    const std::string key = ascii_lower(trim(c));
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != key) continue;
      bool seen = false;
      for (int j : out) seen |= j == static_cast<int>(i);
      if (!seen) out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

std::string CsvHeader::joined() const {
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i) {
    if (i) out += ", ";
    out += names_[i];
  }
  return out;
}

}  // namespace ascprof::importers
