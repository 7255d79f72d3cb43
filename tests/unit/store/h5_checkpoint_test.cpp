// Atomic publishing, completion markers, damaged files and path errors.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

std::vector<int64_t> iota_column(size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i * 7919 % 100003);
  return v;
}

Status write_checkpoint(const fs::path& file, std::string_view stage, size_t rows = 1000) {
  ASCPROF_ASSIGN_OR_RETURN(H5Writer w, H5Writer::create(file));
  ASCPROF_RETURN_IF_ERROR(w.write_column("/events/start_ns", iota_column(rows)));
  return w.commit(stage);
}

TEST(H5Atomic, WriterWithoutCommitLeavesNeitherFinalNorTempFile) {
  ScratchDir dir("store");
  const fs::path file = dir / "rank0.h5";
  fs::path temp;
  {
    auto w = H5Writer::create(file);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    temp = w->temp_path();
    EXPECT_EQ(temp.parent_path(), file.parent_path());  // same folder: rename is atomic
    ASCPROF_ASSERT_OK(w->write_column("/events/start_ns", iota_column(1000)));
    EXPECT_TRUE(fs::exists(temp));
    EXPECT_FALSE(fs::exists(file));
  }  // destroyed without commit
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(H5Atomic, CommitPublishesAndReplacesAnOldFileOnlyAtTheEnd) {
  ScratchDir dir("store");
  const fs::path file = dir / "rank0.h5";
  ASCPROF_ASSERT_OK(write_checkpoint(file, "normalize", 10));
  {
    auto w = H5Writer::create(file);
    ASSERT_TRUE(w.ok());
    ASCPROF_ASSERT_OK(w->write_column("/events/start_ns", iota_column(20)));
    // Until commit, readers still see the old complete file.
    auto info = read_checkpoint_info(file);
    ASSERT_TRUE(info.ok()) << info.status().to_string();
    EXPECT_EQ(info->stage, "normalize");
    ASCPROF_ASSERT_OK(w->commit("segment"));
    EXPECT_FALSE(fs::exists(w->temp_path()));
    // A committed writer is closed: further calls are internal errors, not crashes.
    EXPECT_EQ(w->commit("again").code(), ErrorCode::kInternal);
  }
  auto info = read_checkpoint_info(file);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->stage, "segment");
  auto r = H5Reader::open(file);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->column_length("/events/start_ns").value(), 20u);
}

TEST(H5Atomic, MovedWriterKeepsOwnershipOfTheTempFile) {
  ScratchDir dir("store");
  const fs::path file = dir / "moved.h5";
  auto w = H5Writer::create(file);
  ASSERT_TRUE(w.ok());
  H5Writer a = std::move(w).value();
  H5Writer b = std::move(a);
  ASCPROF_ASSERT_OK(b.write_column("/x", iota_column(3)));
  ASCPROF_ASSERT_OK(b.commit("s"));
  EXPECT_TRUE(fs::exists(file));
}

TEST(H5Checkpoint, InfoRoundTripsWithFingerprints) {
  ScratchDir dir("store");
  const fs::path input = dir / "kernel_details.csv";
  ascprof::testing::write_text(input, "Name,Start Time(us)\nMatMul,1.0\n");
  auto fp = fingerprint_file(input);
  ASSERT_TRUE(fp.ok());
  const fs::path file = dir / "ranks" / "0.h5";
  {
    WriterOptions opt;
    opt.create_parent_dirs = true;
    auto w = H5Writer::create(file, opt);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    const std::vector<Fingerprint> inputs{*fp, Fingerprint{"/other/trace_view.json", 5, -3, 0xffffffffffffffffull}};
    ASCPROF_ASSERT_OK(w->write_fingerprints("/", inputs));
    ASCPROF_ASSERT_OK(w->commit("classify", 7));
  }
  auto info = read_checkpoint_info(file);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->stage, "classify");
  EXPECT_EQ(info->schema_version, 7);
  EXPECT_EQ(info->tool_version, tool_version());
  EXPECT_FALSE(info->tool_version.empty());
  ASSERT_EQ(info->inputs.size(), 2u);
  EXPECT_EQ(info->inputs[0], *fp);
  EXPECT_EQ(info->inputs[1].path, "/other/trace_view.json");
  EXPECT_EQ(info->inputs[1].mtime_ns, -3);
  EXPECT_EQ(info->inputs[1].prefix_hash, 0xffffffffffffffffull);
  auto r = H5Reader::open(file);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->int_attr("/", "complete").value(), 1);
}

TEST(H5Checkpoint, TruncatedFileIsNotAValidCheckpoint) {
  ScratchDir dir("store");
  const fs::path file = dir / "rank0.h5";
  ASCPROF_ASSERT_OK(write_checkpoint(file, "normalize", 200000));
  ASCPROF_ASSERT_OK(read_checkpoint_info(file));
  const auto size = fs::file_size(file);
  ASSERT_GT(size, 10000u);
  for (const uintmax_t keep : {size / 2, size - 1, uintmax_t{600}, uintmax_t{8}, uintmax_t{0}}) {
    SCOPED_TRACE("truncated to " + std::to_string(keep));
    const fs::path cut = dir / ("cut_" + std::to_string(keep) + ".h5");
    fs::copy_file(file, cut);
    fs::resize_file(cut, keep);
    ::testing::internal::CaptureStderr();
    auto info = read_checkpoint_info(cut);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(err.empty()) << err;
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), ErrorCode::kIo);
    EXPECT_NE(info.status().message().find("not a valid checkpoint"), std::string::npos) << info.status().message();
    EXPECT_NE(info.status().message().find(cut.string()), std::string::npos) << info.status().message();
    EXPECT_FALSE(H5Reader::open(cut).ok());
  }
}

TEST(H5Checkpoint, GarbageAndMissingFilesAreErrors) {
  ScratchDir dir("store");
  const fs::path garbage = dir / "garbage.h5";
  ascprof::testing::write_text(garbage, std::string(5000, '\x42'));
  auto g = read_checkpoint_info(garbage);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("not an HDF5 file"), std::string::npos) << g.status().message();

  auto m = read_checkpoint_info(dir / "absent.h5");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find((dir / "absent.h5").string() + ":checkpoint: not a valid checkpoint: no such file"), std::string::npos)
      << m.status().message();

  auto d = read_checkpoint_info(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not a regular file"), std::string::npos);
}

TEST(H5Checkpoint, FileWithoutCompletionMarkerIsRejected) {
  ScratchDir dir("store");
  const fs::path file = dir / "unfinished.h5";
  // What a crash between the last write and the marker would leave (if it were ever renamed).
  const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Fclose(f);
  auto info = read_checkpoint_info(file);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kSchema);
  EXPECT_NE(info.status().message().find("no 'complete' attribute"), std::string::npos) << info.status().message();
}

TEST(H5Paths, NonExistentFolderIsAClearErrorNamingThePath) {
  ScratchDir dir("store");
  const fs::path file = dir / "no" / "such" / "dir" / "rank0.h5";
  auto w = H5Writer::create(file);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), ErrorCode::kIo);
  EXPECT_EQ(w.status().message(),
            file.string() + ":create file: folder does not exist: " + file.parent_path().string());
  auto r = H5Reader::open(file);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), file.string() + ":open: folder does not exist: " + file.parent_path().string());
  EXPECT_FALSE(fs::exists(dir / "no"));

  WriterOptions opt;
  opt.create_parent_dirs = true;
  auto ok = H5Writer::create(file, opt);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASCPROF_ASSERT_OK(ok->commit("s"));
  EXPECT_TRUE(fs::exists(file));
}

TEST(H5Paths, Hdf5CreateFailureIsAnIoErrorWithTheHdf5Reason) {
  ScratchDir dir("store");
  const fs::path file = dir / "x.h5";
  // A folder squatting on the temporary name makes H5Fcreate itself fail (works even as root).
  fs::create_directories(ascprof::temp_sibling(file));
  ::testing::internal::CaptureStderr();
  auto w = H5Writer::create(file);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(err.empty()) << err;
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), ErrorCode::kIo);
  EXPECT_EQ(w.status().message().rfind(file.string() + ":create file: ", 0), 0u) << w.status().message();
  EXPECT_NE(w.status().message().find("unable to"), std::string::npos) << w.status().message();
  EXPECT_FALSE(fs::exists(file));
}

TEST(H5Update, AddsAndRemovesObjectsAtomically) {
  ScratchDir dir("store");
  const fs::path file = dir / "rank0.h5";
  ASCPROF_ASSERT_OK(write_checkpoint(file, "normalize", 100));
  {
    auto w = H5Writer::update(file);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    ASCPROF_ASSERT_OK(w->write_column("/segments/start_ns", iota_column(5)));
    ASCPROF_ASSERT_OK(w->remove("/events"));
    EXPECT_EQ(w->remove("/events").code(), ErrorCode::kIo);  // already gone
  }  // abandoned: the original is untouched
  {
    auto r = H5Reader::open(file);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->exists("/events/start_ns"));
    EXPECT_FALSE(r->exists("/segments"));
  }
  {
    auto w = H5Writer::update(file);
    ASSERT_TRUE(w.ok());
    ASCPROF_ASSERT_OK(w->write_column("/segments/start_ns", iota_column(5)));
    ASCPROF_ASSERT_OK(w->commit("segment"));
  }
  auto r = H5Reader::open(file);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->read_column<int64_t>("/events/start_ns").value(), iota_column(100));
  EXPECT_EQ(r->read_column<int64_t>("/segments/start_ns").value(), iota_column(5));
  EXPECT_EQ(read_checkpoint_info(file).value().stage, "segment");

  auto missing = H5Writer::update(dir / "absent.h5");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("update file: no such file"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::store
