// Column, string-table, attribute and table round trips through H5Writer / H5Reader.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

H5Writer make_writer(const fs::path& p) {
  auto w = H5Writer::create(p);
  EXPECT_TRUE(w.ok()) << w.status().to_string();
  return std::move(w).value();
}

H5Reader open_reader(const fs::path& p) {
  auto r = H5Reader::open(p);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

template <class T>
void expect_round_trip(const H5Reader& r, const std::string& ds, const std::vector<T>& want, ColumnType type) {
  auto got = r.read_column<T>(ds);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want.size()) << ds;
  // memcmp so NaN and -0.0 must come back bit-identical.
  if (!want.empty()) {
    EXPECT_EQ(std::memcmp(got->data(), want.data(), want.size() * sizeof(T)), 0) << ds;
  }
  auto t = r.column_type(ds);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, type) << ds;
  auto n = r.column_length(ds);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, want.size());
}

TEST(H5Columns, EveryTypeRoundTripsExactly) {
  ScratchDir dir("store");
  const fs::path file = dir / "cols.h5";
  const std::vector<uint8_t> u8{0, 1, 127, 128, 255};
  const std::vector<int32_t> i32{std::numeric_limits<int32_t>::min(), -1, 0, 1, std::numeric_limits<int32_t>::max()};
  const std::vector<uint32_t> u32{0, 1, 0x80000000u, std::numeric_limits<uint32_t>::max()};
  const std::vector<int64_t> i64{std::numeric_limits<int64_t>::min(), -1736408883704643212, 0,
                                 1736408883704643212, std::numeric_limits<int64_t>::max()};
  const std::vector<uint64_t> u64{0, 1, std::numeric_limits<uint64_t>::max()};
  const std::vector<float> f32{0.0f, -0.0f, 1.5f, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()};
  const std::vector<double> f64{0.0, -0.0, 3.141592653589793, std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::infinity(), 1e-310};
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_column("/t/u8", u8));
    ASCPROF_ASSERT_OK(w.write_column("/t/i32", i32));
    ASCPROF_ASSERT_OK(w.write_column("/t/u32", u32));
    ASCPROF_ASSERT_OK(w.write_column("/t/i64", i64));
    ASCPROF_ASSERT_OK(w.write_column("/t/u64", u64));
    ASCPROF_ASSERT_OK(w.write_column("/t/f32", f32));
    ASCPROF_ASSERT_OK(w.write_column("t/f64", std::span<const double>(f64)));  // relative path = from root
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  expect_round_trip(r, "/t/u8", u8, ColumnType::kUInt8);
  expect_round_trip(r, "/t/i32", i32, ColumnType::kInt32);
  expect_round_trip(r, "/t/u32", u32, ColumnType::kUInt32);
  expect_round_trip(r, "/t/i64", i64, ColumnType::kInt64);
  expect_round_trip(r, "/t/u64", u64, ColumnType::kUInt64);
  expect_round_trip(r, "/t/f32", f32, ColumnType::kFloat);
  expect_round_trip(r, "/t/f64", f64, ColumnType::kDouble);
  auto members = r.list("/t");
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(*members, (std::vector<std::string>{"f32", "f64", "i32", "i64", "u32", "u64", "u8"}));
  EXPECT_EQ(r.kind("/t"), ObjectKind::kGroup);
  EXPECT_EQ(r.kind("/t/i64"), ObjectKind::kDataset);
  EXPECT_EQ(r.kind("/t/nope"), ObjectKind::kMissing);
  EXPECT_EQ(r.kind("/nope/deeper/still"), ObjectKind::kMissing);
}

TEST(H5Columns, EmptyColumnsOfEveryType) {
  ScratchDir dir("store");
  const fs::path file = dir / "empty.h5";
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_column("/e/u8", std::vector<uint8_t>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/i32", std::vector<int32_t>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/u32", std::vector<uint32_t>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/i64", std::vector<int64_t>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/u64", std::vector<uint64_t>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/f32", std::vector<float>{}));
    ASCPROF_ASSERT_OK(w.write_column("/e/f64", std::vector<double>{}));
    ASCPROF_ASSERT_OK(w.write_string_column("/e/s", std::span<const std::string>{}));
    ASCPROF_ASSERT_OK(w.write_id_column("/e/ids", {}));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  expect_round_trip(r, "/e/u8", std::vector<uint8_t>{}, ColumnType::kUInt8);
  expect_round_trip(r, "/e/i32", std::vector<int32_t>{}, ColumnType::kInt32);
  expect_round_trip(r, "/e/u32", std::vector<uint32_t>{}, ColumnType::kUInt32);
  expect_round_trip(r, "/e/i64", std::vector<int64_t>{}, ColumnType::kInt64);
  expect_round_trip(r, "/e/u64", std::vector<uint64_t>{}, ColumnType::kUInt64);
  expect_round_trip(r, "/e/f32", std::vector<float>{}, ColumnType::kFloat);
  expect_round_trip(r, "/e/f64", std::vector<double>{}, ColumnType::kDouble);
  auto s = r.read_strings("/e/s");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->empty());
  expect_round_trip(r, "/e/ids", std::vector<uint32_t>{}, ColumnType::kUInt32);
}

TEST(H5Columns, MillionRowColumnsAreChunkedCompressedAndExact) {
  ScratchDir dir("store");
  const fs::path file = dir / "big.h5";
  constexpr size_t kRows = 1'000'000;
  std::vector<int64_t> start(kRows);
  std::vector<int32_t> stream(kRows);
  std::vector<double> metric(kRows);
  std::vector<uint8_t> flag(kRows);
  uint64_t x = 88172645463325252ull;  // xorshift: deterministic but not trivially compressible
  int64_t t = 1736408883704643000;
  for (size_t i = 0; i < kRows; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t += static_cast<int64_t>(x % 50000);
    start[i] = t;
    stream[i] = static_cast<int32_t>(x % 8);
    metric[i] = static_cast<double>(x % 100000) / 7.0;
    flag[i] = static_cast<uint8_t>(x & 1);
  }
  {
    H5Writer w = make_writer(file);
    TableWriter tw(w, "/kernels", kRows);
    ASCPROF_ASSERT_OK(tw.column("start_ns", start).status());
    ASCPROF_ASSERT_OK(tw.column("stream_id", stream).status());
    ASCPROF_ASSERT_OK(tw.column("metric", metric).status());
    ASCPROF_ASSERT_OK(tw.column("flag", flag).status());
    ASCPROF_ASSERT_OK(tw.finish());
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  expect_round_trip(r, "/kernels/start_ns", start, ColumnType::kInt64);
  expect_round_trip(r, "/kernels/stream_id", stream, ColumnType::kInt32);
  expect_round_trip(r, "/kernels/metric", metric, ColumnType::kDouble);
  expect_round_trip(r, "/kernels/flag", flag, ColumnType::kUInt8);
  auto rows = r.int_attr("/kernels", "row_count");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, static_cast<int64_t>(kRows));
  auto cols = r.string_array_attr("/kernels", "columns");
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(*cols, (std::vector<std::string>{"start_ns", "stream_id", "metric", "flag"}));

  // The contract says "chunked and compressed": check the layout and filter pipeline directly.
  // A table is one compound dataset of 21-byte records in ~1 MiB chunks of whole records.
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t ds = H5Dopen2(f, "/kernels", H5P_DEFAULT);
  const hid_t type = H5Dget_type(ds);
  EXPECT_EQ(H5Tget_class(type), H5T_COMPOUND);
  EXPECT_EQ(H5Tget_size(type), 21u);
  EXPECT_EQ(H5Tget_nmembers(type), 4);
  H5Tclose(type);
  const hid_t dcpl = H5Dget_create_plist(ds);
  EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t chunk = 0;
  EXPECT_EQ(H5Pget_chunk(dcpl, 1, &chunk), 1);
  EXPECT_EQ(chunk, (1u << 20) / 21);
  const int nfilters = H5Pget_nfilters(dcpl);
  ASSERT_GE(nfilters, 1);
  unsigned flags = 0;
  unsigned cd[4] = {0, 0, 0, 0};
  size_t nelem = 4;
  char fname[64];
  EXPECT_EQ(H5Pget_filter2(dcpl, static_cast<unsigned>(nfilters - 1), &flags, &nelem, cd, sizeof(fname), fname, nullptr),
            H5Z_FILTER_DEFLATE);
  EXPECT_EQ(cd[0], 1u);  // deflate level
  // Sorted timestamps with small deltas and 3-bit stream ids compress: well below the raw 21 MB.
  EXPECT_LT(H5Dget_storage_size(ds), kRows * 21 * 3 / 4);
  H5Pclose(dcpl);
  H5Dclose(ds);
  H5Fclose(f);
}

/// Filter ids of a dataset's pipeline, in order.
std::vector<int> filters_of(const fs::path& file, const char* dataset) {
  std::vector<int> out;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(f, dataset, H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(ds);
  for (int i = 0; i < H5Pget_nfilters(dcpl); ++i) {
    unsigned flags = 0;
    unsigned cd[8];
    size_t nelem = 8;
    out.push_back(H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nelem, cd, 0, nullptr, nullptr));
  }
  H5Pclose(dcpl);
  H5Dclose(ds);
  H5Fclose(f);
  return out;
}

/// Three kinds of column data whose best filters differ: random 64-bit values (nothing compresses
/// them), doubles with few distinct values (as metrics are: plain deflate finds the repeats) and
/// timestamps with small deltas (shuffle + deflate).
struct FilterSamples {
  std::vector<uint64_t> random;
  std::vector<double> three_decimals;
  std::vector<int64_t> sorted;
  explicit FilterSamples(size_t rows) : random(rows), three_decimals(rows), sorted(rows) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < rows; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      random[i] = x;
      three_decimals[i] = static_cast<double>(x % 3000) / 1000.0;
      sorted[i] = 1736408883704643000 + static_cast<int64_t>(i) * 1000 + static_cast<int64_t>(x % 500);
    }
  }
};

TEST(H5Columns, AdaptiveFiltersPickWhatTheSampleCompressesBest) {
  ScratchDir dir("store");
  const FilterSamples samples(300'000);
  const auto& [random, three_decimals, sorted] = samples;
  const auto write = [&](const fs::path& file, const WriterOptions& opt) {
    auto w = H5Writer::create(file, opt);
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->write_column("/random", random));
    ASCPROF_ASSERT_OK(w->write_column("/metric", three_decimals));
    ASCPROF_ASSERT_OK(w->write_column("/start_ns", sorted));
    ASCPROF_ASSERT_OK(w->write_column("/small", std::vector<uint64_t>(random.begin(), random.begin() + 100)));
    ASCPROF_ASSERT_OK(w->commit("test"));
  };
  const fs::path adaptive = dir / "adaptive.h5";
  write(adaptive, WriterOptions{});
  EXPECT_EQ(filters_of(adaptive, "/random"), std::vector<int>{});  // incompressible: stored raw
  EXPECT_EQ(filters_of(adaptive, "/metric"), std::vector<int>{H5Z_FILTER_DEFLATE});  // shuffle would hurt
  EXPECT_EQ(filters_of(adaptive, "/start_ns"), (std::vector<int>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  EXPECT_EQ(filters_of(adaptive, "/small"), std::vector<int>{});  // <= 2 KiB: compact, in its object header
  auto r = H5Reader::open(adaptive);
  ASCPROF_ASSERT_OK(r);
  EXPECT_EQ(r->read_column<uint64_t>("/random").value(), random);
  EXPECT_EQ(r->read_column<double>("/metric").value(), three_decimals);

  WriterOptions fixed;
  fixed.adaptive_filters = false;
  const fs::path fixed_file = dir / "fixed.h5";
  write(fixed_file, fixed);
  EXPECT_EQ(filters_of(fixed_file, "/random"), (std::vector<int>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  EXPECT_EQ(filters_of(fixed_file, "/metric"), (std::vector<int>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));

  WriterOptions none;
  none.deflate_level = 0;
  const fs::path raw_file = dir / "raw.h5";
  write(raw_file, none);
  EXPECT_EQ(filters_of(raw_file, "/start_ns"), std::vector<int>{});
}

/// Storage layout of a dataset (H5D_COMPACT, H5D_CHUNKED, ...).
H5D_layout_t layout_of(const fs::path& file, const char* dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(f, dataset, H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(ds);
  const H5D_layout_t l = H5Pget_layout(dcpl);
  H5Pclose(dcpl);
  H5Dclose(ds);
  H5Fclose(f);
  return l;
}

// A table's filters come from its first chunk: shuffle where it helps (integers with small
// deltas), plain deflate where shuffle scatters the repeats (doubles with few distinct values),
// none where nothing compresses; a table of at most 2 KiB is compact. Every value reads back.
TEST(H5Columns, TablesPickFiltersFromTheirFirstChunk) {
  ScratchDir dir("store");
  constexpr size_t kRows = 200'000;
  const FilterSamples samples(kRows);
  const auto& [random, three_decimals, sorted] = samples;
  const fs::path file = dir / "tables.h5";
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(TableWriter(w, "/random", kRows).column("v", random).finish());
    ASCPROF_ASSERT_OK(TableWriter(w, "/metric", kRows).column("v", three_decimals).finish());
    ASCPROF_ASSERT_OK(TableWriter(w, "/start", kRows).column("v", sorted).finish());
    const std::vector<uint64_t> few(random.begin(), random.begin() + 100);
    ASCPROF_ASSERT_OK(TableWriter(w, "/small", few.size()).column("v", few).finish());
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  EXPECT_EQ(filters_of(file, "/random"), std::vector<int>{});
  EXPECT_EQ(filters_of(file, "/metric"), std::vector<int>{H5Z_FILTER_DEFLATE});
  EXPECT_EQ(filters_of(file, "/start"), (std::vector<int>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  EXPECT_EQ(layout_of(file, "/small"), H5D_COMPACT);
  EXPECT_EQ(layout_of(file, "/start"), H5D_CHUNKED);
  H5Reader r = open_reader(file);
  EXPECT_EQ(r.read_column<uint64_t>("/random/v").value(), random);
  EXPECT_EQ(r.read_column<double>("/metric/v").value(), three_decimals);
  EXPECT_EQ(r.read_column<int64_t>("/start/v").value(), sorted);
  EXPECT_EQ(r.read_column<uint64_t>("/small/v").value(), std::vector<uint64_t>(random.begin(), random.begin() + 100));
}

// Borrowed values (TableWriter::Values::kBorrow, for a rank's model tables) give the same table as
// copied ones.
TEST(H5Columns, BorrowedAndCopiedColumnsWriteTheSameTable) {
  ScratchDir dir("store");
  std::vector<int64_t> start(150'000);
  std::vector<StrId> name(start.size());
  for (size_t i = 0; i < start.size(); ++i) {
    start[i] = 1736408883704643000 + static_cast<int64_t>(i * 977);
    name[i] = static_cast<StrId>(i % 3);
  }
  for (const auto values : {TableWriter::Values::kCopy, TableWriter::Values::kBorrow}) {
    const fs::path file = dir / (values == TableWriter::Values::kCopy ? "copy.h5" : "borrow.h5");
    {
      H5Writer w = make_writer(file);
      ASCPROF_ASSERT_OK(TableWriter(w, "/t", start.size(), values)
                            .column("start_ns", start)
                            .id_column("name", name, "/nowhere")
                            .string_column("label", std::vector<std::string>(start.size(), "x"))
                            .finish());
      ASCPROF_ASSERT_OK(w.commit("test"));
    }
    H5Reader r = open_reader(file);
    EXPECT_EQ(r.read_column<int64_t>("/t/start_ns").value(), start);
    EXPECT_EQ(r.read_column<uint32_t>("/t/name").value(), name);
    EXPECT_EQ(r.read_strings("/t/label").value(), std::vector<std::string>(start.size(), "x"));
  }
}

// String columns: fixed-width (deflated with the record) unless padding to the longest row would
// more than quadruple a large column; then variable-length. Both read back exactly, also through
// read_table, and invalid UTF-8 is repaired and counted.
TEST(H5Columns, StringColumnsAreFixedWidthUnlessPaddingWouldBalloon) {
  ScratchDir dir("store");
  const fs::path file = dir / "text.h5";
  std::vector<std::string> even, skewed;
  for (size_t i = 0; i < 5000; ++i) {
    even.push_back("{\"op\":\"MatMul\",\"n\":" + std::to_string(i) + "}");
    skewed.push_back(i == 7 ? std::string(100'000, 'x') : "r" + std::to_string(i));
  }
  even[3] = std::string("bad \xff byte");
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(TableWriter(w, "/t", even.size())
                          .string_column("even", even)
                          .string_column("skewed", skewed)
                          .string_column("blank", std::vector<std::string>(even.size()))
                          .finish());
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(f, "/t", H5P_DEFAULT);
  const hid_t type = H5Dget_type(ds);
  const hid_t even_type = H5Tget_member_type(type, 0), skewed_type = H5Tget_member_type(type, 1);
  EXPECT_EQ(H5Tis_variable_str(even_type), 0);
  EXPECT_GT(H5Tis_variable_str(skewed_type), 0);
  H5Tclose(even_type);
  H5Tclose(skewed_type);
  H5Tclose(type);
  H5Dclose(ds);
  H5Fclose(f);
  H5Reader r = open_reader(file);
  std::vector<std::string> want = even;
  want[3] = "bad \xEF\xBF\xBD byte";  // U+FFFD
  EXPECT_EQ(r.read_strings("/t/even").value(), want);
  EXPECT_EQ(r.read_strings("/t/skewed").value(), skewed);
  EXPECT_EQ(r.read_strings("/t/blank").value(), std::vector<std::string>(even.size()));
  EXPECT_EQ(r.int_attr("/t", "repaired_strings").value(), 1);
  auto whole = r.read_table("/t");
  ASCPROF_ASSERT_OK(whole);
  EXPECT_EQ(whole->strings("even").value(), want);
  EXPECT_EQ(whole->strings("skewed").value(), skewed);
  EXPECT_EQ(whole->column<int64_t>("even").status().code(), ErrorCode::kSchema);
  EXPECT_EQ(whole->strings("nope").status().code(), ErrorCode::kSchema);
}

TEST(H5Columns, ReadingWithTheWrongTypeIsASchemaError) {
  ScratchDir dir("store");
  const fs::path file = dir / "types.h5";
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_column("/c/i64", std::vector<int64_t>{1, 2}));
    ASCPROF_ASSERT_OK(w.write_string_column("/c/s", std::vector<std::string>{"a"}));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  auto as32 = r.read_column<int32_t>("/c/i64");
  ASSERT_FALSE(as32.ok());
  EXPECT_EQ(as32.status().code(), ErrorCode::kSchema);
  EXPECT_NE(as32.status().message().find("read dataset /c/i64: element type is int64, expected int32"),
            std::string::npos)
      << as32.status().message();
  auto asu64 = r.read_column<uint64_t>("/c/i64");
  EXPECT_FALSE(asu64.ok());
  auto s_as_num = r.read_column<double>("/c/s");
  ASSERT_FALSE(s_as_num.ok());
  EXPECT_NE(s_as_num.status().message().find("element type is string"), std::string::npos);
  auto num_as_s = r.read_strings("/c/i64");
  ASSERT_FALSE(num_as_s.ok());
  EXPECT_NE(num_as_s.status().message().find("expected string"), std::string::npos);
  auto missing = r.read_column<int64_t>("/c/none");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_NE(missing.status().message().find(file.string() + ":read dataset /c/none: "), std::string::npos)
      << missing.status().message();
}

StringPool hostile_pool() {
  StringPool pool;
  pool.intern("aclnnMatmul_MatMulCommon_MatMulV2");
  pool.intern("矩阵乘法_融合算子");                      // Chinese kernel name
  pool.intern("🚀 rocket_kernel 🔥");                    // emoji (4-byte UTF-8)
  pool.intern("say \"hi\", 'there'");                    // quotes and comma
  pool.intern("line1\nline2\r\n\tindented");             // newlines and tabs
  pool.intern("back\\slash and trailing space ");
  pool.intern("\"32,3,224,224;32,1,224,224,8\"");        // a quoted shape list as in kernel_details
  pool.intern(std::string(10000, 'x') + "末尾");           // long string
  return pool;
}

TEST(H5Strings, StringTableRoundTripsUtf8AndSpecialCharacters) {
  ScratchDir dir("store");
  const fs::path file = dir / "strings.h5";
  StringPool pool = hostile_pool();
  const std::vector<StrId> ids{0, 1, 2, 3, 4, 5, 6, 7, 2, 2, 0};
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_string_table("/strings", pool));
    ASCPROF_ASSERT_OK(w.write_id_column("/kernels/name", ids));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  auto strs = r.read_strings("/strings");
  ASSERT_TRUE(strs.ok()) << strs.status().to_string();
  ASSERT_EQ(strs->size(), pool.size());
  for (size_t i = 0; i < pool.size(); ++i) EXPECT_EQ((*strs)[i], pool.view(static_cast<StrId>(i))) << i;
  EXPECT_FALSE(r.has_attr("/strings", "repaired_strings"));

  StringPool back;
  ASCPROF_ASSERT_OK(r.read_string_pool("/strings", &back));
  ASSERT_EQ(back.size(), pool.size());
  for (size_t i = 0; i < pool.size(); ++i) EXPECT_EQ(back.view(static_cast<StrId>(i)), pool.view(static_cast<StrId>(i)));

  auto got_ids = r.read_column<uint32_t>("/kernels/name");
  ASSERT_TRUE(got_ids.ok());
  EXPECT_EQ(*got_ids, ids);
  auto table = r.string_attr("/kernels/name", "strings");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(*table, "/strings");

  StringPool not_fresh;
  not_fresh.intern("x");
  Status st = r.read_string_pool("/strings", &not_fresh);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
}

TEST(H5Strings, VlenStringColumnRoundTrips) {
  ScratchDir dir("store");
  const fs::path file = dir / "scol.h5";
  StringPool pool = hostile_pool();
  std::vector<std::string> values;
  for (size_t i = 0; i < pool.size(); ++i) values.emplace_back(pool.view(static_cast<StrId>(i)));
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_string_column("/s", values));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  auto got = r.read_strings("/s");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, values);
}

TEST(H5Strings, InvalidUtf8AndNulAreRepairedAndCounted) {
  ScratchDir dir("store");
  const fs::path file = dir / "bad_utf8.h5";
  const std::vector<std::string_view> values{
      std::string_view("ok"), std::string_view("bad\xff" "byte"), std::string_view("nul\0inside", 10),
      std::string_view("\xe4\xb8"),  // truncated 3-byte sequence
      std::string_view("\xed\xa0\x80"),  // UTF-16 surrogate encoded in UTF-8: invalid
      std::string_view("中文")};
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_string_column("/s", values));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  auto got = r.read_strings("/s");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 6u);
  EXPECT_EQ((*got)[0], "ok");
  EXPECT_EQ((*got)[1], "bad\xEF\xBF\xBD" "byte");
  EXPECT_EQ((*got)[2], "nul\xEF\xBF\xBDinside");
  EXPECT_EQ((*got)[3], "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ((*got)[4], "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ((*got)[5], "中文");
  auto repaired = r.int_attr("/s", "repaired_strings");
  ASSERT_TRUE(repaired.ok());
  EXPECT_EQ(*repaired, 4);
}

TEST(H5Strings, IdOutsideTheStringTableIsAnInternalErrorAndBlocksCommit) {
  ScratchDir dir("store");
  const fs::path file = dir / "ids.h5";
  StringPool pool;
  pool.intern("a");
  H5Writer w = make_writer(file);
  ASCPROF_ASSERT_OK(w.write_string_table("/strings", pool));
  const std::vector<StrId> ids{0, 1, 2};
  Status st = w.write_id_column("/t/name", ids);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("string id 2 is not in /strings (2 strings)"), std::string::npos) << st.message();
  Status c = w.commit("test");
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.message().find("commit refused"), std::string::npos);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(w.temp_path()));
}

TEST(H5Strings, RealKernelDetailsLinesRoundTrip) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path csv =
      ascprof::testing::real_fixtures_dir() / "e2-cnn-level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  std::ifstream in(csv, std::ios::binary);
  ASSERT_TRUE(in.good()) << csv;
  StringPool pool;
  std::string line;
  size_t lines = 0;
  // Whole CSV lines are a realistic torture set: quotes, commas, shapes, long operator names.
  while (std::getline(in, line)) {
    pool.intern(line);
    for (size_t b = 0, e; b < line.size(); b = e + 1) {
      e = line.find(',', b);
      if (e == std::string::npos) e = line.size();
      pool.intern(std::string_view(line).substr(b, e - b));
    }
    ++lines;
  }
  ASSERT_EQ(lines, 192u);  // header + 191 rows
  ScratchDir dir("store");
  const fs::path file = dir / "real.h5";
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_string_table("/strings", pool));
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  StringPool back;
  ASCPROF_ASSERT_OK(r.read_string_pool("/strings", &back));
  ASSERT_EQ(back.size(), pool.size());
  for (size_t i = 0; i < pool.size(); ++i) ASSERT_EQ(back.view(static_cast<StrId>(i)), pool.view(static_cast<StrId>(i)));
}

TEST(H5Attributes, EveryKindRoundTripsOnFileGroupAndDataset) {
  ScratchDir dir("store");
  const fs::path file = dir / "attrs.h5";
  const std::vector<std::string> names{"start_ns", "名前", "🙂", ""};
  const std::vector<int64_t> ints{std::numeric_limits<int64_t>::min(), 0, 42};
  const std::vector<uint64_t> uints{std::numeric_limits<uint64_t>::max(), 7};
  const std::vector<double> dbls{0.5, -1e300};
  {
    H5Writer w = make_writer(file);
    Status st = w.set_int_attr("/missing", "x", 1);
    EXPECT_EQ(st.code(), ErrorCode::kIo);
    EXPECT_NE(st.message().find("write attribute /missing@x"), std::string::npos) << st.message();
    EXPECT_FALSE(w.commit("attrs").ok());  // a failed write blocks publishing
  }
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.create_group("/g/sub"));
    ASCPROF_ASSERT_OK(w.create_group("/g/sub"));  // idempotent
    ASCPROF_ASSERT_OK(w.write_column("/g/ds", std::vector<int32_t>{1}));
    for (const char* obj : {"/", "/g/sub", "/g/ds"}) {
      ASCPROF_ASSERT_OK(w.set_string_attr(obj, "s", "时间 \"quoted\"\nnext"));
      ASCPROF_ASSERT_OK(w.set_int_attr(obj, "i", -5));
      ASCPROF_ASSERT_OK(w.set_uint_attr(obj, "u", std::numeric_limits<uint64_t>::max()));
      ASCPROF_ASSERT_OK(w.set_double_attr(obj, "d", 2.25));
      ASCPROF_ASSERT_OK(w.set_string_array_attr(obj, "sa", names));
      ASCPROF_ASSERT_OK(w.set_string_array_attr(obj, "empty", std::span<const std::string>{}));
      ASCPROF_ASSERT_OK(w.set_int_array_attr(obj, "ia", ints));
      ASCPROF_ASSERT_OK(w.set_uint_array_attr(obj, "ua", uints));
      ASCPROF_ASSERT_OK(w.set_double_array_attr(obj, "da", dbls));
    }
    ASCPROF_ASSERT_OK(w.set_int_attr("/", "i", 99));
    ASCPROF_ASSERT_OK(w.commit("attrs"));
  }
  H5Reader r = open_reader(file);
  for (const char* obj : {"/", "/g/sub", "/g/ds"}) {
    SCOPED_TRACE(obj);
    EXPECT_EQ(r.string_attr(obj, "s").value(), "时间 \"quoted\"\nnext");
    EXPECT_EQ(r.int_attr(obj, "i").value(), std::string(obj) == "/" ? 99 : -5);
    EXPECT_EQ(r.uint_attr(obj, "u").value(), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(r.double_attr(obj, "d").value(), 2.25);
    EXPECT_EQ(r.double_attr(obj, "i").value(), std::string(obj) == "/" ? 99.0 : -5.0);  // int widens to double
    EXPECT_EQ(r.string_array_attr(obj, "sa").value(), names);
    EXPECT_TRUE(r.string_array_attr(obj, "empty").value().empty());
    EXPECT_EQ(r.int_array_attr(obj, "ia").value(), ints);
    EXPECT_EQ(r.uint_array_attr(obj, "ua").value(), uints);
    EXPECT_EQ(r.double_array_attr(obj, "da").value(), dbls);
  }
  auto missing = r.int_attr("/", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kSchema);
  EXPECT_NE(missing.status().message().find("read attribute /@nope: no such attribute"), std::string::npos)
      << missing.status().message();
  auto wrong = r.int_attr("/", "s");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kSchema);
  auto not_scalar = r.int_attr("/", "ia");
  ASSERT_FALSE(not_scalar.ok());
  EXPECT_NE(not_scalar.status().message().find("expected a single value, found 3"), std::string::npos);
  auto dbl_as_int = r.int_attr("/", "d");
  EXPECT_FALSE(dbl_as_int.ok());
  EXPECT_FALSE(r.string_attr("/", "sa").ok());  // 4 strings, not one
  EXPECT_EQ(r.string_attr("/", "stage").value(), "attrs");
}

TEST(H5Tables, RowCountMismatchIsAnInternalErrorAndNothingIsPublished) {
  ScratchDir dir("store");
  const fs::path file = dir / "table.h5";
  {
    H5Writer w = make_writer(file);
    TableWriter t(w, "/kernels", 3);
    ASCPROF_ASSERT_OK(t.column("a", std::vector<int64_t>{1, 2, 3}).status());
    const Status bad = t.column("b", std::vector<int32_t>{1, 2}).status();
    EXPECT_EQ(bad.code(), ErrorCode::kInternal);
    EXPECT_EQ(bad.message(), file.string() + ":table /kernels: column 'b' has 2 rows, expected 3");
    const std::vector<StrId> ids{0, 0, 0};
    t.id_column("c", ids);  // skipped: the table already failed
    Status fin = t.finish();
    EXPECT_EQ(fin.message(), bad.message());
    EXPECT_FALSE(w.commit("test").ok());
  }
  EXPECT_FALSE(fs::exists(file));
}

TEST(H5Tables, DuplicateAndBadColumnNamesAreInternalErrors) {
  ScratchDir dir("store");
  H5Writer w = make_writer(dir / "names.h5");
  {
    TableWriter t(w, "/t", 1);
    t.column("a", std::vector<int64_t>{1}).column("a", std::vector<int64_t>{2});
    EXPECT_EQ(t.status().code(), ErrorCode::kInternal);
    EXPECT_NE(t.status().message().find("column 'a' written twice"), std::string::npos);
  }
  {
    TableWriter t(w, "/u", 1);
    t.column("x/y", std::vector<int64_t>{1});
    EXPECT_NE(t.finish().message().find("bad column name 'x/y'"), std::string::npos);
  }
  {
    TableWriter t(w, "/v", 1);
    t.string_column("", std::vector<std::string>{"s"});
    EXPECT_EQ(t.finish().code(), ErrorCode::kInternal);
  }
  EXPECT_EQ(w.status().code(), ErrorCode::kInternal);  // the writer will not publish
}

TEST(H5Tables, ColumnsAttributeKeepsWriteOrder) {
  ScratchDir dir("store");
  const fs::path file = dir / "table.h5";
  StringPool pool;
  const std::vector<StrId> names{pool.intern("MatMul"), pool.intern("Add")};
  const std::vector<std::string> kinds{"compute", "vector"};
  {
    H5Writer w = make_writer(file);
    ASCPROF_ASSERT_OK(w.write_string_table("/strings", pool));
    TableWriter t(w, "kernels/", 2);
    ASCPROF_ASSERT_OK(t.column("start_ns", std::vector<int64_t>{10, 20}).status());
    ASCPROF_ASSERT_OK(t.id_column("name", names).status());
    ASCPROF_ASSERT_OK(t.string_column("kind", kinds).status());
    ASCPROF_ASSERT_OK(t.column("dur", std::vector<double>{1.5, 2.5}).status());
    ASCPROF_ASSERT_OK(t.finish());
    EXPECT_EQ(t.group(), "/kernels");
    ASCPROF_ASSERT_OK(w.commit("test"));
  }
  H5Reader r = open_reader(file);
  EXPECT_EQ(r.string_array_attr("/kernels", "columns").value(),
            (std::vector<std::string>{"start_ns", "name", "kind", "dur"}));
  EXPECT_EQ(r.int_attr("/kernels", "row_count").value(), 2);
  EXPECT_EQ(r.read_strings("/kernels/kind").value(), kinds);
  EXPECT_EQ(r.read_column<uint32_t>("/kernels/name").value(), (std::vector<uint32_t>{1, 2}));
}

TEST(H5Errors, DuplicateDatasetNamesThePathTheOperationAndTheHdf5Reason) {
  ScratchDir dir("store");
  const fs::path file = dir / "dup.h5";
  H5Writer w = make_writer(file);
  ASCPROF_ASSERT_OK(w.write_column("/events/start_ns", std::vector<int64_t>{1}));
  ::testing::internal::CaptureStderr();
  Status st = w.write_column("/events/start_ns", std::vector<int64_t>{1});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(err.empty()) << "HDF5 printed its error stack:\n" << err;
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_EQ(st.message().rfind(file.string() + ":create dataset /events/start_ns: ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("already exists"), std::string::npos) << st.message();
  EXPECT_EQ(w.status().code(), ErrorCode::kIo);
  Status c = w.commit("test");
  EXPECT_NE(c.message().find("commit refused after an earlier error"), std::string::npos);
  EXPECT_EQ(w.write_column("/x", std::vector<int64_t>{1}).code(), ErrorCode::kInternal);  // closed
}

}  // namespace
}  // namespace ascprof::store
