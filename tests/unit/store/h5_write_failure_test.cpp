// A write that fails half way (a full disk, a quota, a file-size limit) must leave no HDF5 id open:
// before the fix, a dataset whose close could not flush stayed open in the library, the file close
// then failed too, and HDF5's exit handler crashed closing them (SIGSEGV in H5F__close_cb, issue 24).
// The disk is a real full file system: a 1 MiB tmpfs the test mounts (root only; skipped with a
// message elsewhere). Each case runs in a child process, so HDF5's exit handler runs there.
// The error text is checked under RLIMIT_FSIZE (writes past it fail with EFBIG once SIGXFSZ is
// ignored), which needs no mount.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ascprof/store/h5_writer.hpp"
#include "support/test_support.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
// HDF5 1.10.8 loses the chunk buffer of an H5Dwrite that fails on a full disk (160 KB here,
// allocated and dropped inside libhdf5): not ours to fix, and not what these tests look for.
// What would be ours, an HDF5 id left open, each test checks itself (H5Fget_obj_count).
#define IGNORE_HDF5_INTERNAL_LEAKS() __lsan_disable()
#else
#define IGNORE_HDF5_INTERNAL_LEAKS() (void)0
#endif

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

std::vector<double> noisy_column(size_t n) {  // does not compress, so it really needs the bytes
  std::vector<double> v(n);
  uint64_t x = 88172645463325252ull;
  for (auto& d : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    d = static_cast<double>(x) * 1e-9;
  }
  return v;
}

void limit_file_size(rlim_t bytes) {
  signal(SIGXFSZ, SIG_IGN);
  const rlimit r{bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &r);
}

// A small tmpfs mounted on a fresh folder, unmounted at the end; mounted() false where this
// process may not mount (not root, or a container without the capability).
class SmallTmpfs {
 public:
  SmallTmpfs(const fs::path& at, const char* size) : at_(at) {
    fs::create_directories(at_);
    mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  fs::path at_;
  bool mounted_ = false;
};

// Runs in the child: exits 0 only when the failure is reported, nothing stays open and no temp
// file remains; then exit() runs HDF5's library shutdown, which is where the crash was.
[[noreturn]] void fill_the_disk(const fs::path& file, size_t rows_per_column) {
  IGNORE_HDF5_INTERNAL_LEAKS();
  {
    auto w = H5Writer::create(file);
    if (!w.ok()) std::_Exit(10);
    const fs::path temp = w->temp_path();
    // many datasets: some fit, so the library holds dirty objects when the disk is full
    Status st;
    for (int i = 0; i < 200 && st.ok(); ++i) st = w->write_column("/t/c" + std::to_string(i), noisy_column(rows_per_column));
    const Status committed = w->commit("normalize");
    if (committed.ok()) std::_Exit(11);
    if (committed.message().find("No space left on device") == std::string::npos) std::_Exit(12);
    if (committed.message().find('\n') != std::string::npos) std::_Exit(13);  // one readable line
    if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) std::_Exit(14);
    if (fs::exists(temp) || fs::exists(file)) std::_Exit(15);
  }
  std::exit(0);
}

TEST(H5WriteFailure, FullDiskDuringDatasetWritesClosesEveryIdAndExitsCleanly) {
  ScratchDir dir("store_full_disk");
  SmallTmpfs disk(dir / "disk", "1m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk case not run";
  EXPECT_EXIT(fill_the_disk(dir / "disk" / "rank.h5", 20000), ::testing::ExitedWithCode(0), "");
}

TEST(H5WriteFailure, FullDiskAmongManySmallDatasetsClosesEveryIdAndExitsCleanly) {
  // smaller datasets, more of them: the disk fills at another point of the writes
  ScratchDir dir("store_full_disk_commit");
  SmallTmpfs disk(dir / "disk", "1m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk case not run";
  EXPECT_EXIT(fill_the_disk(dir / "disk" / "rank.h5", 800), ::testing::ExitedWithCode(0), "");
}

// Many tiny datasets: their data reaches the disk as they are written, their metadata waits in
// HDF5's cache until the commit's flush. The disk is filled (a filler file) to leave room for the
// first and not the second, sized from a dry run of the same writes. HDF5 1.10 cannot close a file
// whose metadata flush failed (its cache is left inconsistent): the failing close left a half
// closed file that the abandon path then crashed on (issue 24). The commit now reserves the room
// first, so the full disk is found while the file can still be discarded.
void write_tiny_datasets(H5Writer& w) {
  for (int i = 0; i < 200; ++i)
    if (!w.write_column("/t/c" + std::to_string(i), noisy_column(4)).ok()) std::_Exit(16);
}

[[noreturn]] void fill_the_disk_at_commit(const fs::path& dry, const fs::path& dir) {
  IGNORE_HDF5_INTERNAL_LEAKS();
  {
    uintmax_t before_commit = 0, after = 0;
    {
      auto w = H5Writer::create(dry / "rank.h5");
      write_tiny_datasets(*w);
      before_commit = fs::file_size(w->temp_path());
      if (!w->commit("normalize").ok()) std::_Exit(17);
      after = fs::file_size(dry / "rank.h5");
    }
    if (after < before_commit + 3 * 4096) std::_Exit(18);  // nothing left for the commit to write
    const uintmax_t page = 4096, room = ((before_commit + after) / 2 + page - 1) / page * page;
    std::FILE* filler = std::fopen((dir / "filler").c_str(), "wb");
    const std::vector<char> block(page, 'x');
    for (uintmax_t b = 0; b + room < (uintmax_t{1} << 20); b += page) std::fwrite(block.data(), 1, block.size(), filler);
    std::fclose(filler);
    auto w = H5Writer::create(dir / "rank.h5");
    if (!w.ok()) std::_Exit(10);
    const fs::path temp = w->temp_path();
    write_tiny_datasets(*w);
    const Status committed = w->commit("normalize");
    if (committed.ok()) std::_Exit(11);
    if (committed.message().find("No space left on device") == std::string::npos) std::_Exit(12);
    if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) std::_Exit(14);
    if (fs::exists(temp) || fs::exists(dir / "rank.h5")) std::_Exit(15);
  }
  std::exit(0);
}

TEST(H5WriteFailure, FullDiskAtTheCommitFlushAbandonsTheFileCleanly) {
  ScratchDir dir("store_full_disk_flush");
  SmallTmpfs disk(dir / "disk", "1m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk case not run";
  EXPECT_EXIT(fill_the_disk_at_commit(dir.path(), dir / "disk"), ::testing::ExitedWithCode(0), "");
}

TEST(H5WriteFailure, ErrorNamesTheFileTheOperationAndTheSystemReason) {
  ScratchDir dir("store_write_failure_msg");
  const fs::path file = dir / "rank.h5";
  EXPECT_EXIT(
      {
        limit_file_size(64 * 1024);
        auto w = H5Writer::create(file);
        const Status st = w->write_column("/t/big", noisy_column(100000));
        const std::string m = st.to_string();
        std::fprintf(stderr, "%s\n", m.c_str());
        const bool good = !st.ok() && m.rfind("io: ", 0) == 0 && m.find(file.string()) != std::string::npos &&
                          m.find("/t/big") != std::string::npos && m.find("errno 27") != std::string::npos &&
                          m.find('\n') == std::string::npos;
        std::_Exit(good ? 0 : 1);  // the file-size limit also blocks the discard's sink: no exit handler
      },
      ::testing::ExitedWithCode(0), "File too large");
}

}  // namespace
}  // namespace ascprof::store
