// libFuzzer target: the CSV tokenizer (CsvCursor, CsvHeader) and the kernel_details importer on top.
//
// The first input byte picks the options (delimiter, fix_width, small size bounds so the kLimit path
// is reached) and whether the bytes also go through import_kernel_details; the rest is the CSV text.
// Besides sanitizer findings it checks the cursor's documented invariants.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/csv_reader.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "fuzz_check.hpp"

namespace {

using ascprof::importers::CsvCursor;
using ascprof::importers::CsvHeader;
using ascprof::importers::CsvOptions;

void tokenize(std::string_view text, const CsvOptions& opt) {
  ascprof::Stats stats;
  CsvCursor cursor(text, "fuzz.csv", stats, opt);
  std::vector<std::string_view> fields;
  size_t last_pos = 0;
  uint64_t last_line = 0;
  uint64_t rows = 0;
  while (cursor.next_row(fields)) {
    ++rows;
    FUZZ_CHECK(cursor.position() >= last_pos, "position went backwards");
    FUZZ_CHECK(cursor.position() <= cursor.size(), "position beyond input");
    FUZZ_CHECK(cursor.line() >= last_line, "line went backwards");
    FUZZ_CHECK(cursor.row_offset() <= cursor.position(), "row starts after position");
    FUZZ_CHECK(!fields.empty(), "row returned without fields");
    if (opt.fix_width && rows > 1) FUZZ_CHECK(fields.size() == cursor.expected_fields(), "width not fixed");
    for (std::string_view f : fields) {
      FUZZ_CHECK(f.size() <= opt.max_field_bytes, "field above max_field_bytes returned");
      // Touch every byte so ASan sees a view into freed or foreign memory.
      volatile char sink = 0;
      for (char c : f) sink = static_cast<char>(sink ^ c);
    }
    if (rows == 1) {
      CsvHeader header(fields);
      (void)header.find("Name");
      (void)header.find_first({"Start Time(us)", "start time"});
      (void)header.find_all({"Duration(us)", "duration"});
      (void)header.joined();
    }
    last_pos = cursor.position();
    last_line = cursor.line();
  }
  FUZZ_CHECK(fields.empty(), "fields not cleared at end");
  FUZZ_CHECK(cursor.rows_returned() == rows, "rows_returned mismatch");
  if (cursor.status().ok()) FUZZ_CHECK(cursor.position() <= cursor.size(), "end position beyond input");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  CsvOptions opt;
  static constexpr char kDelimiters[] = {',', '\t', ';', '|'};
  opt.delimiter = kDelimiters[mode & 3];
  opt.fix_width = (mode & 4) == 0;
  if (mode & 8) {
    opt.max_field_bytes = 64 + (mode >> 4) * 16;
    opt.max_row_bytes = 128 + (mode >> 4) * 32;
  }
  tokenize(text, opt);

  // kernel_details on top of the tokenizer, with the default comma delimiter (its real format).
  if ((mode & 0x30) != 0x30) {
    ascprof::Stats stats;
    ascprof::StringPool pool;
    ascprof::model::KernelTable table;
    CsvOptions kopt;
    if (mode & 8) {
      kopt.max_field_bytes = opt.max_field_bytes;
      kopt.max_row_bytes = opt.max_row_bytes;
    }
    (void)ascprof::importers::import_kernel_details(text, "kernel_details.csv", pool, table, stats, kopt);
  }
  return 0;
}
