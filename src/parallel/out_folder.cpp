#include "ascprof/parallel/out_folder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "ascprof/common/files.hpp"

namespace ascprof::parallel {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLockName = ".ascprof-mpi.lock";

bool is_lock_file(const fs::path& name) {
  const std::string n = name.filename().string();
  return n.rfind(".ascprof-mpi.", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".lock") == 0;
}

// Who holds a lock, written into the lock file: "pid 123 on host node7 since 2026-12-01T22:50:00Z (analyze)".
std::string holder_text(std::string_view command) {
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  char when[32] = "?";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm) != nullptr) std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "pid " + std::to_string(getpid()) + " on host " + host + " since " + when + " (" + std::string(command) + ")";
}

std::string read_small(const fs::path& p) {
  auto text = read_file(p);
  if (!text.ok()) return {};
  std::string s = std::move(*text);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s.size() > 300 ? s.substr(0, 300) : s;
}

// Whether process `pid` on this host can be the writer of a file last written at `mtime`: it
// exists, is not a zombie (killed, not yet reaped) and started before the file was last written
// (else the pid was reused by a newer process). Unknown details count as alive: keeping a stale
// file is harmless, removing a live one is not.
bool writer_alive(pid_t pid, fs::file_time_type mtime) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const std::string stat = read_small(fs::path("/proc") / std::to_string(pid) / "stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  if (stat[paren + 2] == 'Z') return false;
  // field 22 (starttime, clock ticks after boot) is the 20th after the state
  size_t pos = paren + 2;
  for (int field = 3; field < 22 && pos != std::string::npos; ++field) pos = stat.find(' ', pos + 1);
  if (pos == std::string::npos) return true;
  const double start_ticks = std::strtod(stat.c_str() + pos + 1, nullptr);
  auto read_stat = read_file("/proc/stat");
  const std::string proc_stat = read_stat.ok() ? std::move(*read_stat) : std::string();
  const size_t bt = proc_stat.find("btime ");
  const long ticks = sysconf(_SC_CLK_TCK);
  if (bt == std::string::npos || ticks <= 0) return true;
  const double boot = std::strtod(proc_stat.c_str() + bt + 6, nullptr);
  const double started = boot + start_ticks / static_cast<double>(ticks);
  const auto written = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::file_clock::to_sys(mtime).time_since_epoch()).count();
  return started <= static_cast<double>(written) + 2.0;  // btime has whole-second resolution
}

bool no_flock_here(int err) { return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL; }

// flock on a new descriptor of `path`; -1 with errno on failure (EWOULDBLOCK: held by another).
int lock_file(const fs::path& path, int operation) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, operation | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

void write_holder(int fd, const std::string& text) {
  if (::ftruncate(fd, 0) != 0) return;
  const std::string line = text + "\n";
  [[maybe_unused]] const ssize_t n = ::pwrite(fd, line.data(), line.size(), 0);
}

// Who is writing OUT now, for the refusal message: the exclusive holder's line, or the live shards.
std::string describe_holders(const fs::path& out) {
  std::vector<std::string> shards;
  std::error_code ec;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if (!is_lock_file(p) || p.filename() == kLockName) continue;
    const int fd = lock_file(p, LOCK_SH);  // succeeds only when no live shard holds it
    if (fd >= 0) {
      ::close(fd);
      continue;
    }
    shards.push_back(p.filename().string().substr(13, p.filename().string().size() - 18) + ": " + read_small(p));
  }
  if (shards.empty()) {
    const std::string main = read_small(out / kLockName);
    return main.empty() ? "holder unknown" : main;
  }
  std::string s = "shards of a sweep: ";
  for (size_t i = 0; i < shards.size(); ++i) s += (i ? "; " : "") + shards[i];
  return s;
}

}  // namespace

std::string prepare_out(const std::string& out, bool force) {
  std::error_code ec;
  const fs::path p(out);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) return "output path '" + out + "' exists and is not a folder";
    bool empty = true;  // the lock files of a run that claimed OUT first (a sweep) do not count
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (!is_lock_file(it->path())) {
        empty = false;
        break;
      }
    if (!empty && !fs::exists(p / kOutMarker, ec) && !force)
      return "output folder '" + out + "' is not empty and was not written by ascprof-mpi (use --force to write into it)";
  }
  // even with --force: a link inside OUT that leads out of it would put our files elsewhere
  if (const std::string link = find_escaping_symlink(p); !link.empty())
    return "output folder '" + out + "' holds a symlink that points outside it (" + link +
           "); remove it, nothing is written through such a link";
  fs::create_directories(p, ec);
  if (ec) return "cannot create output folder '" + out + "': " + ec.message();
  if (fs::exists(p / kOutMarker, ec)) return {};  // written by an earlier run: left as it is
  const Status st = write_file_atomic(p / kOutMarker, "ascprof-mpi output folder\n");
  if (!st.ok()) return st.to_string();
  return {};
}

Result<OutLock> OutLock::acquire(const fs::path& out, std::string_view shard, std::string_view command) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return file_error(ErrorCode::kIo, out.string(), "", "cannot create output folder: " + ec.message());
  OutLock lock;
  lock.exclusive_ = shard.empty();
  const fs::path main = out / kLockName;
  lock.main_fd_ = lock_file(main, lock.exclusive_ ? LOCK_EX : LOCK_SH);
  if (lock.main_fd_ < 0) {
    const int e = errno;
    if (e == EWOULDBLOCK)
      return Status(ErrorCode::kInvalidArgument,
                    "output folder '" + out.string() + "' is being written by another ascprof-mpi run (" +
                        describe_holders(out) + "); wait for it to end or choose another -o (a run that crashed or was "
                        "killed holds no lock)");
    if (no_flock_here(e)) {
      std::fprintf(stderr, "ascprof-mpi: warning: %s cannot be locked (%s): a second run into this folder would not be "
                           "detected\n", main.c_str(), std::strerror(e));
      return lock;
    }
    return file_error(ErrorCode::kIo, main.string(), "", std::string("cannot open the lock file: ") + std::strerror(e));
  }
  const std::string holder = holder_text(command);
  if (lock.exclusive_) {
    write_holder(lock.main_fd_, holder);
    return lock;
  }
  const fs::path shard_path = out / (".ascprof-mpi." + std::string(shard) + ".lock");
  lock.shard_fd_ = lock_file(shard_path, LOCK_EX);
  if (lock.shard_fd_ < 0) {
    const int e = errno;
    if (e == EWOULDBLOCK)
      return Status(ErrorCode::kInvalidArgument, "output folder '" + out.string() + "': " + std::string(shard) +
                                                     " is being written by another ascprof-mpi run (" + read_small(shard_path) +
                                                     "); wait for it to end (a run that crashed or was killed holds no lock)");
    return file_error(ErrorCode::kIo, shard_path.string(), "", std::string("cannot lock: ") + std::strerror(e));
  }
  write_holder(lock.shard_fd_, holder);
  return lock;
}

OutLock::OutLock(OutLock&& o) noexcept
    : main_fd_(std::exchange(o.main_fd_, -1)), shard_fd_(std::exchange(o.shard_fd_, -1)), exclusive_(o.exclusive_) {}

OutLock& OutLock::operator=(OutLock&& o) noexcept {
  if (this != &o) {
    release();
    main_fd_ = std::exchange(o.main_fd_, -1);
    shard_fd_ = std::exchange(o.shard_fd_, -1);
    exclusive_ = o.exclusive_;
  }
  return *this;
}

OutLock::~OutLock() { release(); }

void OutLock::release() {
  // the holder line goes first, so a later refusal never names a run that has ended
  if (shard_fd_ >= 0) {
    [[maybe_unused]] const int r = ::ftruncate(shard_fd_, 0);
    ::close(shard_fd_);
  }
  if (main_fd_ >= 0) {
    if (exclusive_) [[maybe_unused]] const int r = ::ftruncate(main_fd_, 0);
    ::close(main_fd_);
  }
  shard_fd_ = main_fd_ = -1;
}

StaleTempFiles remove_stale_temp_files(const fs::path& out, bool exclusive) {
  StaleTempFiles result;
  std::error_code ec;
  fs::recursive_directory_iterator it(out, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
    // NAME.tmp.HOST.PID (NAME.tmp.PID from versions before the host was added)
    const std::string name = it->path().filename().string();
    const size_t tmp = name.rfind(".tmp.");
    if (tmp == std::string::npos) continue;
    const std::string tail = name.substr(tmp + 5);
    const size_t dot = tail.rfind('.');
    const std::string pid_text = dot == std::string::npos ? tail : tail.substr(dot + 1);
    const std::string host = dot == std::string::npos ? std::string() : tail.substr(0, dot);
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    const std::string path = it->path().string();
    if (host == temp_host_tag()) {
      if (pid == getpid()) continue;
      std::error_code mt;
      const auto mtime = fs::last_write_time(it->path(), mt);
      if (mt || writer_alive(pid, mtime)) {
        result.kept.push_back(path + " (process " + pid_text + " is alive)");
        continue;
      }
    } else if (!exclusive) {
      // another shard of the sweep may be writing it on that host: only a whole run may judge
      result.kept.push_back(path + " (written on host " + (host.empty() ? std::string("unknown") : host) +
                            ", whose processes cannot be checked from here while shards share the folder)");
      continue;
    }
    // a writer that still holds a lock on the file (HDF5 locks its files) is alive somewhere
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      ::close(fd);
      if (held) {
        result.kept.push_back(path + " (its writer still holds a lock on it)");
        continue;
      }
    }
    std::error_code rm;
    if (fs::remove(it->path(), rm)) result.removed.push_back(path);
  }
  return result;
}

size_t clean_stale_temp_files(const fs::path& out, bool exclusive) {
  const StaleTempFiles t = remove_stale_temp_files(out, exclusive);
  auto say = [](const char* what, const std::vector<std::string>& paths) {
    if (paths.empty()) return;
    std::string list;
    for (size_t i = 0; i < paths.size() && i < 5; ++i) list += (i ? ", " : "") + paths[i];
    if (paths.size() > 5) list += ", and " + std::to_string(paths.size() - 5) + " more";
    std::fprintf(stderr, "ascprof-mpi: %s %zu temporary file(s): %s\n", what, paths.size(), list.c_str());
  };
  say("removed, left by processes that no longer exist,", t.removed);
  say("kept, their writer may still be live,", t.kept);
  return t.removed.size();
}

}  // namespace ascprof::parallel
