// The part pack: a rank's row fragments in one file (store/part_pack.hpp).
#include "ascprof/store/part_pack.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "ascprof/common/files.hpp"
#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

// Interleaved sections, one bigger than a segment, one declared empty: each reads back whole and in
// order, and only the final file is left.
TEST(PartPack, InterleavedSectionsReadBackWholeAndInOrder) {
  ScratchDir dir("pack");
  const fs::path path = dir / "rank0.parts";
  std::string big, small;
  {
    PartPackWriter w;
    ASSERT_TRUE(w.open(path).ok());
    w.add("empty.csv", "");
    for (int i = 0; i < 600000; ++i) {  // ~8 MB: more than one segment
      const std::string line = "row " + std::to_string(i) + ",x\n";
      big += line;
      w.add("big.csv", line, 1);
      if (i % 1000 == 0) {
        small += line;
        w.add("small.csv", line, 1);
      }
    }
    ASSERT_TRUE(w.commit().ok());
  }
  ASSERT_GT(big.size(), PartPackWriter::kSegmentBytes);
  auto r = PartPackReader::open(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->has("empty.csv"));
  EXPECT_FALSE(r->has("missing.csv"));
  EXPECT_EQ(r->size("big.csv"), big.size());
  EXPECT_EQ(r->rows("big.csv"), 600000u);  // summed over its segments
  EXPECT_EQ(r->rows("small.csv"), 600u);
  EXPECT_EQ(r->rows("empty.csv"), 0u);
  EXPECT_EQ(*r->read("big.csv"), big);
  EXPECT_EQ(*r->read("small.csv"), small);
  EXPECT_EQ(*r->read("empty.csv"), "");
  std::string streamed;
  ASSERT_TRUE(r->stream("big.csv", 4096, [&](std::string_view c) {
                 EXPECT_LE(c.size(), 4096u);
                 streamed += c;
                 return true;
               }).ok());
  EXPECT_EQ(streamed, big);
  // the kernel-side copy appends the section at the file's position (an O_APPEND file, where
  // copy_file_range refuses, through a buffer)
  for (const int append : {0, O_APPEND}) {
    const fs::path copy = dir / "copy.csv";
    ascprof::testing::write_text(copy, "header\n");
    const int fd = ::open(copy.c_str(), O_WRONLY | append);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::lseek(fd, 0, SEEK_END), 7);
    EXPECT_TRUE(r->copy_to("big.csv", fd, copy).ok());
    EXPECT_TRUE(r->copy_to("empty.csv", fd, copy).ok());
    ::close(fd);
    const auto copied = read_file(copy);
    ASSERT_TRUE(copied.ok());
    EXPECT_TRUE(*copied == "header\n" + big) << "append " << append << ": " << copied->size() << " bytes";
    fs::remove(copy);
  }
  PartLineCursor cursor(*r, "small.csv");
  std::string line, lines;
  while (cursor.next(line)) lines += line + "\n";
  EXPECT_TRUE(cursor.status().ok());
  EXPECT_EQ(lines, small);
  const auto missing = r->read("missing.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kSchema);
  EXPECT_NE(missing.status().message().find("missing.csv"), std::string::npos);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path(), path);
  }
  EXPECT_EQ(files, 1);
}

// Sections are stored deflated unless declared raw; a deflated segment that does not inflate to its
// length (a bit flipped on disk) is an error naming the pack, whichever way it is read, never rows.
TEST(PartPack, SectionsAreDeflatedAndADamagedSegmentIsAnError) {
  ScratchDir dir("pack-zlib");
  const fs::path path = dir / "rank0.parts";
  std::string rows;
  for (int i = 0; i < 20000; ++i) rows += "evt_0_" + std::to_string(i) + ",rank0,aclnnMatmul_MatMulV3,MATMULV3,12.5\n";
  {
    PartPackWriter w;
    ASSERT_TRUE(w.open(path).ok());
    w.store_raw("lines");
    w.add("table.csv", rows, 20000);
    w.add("lines", rows, 20000);
    ASSERT_TRUE(w.commit().ok());
  }
  auto r = PartPackReader::open(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto table = r->section_segments("table.csv"), lines = r->section_segments("lines");
  ASSERT_EQ(table.size(), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(table[0].zlib);
  EXPECT_LT(table[0].length * 4, rows.size()) << "CSV rows deflate at least 4x";
  EXPECT_EQ(table[0].raw_length, rows.size());
  EXPECT_FALSE(lines[0].zlib);
  EXPECT_EQ(lines[0].length, rows.size());
  EXPECT_EQ(r->size("table.csv"), rows.size());
  EXPECT_EQ(*r->read("table.csv"), rows);
  std::string from_cursor, line;
  PartLineCursor cursor(*r, "table.csv");
  while (cursor.next(line)) from_cursor += line + "\n";
  EXPECT_EQ(from_cursor, rows);
  // a copy that skips the first byte (the structure files drop a leading '[' or ',')
  const fs::path copy = dir / "copy.csv";
  ascprof::testing::write_text(copy, "");
  {
    const int fd = ::open(copy.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(r->copy_to("table.csv", fd, copy, 1).ok());
    ::close(fd);
  }
  EXPECT_EQ(*read_file(copy), rows.substr(1));

  auto bytes = *read_file(path);
  bytes[static_cast<size_t>(table[0].offset + table[0].length / 2)] ^= 0x55;
  ascprof::testing::write_text(path, bytes);
  auto damaged = PartPackReader::open(path);
  ASSERT_TRUE(damaged.ok()) << "the index is intact: the pack opens";
  const auto whole = damaged->read("table.csv");
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().code(), ErrorCode::kParse);
  EXPECT_NE(whole.status().message().find(path.string()), std::string::npos) << whole.status().to_string();
  const int fd = ::open(copy.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  const Status copied = damaged->copy_to("table.csv", fd, copy);
  ::close(fd);
  EXPECT_EQ(copied.code(), ErrorCode::kParse) << copied.to_string();
  EXPECT_EQ(*damaged->read("lines"), rows);
}

// A root table assembled from section copies at offsets, in any order and split over any number
// of workers, is the concatenation; a pack whose section no longer has its planned length is an
// error naming the pack, never a shifted table.
TEST(PartPack, SectionCopiesAtOffsetsAssembleTheConcatenation) {
  ScratchDir dir("pack-copies");
  std::vector<fs::path> packs;
  std::string expected = "header\n";
  std::vector<SectionCopy> copies;
  std::vector<std::pair<std::string, std::string>> parts;  // (pack, section) in table order
  for (int rank = 0; rank < 5; ++rank) {
    const fs::path path = dir / ("rank" + std::to_string(rank) + ".parts");
    PartPackWriter w;
    ASSERT_TRUE(w.open(path).ok());
    w.store_raw("raw.csv");
    std::string a, b;
    for (int i = 0; i < 500 * (rank + 1); ++i) a += "r" + std::to_string(rank) + ",a," + std::to_string(i) + "\n";
    for (int i = 0; i < 50; ++i) b += "r" + std::to_string(rank) + ",b," + std::to_string(i) + "\n";
    w.add("zlib.csv", a, 500u * (rank + 1));
    w.add("raw.csv", b, 50);
    w.add("empty.csv", "");
    ASSERT_TRUE(w.commit().ok());
    packs.push_back(path);
  }
  // the table: every rank's zlib.csv, then every rank's raw.csv (as a root lists its sections)
  const fs::path table = dir / "table.csv";
  uint64_t at = expected.size();
  std::vector<std::vector<SectionCopy>> of_rank(packs.size());
  for (const char* section : {"zlib.csv", "raw.csv"})
    for (size_t r = 0; r < packs.size(); ++r) {
      auto pack = PartPackReader::open(packs[r]);
      ASSERT_TRUE(pack.ok());
      const std::string text = *pack->read(section);
      of_rank[r].push_back({packs[r].string(), section, table.string(), at, text.size()});
      at += text.size();
      expected += text;
    }
  for (auto& v : of_rank)
    for (auto& c : v) copies.push_back(c);
  for (const size_t workers : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
    ascprof::testing::write_text(table, "header\n");
    const auto bounds = split_section_copies(copies, workers);
    ASSERT_EQ(bounds.size(), workers + 1);
    EXPECT_EQ(bounds.front(), 0u);
    EXPECT_EQ(bounds.back(), copies.size());
    for (size_t k = 1; k < bounds.size(); ++k) {
      EXPECT_LE(bounds[k - 1], bounds[k]);
      if (bounds[k] > 0 && bounds[k] < copies.size()) {  // a boundary never splits a pack's run
        EXPECT_NE(copies[bounds[k] - 1].pack, copies[bounds[k]].pack);
      }
    }
    for (size_t k = workers; k-- > 0;)  // the last worker first: ranges land wherever they belong
      ASSERT_TRUE(run_section_copies(copies, bounds[k], bounds[k + 1]).ok());
    EXPECT_EQ(*read_file(table), expected) << workers << " workers";
    // the same split, each run on its own thread (a one-process run's runner)
    ascprof::testing::write_text(table, "header\n");
    ASSERT_TRUE(run_section_copies_on_threads(copies, static_cast<unsigned>(workers)).ok());
    EXPECT_EQ(*read_file(table), expected) << workers << " threads";
  }
  auto stale = copies;
  stale[3].length += 1;  // planned from a pack that has changed since
  const Status st = run_section_copies(stale, 0, stale.size());
  EXPECT_EQ(st.code(), ErrorCode::kParse);
  EXPECT_NE(st.message().find(stale[3].pack), std::string::npos) << st.to_string();
  const Status threaded = run_section_copies_on_threads(stale, 3);  // whichever thread meets it
  EXPECT_EQ(threaded.code(), ErrorCode::kParse);
  EXPECT_NE(threaded.message().find(stale[3].pack), std::string::npos) << threaded.to_string();
}

// A writer that never commits (an error or a SIGTERM on the way) leaves nothing behind.
TEST(PartPack, UncommittedWriterLeavesNoFile) {
  ScratchDir dir("pack-abandoned");
  {
    PartPackWriter w;
    ASSERT_TRUE(w.open(dir / "rank0.parts").ok());
    w.add("a.csv", "x\n");
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A folder that cannot be made (a file stands in its place) is an I/O error naming it, at open and
// again at commit.
TEST(PartPack, UnwritableFolderIsAnErrorNamingThePath) {
  ScratchDir dir("pack-nofolder");
  ascprof::testing::write_text(dir / "ranks", "a file, not a folder");
  PartPackWriter w;
  const Status st = w.open(dir / "ranks/rank0.parts");
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("ranks"), std::string::npos) << st.message();
  w.add("a.csv", "x\n");
  EXPECT_FALSE(w.commit().ok());
}

// Truncated, foreign, and index-damaged files are refused with kParse naming the file; nothing is
// read from them.
TEST(PartPack, DamagedFilesAreRefusedNamingTheFile) {
  ScratchDir dir("pack-damaged");
  const fs::path good = dir / "good.parts";
  {
    PartPackWriter w;
    ASSERT_TRUE(w.open(good).ok());
    w.store_raw("a.csv");
    w.add("a.csv", "hello\n", 1);
    ASSERT_TRUE(w.commit().ok());
  }
  const auto read = read_file(good);
  ASSERT_TRUE(read.ok());
  const std::string& bytes = *read;
  auto expect_refused = [&dir](const std::string& name, const std::string& content, const std::string& why) {
    const fs::path p = dir / name;
    ascprof::testing::write_text(p, content);
    auto r = PartPackReader::open(p);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), ErrorCode::kParse) << r.status().to_string();
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().to_string();
  };
  expect_refused("truncated.parts", bytes.substr(0, bytes.size() - 5), "no footer");
  expect_refused("empty.parts", "", "shorter than");
  expect_refused("foreign.parts", std::string(100, 'x'), "no header");
  std::string bad_index = bytes;
  bad_index.replace(bad_index.find("a.csv\t"), 6, "a.csv ");  // the index line loses its tab
  expect_refused("bad-index.parts", bad_index, "index line 1");
  std::string out_of_file = bytes;
  const size_t len_at = out_of_file.find("\t6\t1\traw\t6\n");
  ASSERT_NE(len_at, std::string::npos);
  out_of_file.replace(len_at, 11, "\t9\t1\traw\t9\n");  // a segment longer than the data
  expect_refused("out-of-file.parts", out_of_file, "segment out of the file");
  std::string impossible = bytes;
  impossible.replace(len_at, 11, "\t6\t1\traw\t7\n");  // a raw segment's lengths disagree
  expect_refused("impossible.parts", impossible, "raw length impossible");
  std::string old = bytes;
  old.replace(0, 20, "ascprof part pack 2\n");  // the layout before compressed segments
  expect_refused("old.parts", old, "older layout");
  auto gone = PartPackReader::open(dir / "absent.parts");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace ascprof::store
