#pragma once
/// Streaming RFC-4180 CSV tokenizer over an in-memory view (usually a MappedFile).
///
/// The cursor hands out one row at a time as string_views: views point straight into the input for
/// plain and simply-quoted fields and for torch_npu's tripled-quote shape cells ("""X""" -> "X"),
/// and into a reusable scratch buffer when other unescaping is needed (doubled quotes, text after a
/// closing quote). Views stay valid until the next call to next_row().
/// Nothing is allocated per field or per row once the caller's vector and the scratch buffer have
/// grown to the widest row.
///
/// Accepted: CRLF, LF and lone CR line ends; an optional UTF-8 BOM; quoted fields with delimiters,
/// doubled quotes and newlines; blank lines (skipped); a missing final newline. Damaged rows are
/// counted in Stats (csv_* counters, samples "file:line N: reason") and reading continues. The only
/// hard error is a field or row above the configured size bound (kLimit naming file and line).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof {
class MappedFile;
}

namespace ascprof::importers {

/// Tokenizer settings.
struct CsvOptions {
  /// Largest allowed field value in bytes; a larger one stops reading with a kLimit error.
  size_t max_field_bytes = size_t{16} << 20;
  /// Largest allowed raw row (bytes on disk, quotes and newlines included); kLimit beyond it.
  size_t max_row_bytes = size_t{16} << 20;
  /// Field separator.
  char delimiter = ',';
  /// When true, the first row returned (the header) fixes the row width: later rows with fewer
  /// fields are padded with empty views (csv_row_too_few_fields), longer rows are cut
  /// (csv_row_too_many_fields). When false rows are returned as they are (still counted).
  bool fix_width = true;
};

/// Cursor over CSV text. Not copyable; the input must outlive the cursor.
class CsvCursor {
 public:
  /// `data` is the whole file content; `display_name` is used in error messages and stat samples.
  /// A leading UTF-8 BOM is skipped and counted (csv_bom_skipped).
  CsvCursor(std::string_view data, std::string_view display_name, Stats& stats, const CsvOptions& options = {});
  CsvCursor(const CsvCursor&) = delete;
  CsvCursor& operator=(const CsvCursor&) = delete;

  /// Lets the cursor tell the kernel it is done with pages behind the current row, keeping RSS
  /// flat on huge files. `file` must be the mapping `data` points into and outlive the cursor.
  void attach(MappedFile* file) { file_ = file; }

  /// Reads the next non-blank row into `fields` (cleared first). Returns false, with `fields` empty,
  /// at end of input or on a hard error; then status() tells which. A row cut off by an unterminated quote at the end
  /// of the file is dropped (csv_unterminated_quote) and false is returned with an ok status.
  [[nodiscard]] bool next_row(std::vector<std::string_view>& fields);

  /// Ok unless reading stopped on a hard error (kLimit).
  const Status& status() const { return status_; }
  /// 1-based physical line on which the row last returned starts (header = 1 when no blank lines precede it).
  uint64_t line() const { return row_line_; }
  /// Byte offset in `data` where the row last returned starts.
  size_t row_offset() const { return row_start_; }
  /// Bytes consumed so far (position after the row last returned).
  size_t position() const { return pos_; }
  /// Total input size in bytes.
  size_t size() const { return size_; }
  /// Number of rows returned so far (header included).
  uint64_t rows_returned() const { return rows_; }
  /// Width fixed by the first row (0 before it, or when fix_width is off).
  size_t expected_fields() const { return expected_; }
  const std::string& display_name() const { return name_; }

 private:
  struct Fixup {
    uint32_t field;
    uint32_t offset;
    uint32_t length;
  };
  size_t next_special(size_t pos);
  static constexpr size_t kStop = static_cast<size_t>(-1);
  // Reads the quoted field opening at `open` into quoted_value_ (NUL bytes set quoted_nul_) and
  // returns the position after it, or kStop when reading stopped (hard error or unterminated quote;
  // `fields` cleared, status and counters set). Out of line and by value so the plain-field loop
  // keeps its state in registers.
  size_t read_quoted(size_t open, uint32_t field_index, std::vector<std::string_view>& fields);
  static std::string_view* grow(std::vector<std::string_view>& fields);
  void load_block(size_t base);
  bool fail_limit(std::vector<std::string_view>& fields, std::string_view what, size_t bytes, size_t limit);
  void note(Stat s, std::string_view reason, uint64_t line);

  const char* data_;
  size_t size_;
  std::string name_;
  Stats* stats_;
  CsvOptions opt_;
  MappedFile* file_ = nullptr;
  bool avx2_ = false;  // special-byte masks via AVX2 (checked once per cursor)
  size_t pos_ = 0;
  size_t row_start_ = 0;
  size_t last_release_ = 0;
  uint64_t line_ = 1;      // physical line at pos_
  uint64_t row_line_ = 0;  // line of the row last returned
  uint64_t rows_ = 0;
  size_t expected_ = 0;
  bool done_ = false;
  Status status_;
  std::string scratch_;
  std::vector<Fixup> fixups_;
  std::string_view quoted_value_;
  bool quoted_nul_ = false;
  // Bitmask of "special" bytes (delimiter, quote, CR, LF, NUL) of the 64-byte block at mask_base_.
  size_t mask_base_ = static_cast<size_t>(-1);
  uint64_t mask_ = 0;
};

/// Header-name lookup for CSV files: names are trimmed and compared ASCII-case-insensitively, so
/// columns are always found by name, never by position.
class CsvHeader {
 public:
  CsvHeader() = default;
  /// Builds from the header row's fields.
  explicit CsvHeader(const std::vector<std::string_view>& fields);
  /// Index of the first column named `name`, or -1.
  int find(std::string_view name) const;
  /// Index of the column matching the first candidate present (candidates tried in order), or -1.
  int find_first(std::initializer_list<std::string_view> candidates) const;
  /// Indices of every column matching any candidate, in candidate order (for per-row fallback).
  std::vector<int> find_all(std::initializer_list<std::string_view> candidates) const;
  size_t size() const { return names_.size(); }
  /// Column name as written, trimmed.
  const std::string& name(size_t i) const { return names_[i]; }
  const std::vector<std::string>& names() const { return names_; }
  /// "a, b, c": the header for error messages.
  std::string joined() const;

 private:
  std::vector<std::string> names_;
  std::vector<std::string> keys_;  // lower-cased names_
};

/// ASCII lower-case copy, used for header keys.
std::string ascii_lower(std::string_view s);

/// True while `s` still keeps samples: build detailed messages only then.
inline bool wants_sample(const Stats& stats, Stat s) { return stats.samples(s).size() < Stats::kMaxSamples; }

/// Counts `s` and keeps a sample "file:line N: reason" while samples are still being kept, without
/// building the message once the sample list is full (cheap inside hot loops).
void note_line(Stats& stats, Stat s, std::string_view file, uint64_t line, std::string_view reason);

}  // namespace ascprof::importers
