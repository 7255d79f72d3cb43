#include "ascprof/importers/csv_reader.hpp"

#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
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
    : data_(data.data()), size_(data.size()), name_(display_name), stats_(&stats), opt_(options) {
  if (size_ >= 3 && static_cast<unsigned char>(data_[0]) == 0xEF && static_cast<unsigned char>(data_[1]) == 0xBB &&
      static_cast<unsigned char>(data_[2]) == 0xBF) {
    pos_ = 3;
    note(Stat::csv_bom_skipped, "UTF-8 byte order mark skipped", 1);
  }
}

void CsvCursor::note(Stat s, std::string_view reason, uint64_t line) { note_line(*stats_, s, name_, line, reason); }

void CsvCursor::load_block(size_t base) {
  if (base + kBlock <= size_) {
    mask_ = special_mask(data_ + base, opt_.delimiter);
  } else {
    // Last partial block: pad with a byte that is never special so bits past the end stay clear.
    char tail[kBlock];
    std::memset(tail, 'a', kBlock);
    std::memcpy(tail, data_ + base, size_ - base);
    mask_ = special_mask(tail, opt_.delimiter);
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

bool CsvCursor::next_row(std::vector<std::string_view>& fields) {
  fields.clear();
  if (done_) return false;
  if (file_ != nullptr && pos_ - last_release_ >= kReleaseStride) {
    file_->release_before(pos_);
    last_release_ = pos_;
  }

  // Blank lines between rows are skipped (Python's csv module and pandas do the same).
  for (;;) {
    if (pos_ >= size_) {
      done_ = true;
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
  const char delim = opt_.delimiter;
  bool nul_seen = false;
  size_t pos = pos_;

  for (;;) {
    if (pos < size_ && data_[pos] == '"') {
      const size_t open = pos;
      size_t p = pos + 1;
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
          if (qi - open > opt_.max_field_bytes)
            return fail_limit(fields, "quoted field", qi - open, opt_.max_field_bytes);
          qi = next_special(qi + 1);
        }
        if (qi >= size_) {
          note(Stat::csv_unterminated_quote, "file ended inside a quoted field; partial row dropped", row_line_);
          fields.clear();
          pos_ = size_;
          done_ = true;
          return false;
        }
        if (qi - open > opt_.max_field_bytes)
          return fail_limit(fields, "quoted field", qi - open, opt_.max_field_bytes);
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
          if (s - open > opt_.max_field_bytes) return fail_limit(fields, "field", s - open, opt_.max_field_bytes);
          scratch_.append(data_ + after, s - after);
          after = s;
        } else if (copied) {
          scratch_.append(data_ + seg, qi - seg);
        }
        if (copied) {
          fixups_.push_back({static_cast<uint32_t>(fields.size()), static_cast<uint32_t>(scratch_off),
                             static_cast<uint32_t>(scratch_.size() - scratch_off)});
          fields.emplace_back();
        } else {
          fields.emplace_back(data_ + open + 1, qi - open - 1);
        }
        pos = after;
        break;
      }
    } else {
      const size_t start = pos;
      size_t s = pos;
      for (;;) {
        s = next_special(s);
        if (s >= size_) break;
        const char ch = data_[s];
        if (ch == delim || ch == '\n' || ch == '\r') break;
        if (ch == '\0') nul_seen = true;
        ++s;  // a quote inside an unquoted field, TAB or another control byte: literal
      }
      if (s - start > opt_.max_field_bytes) return fail_limit(fields, "field", s - start, opt_.max_field_bytes);
      fields.emplace_back(data_ + start, s - start);
      pos = s;
    }

    if (pos - row_start_ > opt_.max_row_bytes) return fail_limit(fields, "row", pos - row_start_, opt_.max_row_bytes);
    if (pos >= size_) {
      note(Stat::csv_truncated_last_row, "file ends without a final newline; last row kept", row_line_);
      break;
    }
    const char ch = data_[pos];
    ++pos;
    if (ch == delim) continue;
    // ch is LF or CR: end of row.
    if (ch == '\r' && pos < size_ && data_[pos] == '\n') ++pos;
    ++line_;
    break;
  }

  pos_ = pos;
  for (const Fixup& f : fixups_) fields[f.field] = std::string_view(scratch_.data() + f.offset, f.length);
  if (nul_seen) note(Stat::csv_embedded_nul, "field contains a NUL byte", row_line_);

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
