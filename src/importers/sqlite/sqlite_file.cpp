#include "sqlite_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace ascprof::importers::db {

namespace fs = std::filesystem;

Query::Query(Query&& o) noexcept
    : st_(o.st_), file_(std::move(o.file_)), table_(std::move(o.table_)), status_(std::move(o.status_)) {
  o.st_ = nullptr;
}

Query& Query::operator=(Query&& o) noexcept {
  if (this != &o) {
    if (st_ != nullptr) sqlite3_finalize(st_);
    st_ = o.st_;
    o.st_ = nullptr;
    file_ = std::move(o.file_);
    table_ = std::move(o.table_);
    status_ = std::move(o.status_);
  }
  return *this;
}

Query::~Query() {
  if (st_ != nullptr) sqlite3_finalize(st_);
}

bool Query::step() {
  if (st_ == nullptr || !status_.ok()) return false;
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // A damaged page or a file cut short shows up here, in the middle of a table.
  sqlite3* db = sqlite3_db_handle(st_);
  std::string reason = sqlite3_errstr(rc);
  const char* detail = sqlite3_errmsg(db);
  if (detail != nullptr && reason != detail) reason += std::string(" (") + detail + ")";
  status_ = file_error(rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? ErrorCode::kParse : ErrorCode::kIo, file_,
                       "table " + table_, reason);
  return false;
}

DbValue Query::value(int c) const {
  DbValue v;
  v.type = sqlite3_column_type(st_, c);
  switch (v.type) {
    case SQLITE_INTEGER: v.i = sqlite3_column_int64(st_, c); break;
    case SQLITE_FLOAT: v.d = sqlite3_column_double(st_, c); break;
    case SQLITE_TEXT: {
      const char* s = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
      if (s != nullptr) v.text = std::string_view(s, std::strlen(s));  // (up to a NUL, as strtoll read it)
      break;
    }
    default: break;
  }
  return v;
}

int64_t value_i64(const DbValue& v, int64_t absent) {
  switch (v.type) {
    case SQLITE_INTEGER: return v.i;
    case SQLITE_FLOAT:
      if (!std::isfinite(v.d) || std::fabs(v.d) > 9.2e18) return absent;
      return static_cast<int64_t>(std::llround(v.d));
    case SQLITE_TEXT: {  // PYTORCH_API declares its times TEXT
      if (v.text.empty()) return absent;
      const std::string s(v.text);
      char* end = nullptr;
      errno = 0;
      const long long x = std::strtoll(s.c_str(), &end, 10);
      if (errno != 0 || end == s.c_str() || *end != '\0') return absent;
      return x;
    }
    default: return absent;
  }
}

double value_f64(const DbValue& v) {
  switch (v.type) {
    case SQLITE_INTEGER: return static_cast<double>(v.i);
    case SQLITE_FLOAT: return v.d;
    case SQLITE_TEXT: {
      if (v.text.empty()) return std::numeric_limits<double>::quiet_NaN();
      const std::string s(v.text);
      char* end = nullptr;
      const double x = std::strtod(s.c_str(), &end);
      return end != s.c_str() && *end == '\0' ? x : std::numeric_limits<double>::quiet_NaN();
    }
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

int64_t Query::scaled_i64(int c, int64_t factor, int64_t absent) const {
  if (sqlite3_column_type(st_, c) == SQLITE_INTEGER) {
    const int64_t v = sqlite3_column_int64(st_, c);
    int64_t out = 0;
    return __builtin_mul_overflow(v, factor, &out) ? absent : out;
  }
  // A REAL µs time near 1.7e15 is exact to 1/4 µs, but the product near 1.7e18 is not: scale the
  // whole part in integers and only the fraction in floating point.
  const double d = f64(c);
  if (!std::isfinite(d) || std::fabs(d) * static_cast<double>(factor) > 9.2e18) return absent;
  const double whole = std::floor(d);
  return static_cast<int64_t>(whole) * factor + static_cast<int64_t>(std::llround((d - whole) * static_cast<double>(factor)));
}

std::string_view Query::text(int c) const {
  const unsigned char* s = sqlite3_column_text(st_, c);
  if (s == nullptr) return {};
  return {reinterpret_cast<const char*>(s), static_cast<size_t>(sqlite3_column_bytes(st_, c))};
}

namespace {

// file: URI of a path: the characters URI syntax gives a meaning are escaped.
std::string file_uri(const std::string& path) {
  std::string out = "file:";
  for (const char ch : path) {
    if (ch == '?') out += "%3f";
    else if (ch == '#') out += "%23";
    else if (ch == '%') out += "%25";
    else out += ch;
  }
  return out + "?immutable=1";
}

}  // namespace

Result<SqliteFile> SqliteFile::open(const fs::path& path) {
  const std::string p = path.string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return file_error(ErrorCode::kIo, p, "", ec ? ec.message() : std::string("not a regular file (missing?)"));
  sqlite3* db = nullptr;
  // NOMUTEX: one connection per rank job and thread, so SQLite's per-call connection mutex is pure
  // cost (it was 13 % of a database rank's ingest profile).
  const int rc = sqlite3_open_v2(file_uri(p).c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return file_error(ErrorCode::kIo, p, "", "cannot open database: " + reason);
  }
  SqliteFile f(db, p);
  // (No memory map: PRAGMA mmap_size saved 3-6 % of a 330 MB database's ingest but doubled peak
  // RSS, the mapped pages counting as the process's memory.)
  // Opening is lazy: the header is read by the first query, which is where a file that is not
  // SQLite (or whose first page is damaged) is found.
  sqlite3_stmt* st = nullptr;
  int r = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, nullptr);
  if (r == SQLITE_OK) r = sqlite3_step(st);
  sqlite3_finalize(st);
  if (r != SQLITE_ROW) {
    const bool not_db = r == SQLITE_NOTADB || r == SQLITE_CORRUPT;
    return file_error(not_db ? ErrorCode::kParse : ErrorCode::kIo, p, "table sqlite_master",
                      std::string(not_db ? "not an SQLite database, or cut short or damaged: " : "cannot read: ") +
                          sqlite3_errmsg(db));
  }
  return f;
}

SqliteFile::~SqliteFile() {
  if (db_ != nullptr) sqlite3_close(db_);
}

Status SqliteFile::error(std::string_view table, std::string_view reason) const {
  return file_error(ErrorCode::kSchema, path_, "table " + std::string(table), reason);
}

bool SqliteFile::has_table(std::string_view table) const {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1", -1, &st,
                         nullptr) != SQLITE_OK)
    return false;
  sqlite3_bind_text(st, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  const bool found = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  return found;
}

std::vector<std::string> SqliteFile::columns(std::string_view table) const {
  std::vector<std::string> out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT name FROM pragma_table_info(?1)", -1, &st, nullptr) != SQLITE_OK) return out;
  sqlite3_bind_text(st, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  while (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* s = sqlite3_column_text(st, 0);
    if (s != nullptr) out.emplace_back(reinterpret_cast<const char*>(s));
  }
  sqlite3_finalize(st);
  return out;
}

Result<Query> SqliteFile::prepare(const std::string& sql, std::string_view table) const {
  sqlite3_stmt* st = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    const bool damaged = rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
    return file_error(damaged ? ErrorCode::kParse : ErrorCode::kSchema, path_, "table " + std::string(table),
                      sqlite3_errmsg(db_));
  }
  return Query(st, path_, std::string(table));
}

size_t SqliteFile::row_count(std::string_view table) const {
  if (!has_table(table)) return 0;
  sqlite3_stmt* st = nullptr;
  const std::string sql = "SELECT count(*) FROM \"" + std::string(table) + "\"";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return 0;
  int64_t n = 0;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  // a bound, not trusted blindly: a damaged count must not reserve the machine's memory
  return n > 0 ? static_cast<size_t>(std::min<int64_t>(n, int64_t{1} << 28)) : 0;
}

std::string SqliteFile::meta(std::string_view name) const {
  if (!has_table("META_DATA")) return {};
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT value FROM META_DATA WHERE name = ?1", -1, &st, nullptr) != SQLITE_OK) return {};
  sqlite3_bind_text(st, 1, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* s = sqlite3_column_text(st, 0);
    if (s != nullptr) out = reinterpret_cast<const char*>(s);
  }
  sqlite3_finalize(st);
  return out;
}

Status StringIds::init() {
  if (!file_.has_table("STRING_IDS")) return file_.error("STRING_IDS", "missing (every text column of the database refers to it)");
  auto q = file_.prepare("SELECT value FROM STRING_IDS WHERE id = ?1", "STRING_IDS");
  if (!q.ok()) return q.status();
  lookup_ = std::move(q).value();
  return {};
}

StrId StringIds::get(const Query& q, int column) {
  if (q.null(column)) return 0;
  return get_id(q.i64(column, -1));
}

StrId StringIds::get_id(int64_t id) {
  if (id >= 0 && id < kDenseLimit) {
    if (static_cast<size_t>(id) < dense_.size() && dense_[static_cast<size_t>(id)] != kUnset) return dense_[static_cast<size_t>(id)];
  } else if (auto it = sparse_.find(id); it != sparse_.end()) {
    return it->second;
  }
  StrId s = 0;
  lookup_.reset();
  lookup_.bind(1, id);
  if (lookup_.step()) {
    s = pool_.intern(lookup_.text(0));
  } else {
    stats_.note(Stat::db_dangling_string_id, file_.path() + ":table STRING_IDS: id " + std::to_string(id) +
                                                 " is referred to but not defined; read as empty");
  }
  lookup_.reset();
  if (id >= 0 && id < kDenseLimit) {
    if (static_cast<size_t>(id) >= dense_.size()) dense_.resize(static_cast<size_t>(id) + 1 + dense_.size() / 2, kUnset);
    dense_[static_cast<size_t>(id)] = s;
  } else {
    sparse_.emplace(id, s);
  }
  return s;
}

bool has_column(const std::vector<std::string>& columns, std::string_view name) {
  for (const auto& c : columns)
    if (c == name) return true;
  return false;
}

std::string column_or_null(const std::vector<std::string>& columns, std::string_view name, std::string_view prefix) {
  return has_column(columns, name) ? std::string(prefix) + std::string(name) : std::string("NULL");
}

}  // namespace ascprof::importers::db
