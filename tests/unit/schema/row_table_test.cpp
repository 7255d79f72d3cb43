// schema::write_rows / read_rows: a row type declared once by describe() is written as one
// compound table and read back field for field, with every kind of column (numbers, bool, text,
// enum names, JSON cells, prefixed parts); damage is a kSchema error naming file, column and row.
#include <gtest/gtest.h>

#include <cmath>

#include "ascprof/schema/cells.hpp"
#include "ascprof/schema/row_table.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "support/table_edit.hpp"
#include "support/test_support.hpp"

namespace ascprof::schema {
namespace {

enum class Colour : uint8_t { kRed, kGreen, kBlue };
const char* colour_name(Colour c) {
  switch (c) {
    case Colour::kRed: return "red";
    case Colour::kGreen: return "green";
    case Colour::kBlue: return "blue";
  }
  return "?";
}
constexpr EnumNames<Colour> kColours{colour_name, 3};

struct Span {
  uint32_t first = 0;
  int64_t last_ns = 0;
};

struct Probe {
  std::string name;
  uint8_t u8 = 0;
  int32_t i32 = 0;
  uint32_t u32 = 0;
  int64_t i64 = 0;
  uint64_t u64 = 0;
  float f32 = 0;
  double f64 = 0;
  bool flag = false;
  Colour colour = Colour::kRed;
  Colour colour_code = Colour::kRed;  // stored as its number
  StrId label = 0;                    // an id into /strings
  std::vector<int64_t> ranks;
  std::vector<uint32_t> rows;
  std::vector<std::string> tags;
  std::vector<double> values;
  Span head, tail;
};

}  // namespace

// Declared in namespace schema, as the real tables are (rank_tables.hpp).
template <class V>
void describe(Span& r, V& v) {
  v("first", r.first);
  v("last_ns", r.last_ns);
}

// A declaration that wrongly varies its columns by row.
struct Varying {
  bool more = false;
  uint32_t a = 0, b = 0;
};
template <class V>
void describe(Varying& r, V& v) {
  v("a", r.a);
  if (r.more) v("b", r.b);
}

template <class V>
void describe(Probe& r, V& v) {
  v("name", r.name);
  v("u8", r.u8);
  v("i32", r.i32);
  v("u32", r.u32);
  v("i64", r.i64);
  v("u64", r.u64);
  v("f32", r.f32);
  v("f64", r.f64);
  v("flag", r.flag);
  v("colour", r.colour, kColours);
  v("colour_code", r.colour_code);
  v.id("label", r.label);
  v("ranks", r.ranks, kCommaInts);
  v("rows", r.rows, kIndexList);
  v("tags", r.tags, kStringList);
  v("values", r.values, kDoubles);
  v.part("head_", r.head);
  v.part("tail_", r.tail);
}

namespace {

namespace fs = std::filesystem;
constexpr Table<Probe> kProbes{"/probes"};

std::vector<Probe> sample() {
  Probe a;
  a.name = "attention \"q\" \xce\xbb";
  a.u8 = 255;
  a.i32 = -7;
  a.u32 = 4000000000u;
  a.i64 = -(int64_t{1} << 60);
  a.u64 = ~uint64_t{0};
  a.f32 = 1.5f;
  a.f64 = 0.1;
  a.flag = true;
  a.colour = Colour::kBlue;
  a.colour_code = Colour::kGreen;
  a.label = 1;
  a.ranks = {0, -1, 4096};
  a.rows = {3, 1, 4};
  a.tags = {"x", "y,z"};
  a.values = {1.0, -0.0, 2.5e-300};
  a.head = {7, 70};
  a.tail = {9, -90};
  Probe b;  // every default, including empty lists (values: an empty cell)
  return {a, b};
}

Status write(const fs::path& p, const std::vector<Probe>& rows) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Writer w, store::H5Writer::create(p));
  StringPool pool;
  pool.intern("probe label");
  ASCPROF_RETURN_IF_ERROR(w.write_string_table("/strings", pool));
  ASCPROF_RETURN_IF_ERROR(write_rows(w, kProbes, rows));
  return w.commit("test");
}

Result<std::vector<Probe>> read(const fs::path& p) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(p));
  std::vector<Probe> out;
  ASCPROF_RETURN_IF_ERROR(read_rows(r, kProbes, &out));
  return out;
}

TEST(RowTable, RoundTripsEveryKindOfColumn) {
  ascprof::testing::ScratchDir dir("row-table");
  const auto rows = sample();
  ASCPROF_ASSERT_OK(write(dir / "t.h5", rows));
  auto back = read(dir / "t.h5");
  ASCPROF_ASSERT_OK(back);
  ASSERT_EQ(back->size(), 2u);
  const Probe& a = (*back)[0];
  EXPECT_EQ(a.name, rows[0].name);
  EXPECT_EQ(a.u8, 255);
  EXPECT_EQ(a.i32, -7);
  EXPECT_EQ(a.u32, 4000000000u);
  EXPECT_EQ(a.i64, rows[0].i64);
  EXPECT_EQ(a.u64, rows[0].u64);
  EXPECT_EQ(a.f32, 1.5f);
  EXPECT_EQ(a.f64, 0.1);
  EXPECT_TRUE(a.flag);
  EXPECT_EQ(a.colour, Colour::kBlue);
  EXPECT_EQ(a.colour_code, Colour::kGreen);
  EXPECT_EQ(a.label, 1u);
  EXPECT_EQ(a.ranks, rows[0].ranks);
  EXPECT_EQ(a.rows, rows[0].rows);
  EXPECT_EQ(a.tags, rows[0].tags);
  ASSERT_EQ(a.values.size(), 3u);
  EXPECT_TRUE(std::signbit(a.values[1]));
  EXPECT_EQ(a.values[2], 2.5e-300);
  EXPECT_EQ(a.head.first, 7u);
  EXPECT_EQ(a.head.last_ns, 70);
  EXPECT_EQ(a.tail.last_ns, -90);
  const Probe& b = (*back)[1];
  EXPECT_FALSE(b.flag);
  EXPECT_TRUE(b.rows.empty() && b.tags.empty() && b.values.empty());
}

TEST(RowTable, ColumnsAreTheDeclarationInOrderWithTheFieldTypes) {
  ascprof::testing::ScratchDir dir("row-table");
  ASCPROF_ASSERT_OK(write(dir / "t.h5", {}));  // no rows: the columns are still declared
  auto r = store::H5Reader::open(dir / "t.h5");
  ASCPROF_ASSERT_OK(r);
  auto t = r->read_table("/probes");
  ASCPROF_ASSERT_OK(t);
  using store::ColumnType;
  const std::vector<std::pair<std::string, ColumnType>> expected = {
      {"name", ColumnType::kString},    {"u8", ColumnType::kUInt8},      {"i32", ColumnType::kInt32},
      {"u32", ColumnType::kUInt32},     {"i64", ColumnType::kInt64},     {"u64", ColumnType::kUInt64},
      {"f32", ColumnType::kFloat},      {"f64", ColumnType::kDouble},    {"flag", ColumnType::kUInt8},
      {"colour", ColumnType::kString},  {"colour_code", ColumnType::kUInt8}, {"label", ColumnType::kUInt32},
      {"ranks", ColumnType::kString},   {"rows", ColumnType::kString},   {"tags", ColumnType::kString},
      {"values", ColumnType::kString},  {"head_first", ColumnType::kUInt32}, {"head_last_ns", ColumnType::kInt64},
      {"tail_first", ColumnType::kUInt32}, {"tail_last_ns", ColumnType::kInt64}};
  EXPECT_EQ(t->columns(), expected);
  auto back = read(dir / "t.h5");
  ASCPROF_ASSERT_OK(back);
  EXPECT_TRUE(back->empty());
}

TEST(RowTable, CellsAreReadableText) {
  ascprof::testing::ScratchDir dir("row-table");
  ASCPROF_ASSERT_OK(write(dir / "t.h5", sample()));
  auto r = store::H5Reader::open(dir / "t.h5");
  ASCPROF_ASSERT_OK(r);
  auto t = r->read_table("/probes");
  ASCPROF_ASSERT_OK(t);
  EXPECT_EQ(*t->strings("colour"), (std::vector<std::string>{"blue", "red"}));
  EXPECT_EQ(*t->strings("ranks"), (std::vector<std::string>{"0,-1,4096", ""}));
  EXPECT_EQ(*r->string_array_attr("/probes", "id_columns"), std::vector<std::string>{"label"});
  EXPECT_EQ(*r->string_array_attr("/probes", "id_tables"), std::vector<std::string>{"/strings"});
  EXPECT_EQ(*t->strings("rows"), (std::vector<std::string>{"[3,1,4]", "[]"}));
  EXPECT_EQ(*t->strings("tags"), (std::vector<std::string>{"[\"x\",\"y,z\"]", "[]"}));
  EXPECT_EQ(*t->strings("values"), (std::vector<std::string>{"[1.0,-0.0,2.5e-300]", ""}));
  EXPECT_EQ(*t->column<uint8_t>("flag"), (std::vector<uint8_t>{1, 0}));
}

TEST(RowTable, DamageIsASchemaErrorNamingFileColumnAndRow) {
  ascprof::testing::ScratchDir dir("row-table");
  auto damaged = [&](const char* name, const std::function<void(store::TableWriter&)>& put, const char* column) {
    const fs::path p = dir / name;
    EXPECT_TRUE(write(p, sample()).ok());
    auto w = store::H5Writer::update(p);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE(ascprof::testing::rewrite_table(*w, "/probes", column, put).ok());
    EXPECT_TRUE(w->commit("test").ok());
    return read(p).status();
  };
  auto expect = [&](const Status& st, const std::string& fragment, const char* file) {
    EXPECT_EQ(st.code(), ErrorCode::kSchema) << st.message();
    EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
    EXPECT_NE(st.message().find((dir / file).string()), std::string::npos) << st.message();
  };
  expect(damaged("gone.h5", [](store::TableWriter&) {}, "tail_last_ns"), "/probes/tail_last_ns: missing column", "gone.h5");
  expect(damaged("type.h5", [](store::TableWriter& t) { t.column("u32", std::vector<int64_t>{1, 2}); }, "u32"),
         "/probes/u32: element type is int64, expected uint32", "type.h5");
  expect(damaged("enum.h5",
                 [](store::TableWriter& t) { t.string_column("colour", std::vector<std::string>{"red", "mauve"}); },
                 "colour"),
         "/probes/colour: row 1: unknown value 'mauve'", "enum.h5");
  expect(damaged("json.h5",
                 [](store::TableWriter& t) { t.string_column("rows", std::vector<std::string>{"[1,", "[]"}); }, "rows"),
         "/probes/rows: row 0: not JSON", "json.h5");
  expect(damaged("ints.h5",
                 [](store::TableWriter& t) { t.string_column("ranks", std::vector<std::string>{"1,,2", ""}); }, "ranks"),
         "/probes/ranks: row 0: not a comma-separated list of integers", "ints.h5");
  expect(damaged("list.h5",
                 [](store::TableWriter& t) { t.string_column("tags", std::vector<std::string>{"[]", "[1]"}); }, "tags"),
         "/probes/tags: row 1: JSON array element is not a string", "list.h5");

  auto r = store::H5Reader::open(dir / "gone.h5");
  ASCPROF_ASSERT_OK(r);
  std::vector<Probe> out;
  const Status missing = read_rows(*r, Table<Probe>{"/nowhere"}, &out);
  EXPECT_EQ(missing.code(), ErrorCode::kSchema);
  EXPECT_NE(missing.message().find("/nowhere: missing table"), std::string::npos) << missing.message();
  const Status count = read_rows(*r, Table<Probe>{"/probes", 1}, &out);
  EXPECT_NE(count.message().find("/probes: 2 rows, expected exactly 1"), std::string::npos) << count.message();
}

TEST(RowTable, ADeclarationThatVariesByRowIsRefused) {
  ascprof::testing::ScratchDir dir("row-table");
  auto w = store::H5Writer::create(dir / "v.h5");
  ASCPROF_ASSERT_OK(w);
  const std::vector<Varying> more = {{false, 1, 0}, {true, 2, 3}};  // the second row calls an undeclared column
  const Status st = write_rows(*w, Table<Varying>{"/varying"}, more);
  EXPECT_EQ(st.code(), ErrorCode::kInternal) << st.to_string();
  EXPECT_NE(st.message().find("more columns than the table declares"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace ascprof::schema
