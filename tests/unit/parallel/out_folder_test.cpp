// OUT's claim (issue 24): a live run's lock refuses a second run, shards of one sweep share it, a
// dead holder leaves nothing stuck; stale temporary files are removed only when their writer is gone.
#include "ascprof/parallel/out_folder.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>

#include "ascprof/common/files.hpp"
#include "support/test_support.hpp"

namespace ascprof::parallel {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "partial";
}

fs::path temp_of(const fs::path& dir, const std::string& name, pid_t pid) {
  return dir / (name + ".tmp." + temp_host_tag() + "." + std::to_string(pid));
}

// A process that ran and was reaped: its pid names no live process (until reused, which the
// writer-start check also covers).
pid_t dead_pid() {
  const pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

TEST(OutLock, SecondWholeRunIsRefusedNamingTheHolder) {
  ScratchDir dir("out_lock");
  auto first = OutLock::acquire(dir.path(), "", "analyze");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_TRUE(first->locked());
  auto second = OutLock::acquire(dir.path(), "", "analyze");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kInvalidArgument);
  const std::string m = second.status().message();
  EXPECT_NE(m.find("is being written by another ascprof-mpi run"), std::string::npos) << m;
  EXPECT_NE(m.find("pid " + std::to_string(getpid())), std::string::npos) << m;
  // a shard cannot join a whole run either
  EXPECT_FALSE(OutLock::acquire(dir.path(), "shard-0-of-2", "sweep").ok());
}

TEST(OutLock, ReleasedWhenTheHolderEnds) {
  ScratchDir dir("out_lock_release");
  { auto first = OutLock::acquire(dir.path(), "", "analyze"); ASSERT_TRUE(first.ok()); }
  EXPECT_TRUE(OutLock::acquire(dir.path(), "", "analyze").ok());
}

TEST(OutLock, AKilledHolderLeavesNothingStuck) {
  ScratchDir dir("out_lock_killed");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    auto l = OutLock::acquire(dir.path(), "", "analyze");
    const char c = l.ok() ? 'y' : 'n';
    [[maybe_unused]] const ssize_t n = write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_FALSE(OutLock::acquire(dir.path(), "", "analyze").ok());  // held by the live child
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(OutLock::acquire(dir.path(), "", "analyze").ok());
  close(ready[0]);
  close(ready[1]);
}

TEST(OutLock, ShardsOfOneSweepShareTheFolderButNotAShard) {
  ScratchDir dir("out_lock_shards");
  auto s0 = OutLock::acquire(dir.path(), "shard-0-of-2", "sweep");
  auto s1 = OutLock::acquire(dir.path(), "shard-1-of-2", "sweep");
  ASSERT_TRUE(s0.ok()) << s0.status().to_string();
  ASSERT_TRUE(s1.ok()) << s1.status().to_string();
  EXPECT_FALSE(s0->exclusive());
  auto again = OutLock::acquire(dir.path(), "shard-1-of-2", "sweep");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("shard-1-of-2"), std::string::npos);
  auto whole = OutLock::acquire(dir.path(), "", "analyze");
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.status().message().find("shards of a sweep"), std::string::npos) << whole.status().message();
}

TEST(OutFolder, LockFilesDoNotMakeAFreshFolderForeign) {
  ScratchDir dir("out_prepare");
  const fs::path out = dir / "out";
  { auto l = OutLock::acquire(out, "shard-0-of-2", "sweep"); ASSERT_TRUE(l.ok()); }
  EXPECT_EQ(prepare_out(out.string(), false), "");
  EXPECT_TRUE(fs::exists(out / kOutMarker));
}

TEST(StaleTemps, DeadWritersFilesGoLiveWritersFilesStay) {
  ScratchDir dir("stale_temps");
  const fs::path out = dir.path();
  const fs::path dead = temp_of(out / "root" / "ranks", "3.h5", dead_pid());
  const fs::path mine = temp_of(out / "root", "step_summary.csv", getpid());
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    pause();
    _exit(0);
  }
  const fs::path live = temp_of(out / "root", "layer_summary.csv", sleeper);
  const fs::path legacy = out / "root" / "old.json.tmp.12345";  // before the host was in the name
  const fs::path other_host = out / "root" / "x.json.tmp.some-other-node.77";
  const fs::path not_temp = out / "root" / "notes.tmp.txt";
  for (const auto& p : {dead, mine, live, legacy, other_host, not_temp}) touch(p);

  // a shard shares OUT: only this host's dead writers can be judged
  StaleTempFiles shared = remove_stale_temp_files(out, /*exclusive=*/false);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(legacy));
  EXPECT_TRUE(fs::exists(other_host));
  ASSERT_EQ(shared.removed.size(), 1u);
  EXPECT_EQ(shared.removed[0], dead.string());

  // a whole run holds OUT alone: other hosts' leftovers go too, live ones and our own stay
  StaleTempFiles alone = remove_stale_temp_files(out, /*exclusive=*/true);
  EXPECT_FALSE(fs::exists(legacy));
  EXPECT_FALSE(fs::exists(other_host));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(not_temp));
  EXPECT_EQ(alone.removed.size(), 2u);
  bool live_named = false;
  for (const auto& k : alone.kept) live_named |= k.find(live.string()) != std::string::npos;
  EXPECT_TRUE(live_named);
  kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  remove_stale_temp_files(out, true);
  EXPECT_FALSE(fs::exists(live));  // its writer is gone now
}

TEST(StaleTemps, AFileWhoseWriterHoldsItsLockStays) {
  ScratchDir dir("stale_temps_locked");
  const fs::path held = dir / "root" / "x.h5.tmp.other-node.12";
  touch(held);
  const int fd = ::open(held.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  // flock is per open file description: a child holds it, as a writer elsewhere would
  const pid_t holder = fork();
  if (holder == 0) {
    const int f = ::open(held.c_str(), O_RDONLY);
    flock(f, LOCK_EX);
    pause();
    _exit(0);
  }
  for (int i = 0; i < 200; ++i) {  // until the child holds it
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) break;
    flock(fd, LOCK_UN);
    usleep(5000);
  }
  remove_stale_temp_files(dir.path(), true);
  EXPECT_TRUE(fs::exists(held));
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  ::close(fd);
  remove_stale_temp_files(dir.path(), true);
  EXPECT_FALSE(fs::exists(held));
}

}  // namespace
}  // namespace ascprof::parallel
