#pragma once
/// File helpers: whole-file reads with clear errors, and atomic writes (temp name + rename) so
/// no output is ever left half-written.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof {

/// A read-only memory mapping of a whole file (empty files map to an empty view).
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Maps `path`; kIo error naming the file and the OS reason on failure.
  static Result<MappedFile> open(const std::filesystem::path& path);
  std::string_view data() const { return {static_cast<const char*>(addr_), size_}; }
  size_t size() const { return size_; }
  /// Tells the kernel pages before `offset` are no longer needed (keeps RSS flat on huge files).
  void release_before(size_t offset);

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
};

/// Reads a whole (small) file into a string.
Result<std::string> read_file(const std::filesystem::path& path);

/// Writes `content` to `path` atomically: `path.tmp.<pid>` (created new, never through a symlink)
/// then rename, which replaces `path` itself even when it is a symlink. Creates parent folders.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// A family of tables in `dir`: `texts[i]` written atomically to `names[i]`. Returns the files written,
/// in order (the first failure stops and is returned).
Result<std::vector<std::filesystem::path>> write_files_atomic(const std::filesystem::path& dir,
                                                              const std::vector<std::string>& names,
                                                              const std::vector<std::string>& texts);

/// Removes `names` from `dir` where they exist (an optional family of tables a run did not write, so
/// that none an earlier run left is taken for this run's). A file that cannot be removed is an error.
Status remove_files(const std::filesystem::path& dir, const std::vector<std::string>& names);

/// A large file streamed to its temporary sibling and renamed into place by commit(). Without a
/// successful commit (error, early return, exception) the temporary is removed, so a reader never
/// sees half a file. Writes after an error are ignored; commit() reports the first error.
class AtomicFileWriter {
 public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  /// Creates parent folders and opens the temporary file.
  Status open(const std::filesystem::path& path);
  void write(std::string_view text);
  /// Flushes, closes and renames; the writer is closed afterwards.
  Status commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  void discard();
  std::filesystem::path path_, tmp_;
  std::FILE* f_ = nullptr;
  Status st_;
};

/// The first symlink under `dir` (searched recursively, links not followed) whose target resolves
/// outside `dir`, as "<link> -> <target>"; "" when there is none or `dir` does not exist. Output
/// folders are checked with it so nothing is ever written through such a link.
std::string find_escaping_symlink(const std::filesystem::path& dir);

/// Temporary sibling name used for atomic writes of `path` by this process:
/// `path.tmp.<host>.<pid>`, so a later run can tell whether its writer still exists (the pid, on
/// the same host) when a killed run left it behind (parallel/out_folder.hpp).
std::filesystem::path temp_sibling(const std::filesystem::path& path);

/// This host's short name as temporary names carry it (letters, digits, '-'; others as '_').
const std::string& temp_host_tag();

}  // namespace ascprof
