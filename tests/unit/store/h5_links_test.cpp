// analysis.h5-style files of external links to per-rank files.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <string>
#include <vector>

#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

void write_rank(const fs::path& file, int64_t base) {
  WriterOptions opt;
  opt.create_parent_dirs = true;
  auto w = H5Writer::create(file, opt);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  TableWriter t(*w, "/kernels", 3);
  ASCPROF_ASSERT_OK(t.column("start_ns", std::vector<int64_t>{base, base + 1, base + 2}).status());
  ASCPROF_ASSERT_OK(t.finish());
  ASCPROF_ASSERT_OK(w->commit("normalize"));
}

TEST(H5Links, LinkFileResolvesRelativeTargetsAfterTheFolderMoves) {
  ScratchDir dir("store");
  const fs::path root = dir / "out" / "capture-a";
  write_rank(root / "ranks" / "0.h5", 100);
  write_rank(root / "ranks" / "13.h5", 1300);
  const std::vector<ExternalLink> links{
      {"/ranks/0", (root / "ranks" / "0.h5").string(), "/"},  // absolute: stored relative
      {"/ranks/13", "ranks/13.h5", "/"},
      {"/kernels_13", "ranks/13.h5", "/kernels"},
  };
  ASCPROF_ASSERT_OK(write_link_file(root / "analysis.h5", links));

  // Move the whole output folder; HDF5 must find the targets next to analysis.h5, not via cwd.
  const fs::path moved = dir / "elsewhere" / "capture-a";
  fs::create_directories(moved.parent_path());
  fs::rename(root, moved);

  auto r = H5Reader::open(moved / "analysis.h5");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->list("/ranks").value(), (std::vector<std::string>{"0", "13"}));
  EXPECT_EQ(r->kind("/ranks/0"), ObjectKind::kGroup);
  auto c0 = r->read_column<int64_t>("/ranks/0/kernels/start_ns");
  ASSERT_TRUE(c0.ok()) << c0.status().to_string();
  EXPECT_EQ(*c0, (std::vector<int64_t>{100, 101, 102}));
  auto c13 = r->read_column<int64_t>("/kernels_13/start_ns");
  ASSERT_TRUE(c13.ok()) << c13.status().to_string();
  EXPECT_EQ(*c13, (std::vector<int64_t>{1300, 1301, 1302}));
  EXPECT_EQ(r->int_attr("/ranks/13/kernels", "row_count").value(), 3);
  EXPECT_EQ(r->string_attr("/ranks/13", "stage").value(), "normalize");

  auto info = read_checkpoint_info(moved / "analysis.h5");
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->stage, "links");
}

TEST(H5Links, AbsoluteTargetsAreStoredRelativeToTheLinkFile) {
  ScratchDir dir("store");
  write_rank(dir / "ranks" / "3.h5", 300);
  {
    auto w = H5Writer::create(dir / "analysis.h5");
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->create_external_link("/ranks/3", (dir / "ranks" / "3.h5").string(), "/"));
    ASCPROF_ASSERT_OK(w->commit("normalize"));
  }
  const hid_t f = H5Fopen((dir / "analysis.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5L_info_t info;
  ASSERT_GE(H5Lget_info(f, "/ranks/3", &info, H5P_DEFAULT), 0);
  EXPECT_EQ(info.type, H5L_TYPE_EXTERNAL);
  std::vector<char> buf(info.u.val_size);
  ASSERT_GE(H5Lget_val(f, "/ranks/3", buf.data(), buf.size(), H5P_DEFAULT), 0);
  const char* target_file = nullptr;
  const char* target_obj = nullptr;
  ASSERT_GE(H5Lunpack_elink_val(buf.data(), buf.size(), nullptr, &target_file, &target_obj), 0);
  EXPECT_STREQ(target_file, "ranks/3.h5");
  EXPECT_STREQ(target_obj, "/");
  H5Fclose(f);
}

TEST(H5Links, DanglingLinkIsMissingNotACrash) {
  ScratchDir dir("store");
  const std::vector<ExternalLink> links{{"/ranks/7", "ranks/7.h5", "/"}};
  ASCPROF_ASSERT_OK(write_link_file(dir / "analysis.h5", links));
  auto r = H5Reader::open(dir / "analysis.h5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind("/ranks/7"), ObjectKind::kMissing);
  EXPECT_EQ(r->kind("/ranks/7/kernels/start_ns"), ObjectKind::kMissing);
  auto col = r->read_column<int64_t>("/ranks/7/kernels/start_ns");
  ASSERT_FALSE(col.ok());
  EXPECT_EQ(col.status().code(), ErrorCode::kIo);
  EXPECT_NE(col.status().message().find("read dataset /ranks/7/kernels/start_ns"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::store
