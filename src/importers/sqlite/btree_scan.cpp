#include "btree_scan.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>


namespace ascprof::importers::db {

namespace {

uint32_t be16(const unsigned char* p) { return static_cast<uint32_t>(p[0]) << 8 | p[1]; }
uint32_t be32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
}

// SQLite's varint: 1-9 bytes, 7 bits each big-endian, the ninth byte whole. False past `end`.
inline bool varint(const unsigned char*& p, const unsigned char* end, uint64_t& v) {
  if (p < end && *p < 0x80) {  // one byte: serial types of numbers and short text, small sizes
    v = *p++;
    return true;
  }
  v = 0;
  for (int i = 0; i < 8; ++i) {
    if (p >= end) return false;
    const unsigned char b = *p++;
    v = (v << 7) | (b & 0x7f);
    if ((b & 0x80) == 0) return true;
  }
  if (p >= end) return false;
  v = (v << 8) | *p++;
  return true;
}

// Bytes of a value of serial type `t`; -1 for the reserved types 10 and 11.
int64_t serial_size(uint64_t t) {
  static constexpr int8_t kSmall[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
  if (t < 12) return kSmall[t];
  return static_cast<int64_t>((t - 12) / 2);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string sql_string(std::string_view s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

bool as_rowid(const DbValue& v, int64_t& rowid) {
  if (v.type == SQLITE_INTEGER) {
    rowid = v.i;
    return true;
  }
  if (v.type != SQLITE_FLOAT || std::nearbyint(v.d) != v.d || std::fabs(v.d) >= 9.2e18) return false;
  rowid = static_cast<int64_t>(v.d);
  return true;
}

Result<TableScan> TableScan::open(const SqliteFile& file, std::string_view table, const std::vector<std::string>& columns) {
  auto refuse = [&](const std::string& why) {
    return file_error(ErrorCode::kSchema, file.path(), "table " + std::string(table), "not scanned directly: " + why);
  };
  TableScan s;
  s.path_ = file.path();
  s.table_ = std::string(table);
  // the table's root page, and no WITHOUT ROWID (its B-tree is an index's)
  uint32_t root = 0;
  {
    auto q = file.prepare("SELECT rootpage, sql FROM sqlite_master WHERE type = 'table' AND name = " + sql_string(table),
                          table);
    if (!q.ok()) return q.status();
    if (!q->step()) return q->status().ok() ? refuse("absent") : q->status();
    const int64_t r = q->i64(0, 0);
    if (r <= 0 || r > UINT32_MAX) return refuse("no root page");
    std::string sql(q->text(1));
    std::transform(sql.begin(), sql.end(), sql.begin(), [](unsigned char c) { return std::toupper(c); });
    if (sql.find("WITHOUT") != std::string::npos) return refuse("WITHOUT ROWID");
    root = static_cast<uint32_t>(r);
  }
  // each wanted column's position in a record; the INTEGER PRIMARY KEY reads the rowid when stored NULL
  {
    auto q = file.prepare("SELECT cid, name, type, pk, dflt_value FROM pragma_table_info(" + sql_string(table) + ")", table);
    if (!q.ok()) return q.status();
    struct Col {
      int64_t cid;
      std::string name, type;
      int64_t pk;
      bool has_default;
    };
    std::vector<Col> cols;
    while (q->step())
      cols.push_back({q->i64(0, -1), std::string(q->text(1)), std::string(q->text(2)), q->i64(3, 0), !q->null(4)});
    if (!q->status().ok()) return q->status();
    const auto pks = std::count_if(cols.begin(), cols.end(), [](const Col& c) { return c.pk > 0; });
    for (const auto& want : columns) {
      if (want == "rowid") {
        s.wanted_.push_back(kRowid);
        continue;
      }
      const auto it = std::find_if(cols.begin(), cols.end(), [&want](const Col& c) { return c.name == want; });
      if (it == cols.end()) return refuse("no column " + want);
      if (it->has_default) return refuse("column " + want + " has a DEFAULT");
      const bool rowid_alias = pks == 1 && it->pk == 1 && iequals(it->type, "INTEGER");
      s.wanted_.push_back(rowid_alias ? -1 - static_cast<int>(it->cid) : static_cast<int>(it->cid));
    }
  }
  s.fd_.fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd_.fd < 0) return file_error(ErrorCode::kIo, file.path(), "", std::strerror(errno));
  unsigned char h[100];
  struct stat st {};
  if (::pread(s.fd_.fd, h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) || ::fstat(s.fd_.fd, &st) != 0)
    return refuse("header unreadable");
  if (std::memcmp(h, "SQLite format 3", 16) != 0) return refuse("not an SQLite 3 header");
  const uint32_t page_size = be16(h + 16) == 1 ? 65536u : be16(h + 16);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) return refuse("bad page size");
  if (h[18] != 1 || h[19] != 1) return refuse("not in rollback-journal mode");  // WAL: the newest rows may be in -wal
  if (be32(h + 56) != 1) return refuse("not UTF-8");
  s.page_size_ = page_size;
  s.usable_ = page_size - h[20];
  if (s.usable_ < 480) return refuse("bad reserved space");
  s.page_count_ = static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(st.st_size) / page_size, UINT32_MAX));
  s.values_.resize(columns.size());
  if (!s.descend(root)) return s.status_;
  return s;
}

TableScan::Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

bool TableScan::fail(const std::string& why) {
  if (status_.ok())
    status_ = file_error(ErrorCode::kParse, path_, "table " + table_ + " page " + std::to_string(leaf_page_), why);
  done_ = true;
  return false;
}

bool TableScan::read_page(uint32_t page, std::string& out) {
  // every page at most once per scan (a damaged child pointer must not loop), none past the file
  if (page == 0 || page > page_count_) return fail("page number " + std::to_string(page) + " outside the file");
  if (++pages_read_ > page_count_) return fail("more pages than the file holds: a loop in the tree");
  out.resize(page_size_);
  const off_t at = static_cast<off_t>(page - 1) * page_size_;
  for (size_t got = 0; got < page_size_;) {
    const ssize_t n = ::pread(fd_.fd, out.data() + got, page_size_ - got, at + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("page " + std::to_string(page) + " unreadable");
    got += static_cast<size_t>(n);
  }
  return true;
}

// Reads `page`: an interior page goes on the stack, a leaf becomes the current leaf.
bool TableScan::descend(uint32_t page) {
  if (stack_.size() > 40) return fail("tree deeper than 40 levels");
  std::string bytes;
  if (!read_page(page, bytes)) return false;
  leaf_page_ = page;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint32_t hdr = page == 1 ? 100 : 0;
  const unsigned char type = p[hdr];
  if (type != 0x05 && type != 0x0d) return fail("not a table B-tree page (type " + std::to_string(type) + ")");
  const uint32_t cells = be16(p + hdr + 3);
  const uint32_t ptrs = hdr + (type == 0x05 ? 12 : 8);
  if (ptrs + 2 * cells > usable_) return fail("cell pointer array past the page");
  if (type == 0x05) {
    stack_.push_back({page, 0, cells, std::move(bytes)});
  } else {
    leaf_ = std::move(bytes);
    leaf_cell_ = 0;
    leaf_cells_ = cells;
  }
  return true;
}

bool TableScan::next() {
  if (done_) return false;
  for (;;) {
    if (leaf_cell_ < leaf_cells_) {
      const auto* p = reinterpret_cast<const unsigned char*>(leaf_.data());
      const uint32_t hdr = leaf_page_ == 1 ? 100 : 0;
      const uint32_t off = be16(p + hdr + 8 + 2 * leaf_cell_++);
      return decode_cell(off);
    }
    leaf_cells_ = 0;
    // the next child of the deepest interior page with one left
    while (!stack_.empty() && stack_.back().cell > stack_.back().cells) stack_.pop_back();
    if (stack_.empty()) {
      done_ = true;
      return false;
    }
    Level& top = stack_.back();
    const auto* p = reinterpret_cast<const unsigned char*>(top.bytes.data());
    const uint32_t hdr = top.page == 1 ? 100 : 0;
    uint32_t child = 0;
    if (top.cell < top.cells) {
      const uint32_t off = be16(p + hdr + 12 + 2 * top.cell);
      if (off + 4 > usable_) return fail("interior cell past the page");
      child = be32(p + off);
    } else {
      child = be32(p + hdr + 8);  // the right-most child
    }
    ++top.cell;
    if (!descend(child)) return false;
  }
}

bool TableScan::decode_cell(uint32_t off) {
  const auto* page = reinterpret_cast<const unsigned char*>(leaf_.data());
  if (off >= usable_) return fail("cell offset past the page");
  const unsigned char* p = page + off;
  const unsigned char* end = page + usable_;
  uint64_t size = 0, rowid = 0;
  if (!varint(p, end, size) || !varint(p, end, rowid)) return fail("cell header past the page");
  const uint64_t x = usable_ - 35;
  if (size <= x) {
    if (size > static_cast<uint64_t>(end - p)) return fail("cell payload past the page");
    return decode_record(std::string_view(reinterpret_cast<const char*>(p), size), static_cast<int64_t>(rowid));
  }
  // spilled: the local part, then a chain of overflow pages (4-byte next page, usable - 4 bytes)
  if (size > (uint64_t{1} << 30)) return fail("payload over 1 GiB");
  const uint64_t m = ((usable_ - 12) * 32 / 255) - 23;
  const uint64_t k = m + ((size - m) % (usable_ - 4));
  const uint64_t local = k <= x ? k : m;
  if (local + 4 > static_cast<uint64_t>(end - p)) return fail("cell payload past the page");
  overflow_.assign(reinterpret_cast<const char*>(p), local);
  uint32_t next = be32(p + local);
  std::string page_bytes;
  while (overflow_.size() < size) {
    if (!read_page(next, page_bytes)) return false;
    const auto* q = reinterpret_cast<const unsigned char*>(page_bytes.data());
    const size_t take = static_cast<size_t>(std::min<uint64_t>(usable_ - 4, size - overflow_.size()));
    overflow_.append(page_bytes.data() + 4, take);
    next = be32(q);
  }
  return decode_record(overflow_, static_cast<int64_t>(rowid));
}

bool TableScan::decode_record(std::string_view payload, int64_t rowid) {
  const auto* begin = reinterpret_cast<const unsigned char*>(payload.data());
  const unsigned char* end = begin + payload.size();
  const unsigned char* p = begin;
  uint64_t header = 0;
  if (!varint(p, end, header) || header > payload.size() || begin + header < p) return fail("record header past the payload");
  // the serial types and, in the same pass, every value's offset (one more: the record's end)
  serial_.clear();
  offsets_.clear();
  uint64_t at_value = header;
  for (const unsigned char* h = begin + header; p < h;) {
    uint64_t t = 0;
    if (!varint(p, h, t)) return fail("record header cut short");
    const int64_t n = serial_size(t);
    if (n < 0) return fail("reserved serial type");
    if (static_cast<uint64_t>(n) > payload.size() - at_value) return fail("value past the record");
    serial_.push_back(t);
    offsets_.push_back(at_value);
    at_value += static_cast<uint64_t>(n);
  }
  offsets_.push_back(at_value);
  for (size_t w = 0; w < wanted_.size(); ++w) {
    const int want = wanted_[w];
    DbValue& v = values_[w];
    if (want == kRowid) {
      v = {SQLITE_INTEGER, rowid, 0, {}};
      continue;
    }
    const size_t col = static_cast<size_t>(want < 0 ? -1 - want : want);
    v = DbValue{};
    if (col >= serial_.size()) {  // a row older than the column (ALTER TABLE ADD COLUMN): NULL
      if (want < 0) v = {SQLITE_INTEGER, rowid, 0, {}};
      continue;
    }
    const unsigned char* at = begin + offsets_[col];
    const uint64_t t = serial_[col];
    const int64_t n = static_cast<int64_t>(offsets_[col + 1] - offsets_[col]);
    if (t == 0) {
      if (want < 0) v = {SQLITE_INTEGER, rowid, 0, {}};
    } else if (t <= 6) {
      int64_t i = (at[0] & 0x80) ? -1 : 0;  // big-endian two's complement
      for (int64_t b = 0; b < n; ++b) i = static_cast<int64_t>(static_cast<uint64_t>(i) << 8 | at[b]);
      v = {SQLITE_INTEGER, i, 0, {}};
    } else if (t == 7) {
      uint64_t bits = 0;
      for (int b = 0; b < 8; ++b) bits = bits << 8 | at[b];
      double d = 0;
      std::memcpy(&d, &bits, sizeof d);
      v = {SQLITE_FLOAT, 0, d, {}};
    } else if (t == 8 || t == 9) {
      v = {SQLITE_INTEGER, t == 9 ? 1 : 0, 0, {}};
    } else {
      v = {t % 2 == 1 ? SQLITE_TEXT : SQLITE_BLOB, 0, 0,
           std::string_view(reinterpret_cast<const char*>(at), static_cast<size_t>(n))};
    }
  }
  return true;
}

Result<TableRows> TableRows::open(const SqliteFile& file, std::string_view table, const std::vector<std::string>& columns,
                                  bool allow_scan) {
  TableRows rows;
  if (allow_scan)
    if (auto scan = TableScan::open(file, table, columns); scan.ok()) {
      rows.scan_.emplace(std::move(scan).value());
      return rows;
    }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + columns[i];
  auto q = file.prepare(sql + " FROM " + std::string(table), table);
  if (!q.ok()) return q.status();
  rows.query_ = std::move(q).value();
  return rows;
}

bool TableRows::step() { return scan_ ? scan_->next() : query_.step(); }

const Status& TableRows::status() const { return scan_ ? scan_->status() : query_.status(); }

}  // namespace ascprof::importers::db
