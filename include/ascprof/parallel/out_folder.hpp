#pragma once
/// The output folder OUT as one run claims it (issue 24): may this run write there, is another
/// live run writing there, and what did killed runs leave behind. Orchestration, no MPI: process 0
/// calls these before any process writes.
///
/// The lock is flock(2) on OUT/.ascprof-mpi.lock, held for the whole run: the kernel releases it
/// when the holder dies, however it dies, so a crashed run never leaves OUT locked (also over NFS,
/// where Linux maps flock to byte-range locks). A whole run (analyze, an unsharded sweep, a rollup)
/// holds it exclusively; a shard of a sweep holds it shared plus OUT/.ascprof-mpi.shard-I-of-K.lock
/// exclusively, so the shards of one sweep run side by side (they write disjoint roots) while a
/// second copy of the same shard, or a whole run, is refused.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::parallel {

/// The file that marks a folder as ascprof-mpi output, so reruns may write into it.
inline constexpr const char* kOutMarker = ".ascprof-mpi-output";

/// Decides whether OUT may be written and prepares it (creates it, writes the marker); "" when
/// fine, else the message. OUT must be absent, empty, or earlier ascprof-mpi output (else `force`),
/// and never holds a symlink leading out of it.
std::string prepare_out(const std::string& out, bool force);

/// A held claim on OUT (see the file comment). Move-only; released when destroyed.
class OutLock {
 public:
  /// Takes the lock: exclusive when `shard` is empty, else shared plus the shard's own lock
  /// (`shard` like "shard-0-of-4"). kInvalidArgument "output folder '…' is being written by another
  /// ascprof-mpi run (…)" when a live run holds it. Where the file system has no flock the claim is
  /// empty (locked() false) and a warning is printed: concurrent runs are then not detected.
  static Result<OutLock> acquire(const std::filesystem::path& out, std::string_view shard, std::string_view command);

  OutLock() = default;
  OutLock(OutLock&& o) noexcept;
  OutLock& operator=(OutLock&& o) noexcept;
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;
  ~OutLock();
  bool locked() const { return main_fd_ >= 0; }
  /// A whole run's claim (no shard); also true for an empty claim (no flock on this file system).
  bool exclusive() const { return exclusive_; }

 private:
  void release();
  int main_fd_ = -1;
  int shard_fd_ = -1;
  bool exclusive_ = true;
};

/// Temporary files (`NAME.tmp.PID`, see common/files.hpp) under OUT that runs killed before they
/// could clean up left behind.
struct StaleTempFiles {
  std::vector<std::string> removed;  ///< their writer no longer exists: removed
  std::vector<std::string> kept;     ///< "PATH (why)": their writer may still be live
};

/// Removes the temporary files under `out` whose writer no longer exists, and only those. A file
/// written on this host is removed when the process named by its pid is gone; one written on
/// another host only when `exclusive` (this run holds OUT's exclusive lock, so no other run is
/// writing there). Either way a file whose writer still holds a lock on it (HDF5 locks its files)
/// is kept. Call before this run's processes write anything.
StaleTempFiles remove_stale_temp_files(const std::filesystem::path& out, bool exclusive);

/// remove_stale_temp_files, then one stderr line for what was removed and one for what was kept
/// (the first few paths each). Returns how many were removed.
size_t clean_stale_temp_files(const std::filesystem::path& out, bool exclusive);

}  // namespace ascprof::parallel
