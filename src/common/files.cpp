#include "ascprof/common/files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace ascprof {

namespace fs = std::filesystem;

MappedFile::~MappedFile() {
  if (addr_ != nullptr) munmap(addr_, size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : addr_(o.addr_), size_(o.size_), released_(o.released_) {
  o.addr_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (addr_ != nullptr) munmap(addr_, size_);
    addr_ = o.addr_;
    size_ = o.size_;
    released_ = o.released_;
    o.addr_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Result<MappedFile> MappedFile::open(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return file_error(ErrorCode::kIo, path.string(), "", std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return file_error(ErrorCode::kIo, path.string(), "", "not a regular file");
  }
  MappedFile m;
  m.size_ = static_cast<size_t>(st.st_size);
  if (m.size_ > 0) {
    void* a = mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (a == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return file_error(ErrorCode::kIo, path.string(), "", std::string("mmap failed: ") + std::strerror(e));
    }
    madvise(a, m.size_, MADV_SEQUENTIAL);
    m.addr_ = a;
  }
  ::close(fd);
  return m;
}

void MappedFile::release_before(size_t offset) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  offset = offset / page * page;
  if (addr_ == nullptr || offset <= released_ + (64u << 20)) return;  // batch: every 64 MiB
  madvise(static_cast<char*>(addr_) + released_, offset - released_, MADV_DONTNEED);
  released_ = offset;
}

Result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return file_error(ErrorCode::kIo, path.string(), "", std::strerror(errno));
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return file_error(ErrorCode::kIo, path.string(), "", "read failed");
  return s;
}

namespace {

// A new temporary file for writing. O_NOFOLLOW|O_EXCL: a symlink or file planted at the temporary
// name (a stale one is removed first, it can only be ours) is never written through.
std::FILE* open_temp(const fs::path& tmp) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(tmp, ec)) || fs::is_regular_file(fs::symlink_status(tmp, ec))) fs::remove(tmp, ec);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) ::close(fd);
  return f;
}

}  // namespace

std::string find_escaping_symlink(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  const fs::path base = fs::weakly_canonical(dir, ec);
  if (ec) return {};
  auto inside = [&base](const fs::path& p) {
    auto b = base.begin(), e = base.end();
    auto it = p.begin();
    for (; b != e; ++b, ++it)
      if (it == p.end() || *it != *b) return false;
    return true;
  };
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (!it->is_symlink(ec)) continue;
    std::error_code ec2;
    const fs::path target = fs::weakly_canonical(it->path(), ec2);
    if (ec2 || !inside(target)) return it->path().string() + " -> " + (ec2 ? std::string("?") : target.string());
  }
  return {};
}

const std::string& temp_host_tag() {
  static const std::string tag = [] {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return std::string("host");
    std::string t;
    for (const char* c = host; *c != '\0' && *c != '.'; ++c)  // short name; '.' separates the pid
      t.push_back(std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ? *c : '_');
    return t.empty() ? std::string("host") : t;
  }();
  return tag;
}

fs::path temp_sibling(const fs::path& path) {
  fs::path tmp = path;
  tmp += ".tmp." + temp_host_tag() + "." + std::to_string(::getpid());
  return tmp;
}

Result<std::vector<fs::path>> write_files_atomic(const fs::path& dir, const std::vector<std::string>& names,
                                                 const std::vector<std::string>& texts) {
  if (names.size() != texts.size())  // a writer whose table list and texts disagree: never drop one silently
    return file_error(ErrorCode::kInternal, dir.string(), "", std::to_string(names.size()) + " table names for " +
                                                                 std::to_string(texts.size()) + " texts");
  std::vector<fs::path> written;
  for (size_t i = 0; i < names.size(); ++i) {
    const fs::path path = dir / names[i];
    ASCPROF_RETURN_IF_ERROR(write_file_atomic(path, texts[i]));
    written.push_back(path);
  }
  return written;
}

Status remove_files(const fs::path& dir, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    std::error_code ec;
    fs::remove(dir / name, ec);
    if (ec) return file_error(ErrorCode::kIo, (dir / name).string(), "", "cannot remove: " + ec.message());
  }
  return {};
}

Status write_file_atomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return file_error(ErrorCode::kIo, path.parent_path().string(), "", ec.message());
  const fs::path tmp = temp_sibling(path);
  {
    std::FILE* f = open_temp(tmp);
    if (f == nullptr) return file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno));
    const size_t n = std::fwrite(content.data(), 1, content.size(), f);
    const bool ok = n == content.size() && std::fflush(f) == 0;
    const int e = errno;
    std::fclose(f);
    if (!ok) {
      fs::remove(tmp, ec);
      return file_error(ErrorCode::kIo, tmp.string(), "", std::string("write failed: ") + std::strerror(e));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    return file_error(ErrorCode::kIo, path.string(), "", "rename failed: " + ec.message());
  }
  return {};
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (f_ != nullptr) std::fclose(f_);
  f_ = nullptr;
  if (!tmp_.empty()) {
    std::error_code ec;
    fs::remove(tmp_, ec);
    tmp_.clear();
  }
}

Status AtomicFileWriter::open(const fs::path& path) {
  discard();
  path_ = path;
  st_ = {};
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return st_ = file_error(ErrorCode::kIo, path.parent_path().string(), "", ec.message());
  tmp_ = temp_sibling(path);
  f_ = open_temp(tmp_);
  if (f_ == nullptr) {
    st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::strerror(errno));
    tmp_.clear();
  }
  return st_;
}

void AtomicFileWriter::write(std::string_view text) {
  if (!st_.ok() || f_ == nullptr || text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), f_) != text.size())
    st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(errno));
}

Status AtomicFileWriter::commit() {
  if (f_ == nullptr) return st_.ok() ? file_error(ErrorCode::kIo, path_.string(), "", "not open") : st_;
  const bool flushed = std::fflush(f_) == 0;
  const int e = errno;
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (st_.ok() && (!flushed || !closed))
    st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(e));
  if (st_.ok()) {
    std::error_code ec;
    fs::rename(tmp_, path_, ec);
    if (ec) st_ = file_error(ErrorCode::kIo, path_.string(), "", "rename failed: " + ec.message());
    else tmp_.clear();
  }
  discard();
  return st_;
}

}  // namespace ascprof
