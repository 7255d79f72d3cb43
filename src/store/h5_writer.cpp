#include "ascprof/store/h5_writer.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <system_error>
#include <utility>

#include "ascprof/common/files.hpp"
#include "h5_detail.hpp"

#ifndef ASCPROF_VERSION
#define ASCPROF_VERSION "unknown"
#endif

namespace ascprof::store {

namespace fs = std::filesystem;

const char* tool_version() { return ASCPROF_VERSION; }

namespace {

/// Strings cleaned to UTF-8 without NUL, laid out as one NUL-separated buffer plus pointers, which
/// is what H5Dwrite/H5Awrite take for vlen strings.
struct CStrings {
  std::string buf;
  std::vector<const char*> ptrs;
  int64_t repaired = 0;

  template <class Range>
  explicit CStrings(const Range& values) {
    size_t total = 0;
    for (const auto& v : values) total += v.size() + 1;
    buf.reserve(total);
    std::vector<size_t> offsets;
    offsets.reserve(values.size());
    for (const auto& v : values) {
      offsets.push_back(buf.size());
      if (detail::append_clean_utf8(buf, std::string_view(v))) ++repaired;
      buf.push_back('\0');
    }
    ptrs.reserve(offsets.size());
    for (const size_t o : offsets) ptrs.push_back(buf.data() + o);  // buf no longer grows
  }
};

}  // namespace

// ---- lifetime ---------------------------------------------------------------------------------

Result<H5Writer> H5Writer::create(const fs::path& path, const WriterOptions& options) {
  return open_temp(path, options, /*copy=*/false);
}

Result<H5Writer> H5Writer::update(const fs::path& path, const WriterOptions& options) {
  return open_temp(path, options, /*copy=*/true);
}

Result<H5Writer> H5Writer::open_temp(const fs::path& path, const WriterOptions& options, bool copy) {
  silence_hdf5_errors();
  const std::string p = path.string();
  const char* op = copy ? "update file" : "create file";
  if (path.empty() || !path.has_filename()) return file_error(ErrorCode::kInvalidArgument, p, op, "not a file path");
  if (options.chunk_elements == 0 || options.deflate_level < 0 || options.deflate_level > 9)
    return file_error(ErrorCode::kInvalidArgument, p, op, "chunk_elements must be > 0 and deflate_level 0..9");

  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (options.create_parent_dirs && !copy) {
    fs::create_directories(parent, ec);
    if (ec) return file_error(ErrorCode::kIo, p, op, "cannot create folder " + parent.string() + ": " + ec.message());
  }
  if (!fs::is_directory(parent, ec))
    return file_error(ErrorCode::kIo, p, op, "folder does not exist: " + parent.string());

  H5Writer w;
  w.path_ = path;
  w.temp_path_ = temp_sibling(path);
  w.options_ = options;

  if (copy) {
    if (!fs::is_regular_file(path, ec)) return file_error(ErrorCode::kIo, p, op, "no such file");
    fs::copy_file(path, w.temp_path_, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      fs::remove(w.temp_path_, ec);
      return file_error(ErrorCode::kIo, p, op, "copy to " + w.temp_path_.string() + " failed: " + ec.message());
    }
  }

  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Kind::kPropList);
  // Format bounds 1.10..1.10: readable by every HDF5 >= 1.10 (h5py wheels since 2018, Debian 12's
  // h5dump); it gives fixed-size chunked datasets the single-chunk and fixed-array indexes instead
  // of a ~2 KB v1 B-tree each. SEMI close degree turns a leaked handle into an error at commit
  // instead of a file silently left open.
  if (!fapl.valid() || H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110) < 0 ||
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI) < 0)
    return h5_error(p, "file access properties");

  const hid_t f = copy ? H5Fopen(w.temp_path_.c_str(), H5F_ACC_RDWR, fapl.get())
                       : H5Fcreate(w.temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (f < 0) {
    Status s = h5_error(p, op);
    fs::remove(w.temp_path_, ec);
    return s;
  }
  w.file_ = H5Handle(f, H5Kind::kFile);
  // Dataset object headers sized to their messages instead of HDF5's 256-byte minimum: ~190 unused
  // bytes per column otherwise (h5stat), 90 KB of a 470 KB rank file. An attribute added later
  // (e.g. `strings` on an id column) still fits, in a continuation block.
  if (H5Fset_dset_no_attrs_hint(f, 1) < 0) return h5_error(p, op);
  return w;
}

H5Writer::H5Writer(H5Writer&& o) noexcept
    : file_(std::move(o.file_)),
      path_(std::move(o.path_)),
      temp_path_(std::move(o.temp_path_)),
      options_(o.options_),
      first_error_(std::move(o.first_error_)),
      closed_(o.closed_),
      table_sizes_(std::move(o.table_sizes_)) {
  o.closed_ = true;
}

H5Writer& H5Writer::operator=(H5Writer&& o) noexcept {
  if (this != &o) {
    if (!closed_) abandon();
    file_ = std::move(o.file_);
    path_ = std::move(o.path_);
    temp_path_ = std::move(o.temp_path_);
    options_ = o.options_;
    first_error_ = std::move(o.first_error_);
    closed_ = o.closed_;
    table_sizes_ = std::move(o.table_sizes_);
    o.closed_ = true;
  }
  return *this;
}

H5Writer::~H5Writer() {
  if (!closed_) abandon();
}

void H5Writer::abandon() {
  discard_file(file_);
  std::error_code ec;
  if (!temp_path_.empty()) fs::remove(temp_path_, ec);
  closed_ = true;
}

Status H5Writer::check_open(std::string_view op) {
  silence_hdf5_errors();  // the writer may be used on another thread than the one that created it
  if (!closed_) return {};
  return file_error(ErrorCode::kInternal, path_.string(), op, "writer already committed or abandoned");
}

Status H5Writer::note(Status s) {
  if (!s.ok() && first_error_.ok()) first_error_ = s;
  return s;
}

Status H5Writer::commit(std::string_view stage, int64_t schema_version) {
  ASCPROF_RETURN_IF_ERROR(check_open("commit"));
  if (!first_error_.ok()) {
    abandon();
    return Status(first_error_.code(), "commit refused after an earlier error: " + first_error_.message());
  }
  Status s = set_string_attr("/", "tool_version", tool_version());
  if (s.ok()) s = set_string_attr("/", "stage", stage);
  if (s.ok()) s = set_int_attr("/", "schema_version", schema_version);
  if (s.ok()) s = set_int_attr("/", "complete", 1);  // last: marks everything above as done
  // HDF5 1.10 cannot recover from a metadata flush that fails: its cache is left inconsistent and
  // no later close of the file succeeds (the object stays half torn down; HDF5's exit handler
  // crashed on it). So the disk room that flush needs is allocated first, while a failure (a full
  // disk, a quota) still leaves the file whole for abandon() to discard; then flush and close.
  uint64_t reserved = 0;
  if (s.ok()) s = reserve_for_flush(&reserved);
  if (s.ok() && H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) s = h5_error(path_.string(), "flush file");
  if (s.ok()) {
    s = file_.close(path_.string(), "close file");
    if (!s.ok()) file_.release();  // half closed: never touched again (app/main.cpp skips HDF5's exit handler)
  }
  if (s.ok() && reserved > 0) release_reserve(reserved);
  if (s.ok()) {
    std::error_code ec;
    fs::rename(temp_path_, path_, ec);
    if (ec) s = file_error(ErrorCode::kIo, path_.string(), "commit", "rename from " + temp_path_.string() + " failed: " + ec.message());
  }
  if (!s.ok()) {
    abandon();
    return note(std::move(s));
  }
  closed_ = true;
  return {};
}

Status H5Writer::reserve_for_flush(uint64_t* reserved) {
  *reserved = 0;
  haddr_t eoa = 0;
  void* vfd = nullptr;
  if (H5Fget_eoa(file_.get(), &eoa) < 0 || H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &vfd) < 0 || vfd == nullptr) {
    H5Eclear2(H5E_DEFAULT);
    return {};  // not the sec2 driver: no reservation, the flush takes its chance
  }
  const int fd = *static_cast<int*>(vfd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  // The flush writes cached metadata into space HDF5 allocated for it, anywhere below the end of
  // allocation (EOA), often in holes of the file (raw data was written at higher addresses), and
  // the closing writes can grow the file by a few blocks. Allocate all of it now; blocks already
  // there cost nothing. KEEP_SIZE: the file's size, which HDF5 checks, does not change.
  constexpr uint64_t kGrowth = uint64_t{256} << 10;
  const uint64_t end = std::max<uint64_t>(eoa, static_cast<uint64_t>(st.st_size)) + kGrowth;
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(end)) != 0) {
    const int e = errno;
    if (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO)
      return file_error(ErrorCode::kIo, path_.string(), "reserve room for the metadata flush",
                        std::string("file write failed: ") + std::strerror(e) + " (errno " + std::to_string(e) + ")");
    return {};  // a file system without fallocate: no reservation
  }
  *reserved = end;
  return {};
}

void H5Writer::release_reserve(uint64_t reserved) {
  // the part of the reservation past the end of the file was not used: give it back
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < reserved)
    ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(reserved) - st.st_size);
  ::close(fd);
}

// ---- groups and links ---------------------------------------------------------------------------

Status H5Writer::create_group(std::string_view group) {
  const std::string name = detail::object_path(group);
  const std::string op = "create group " + name;
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  if (name == "/") return {};
  // H5Oopen would also work, but checking link by link avoids an error stack for the common case.
  const htri_t exists = H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT);
  if (exists > 0) {
    H5O_info_t info;
    if (H5Oget_info_by_name2(file_.get(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
      return note(h5_error(path_.string(), op));
    if (info.type != H5O_TYPE_GROUP)
      return note(file_error(ErrorCode::kIo, path_.string(), op, "exists and is not a group"));
    return {};
  }
  H5Eclear2(H5E_DEFAULT);  // H5Lexists fails when a parent is missing; that is fine here
  // Links stay in the group's object header up to 128 members. HDF5's default (8) moves a table
  // group's column links into a fractal heap indexed by a B-tree, which measured a third of a
  // small rank file's write time (creating the links) and ~30 KB of its metadata.
  H5Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Kind::kPropList);
  H5Handle lcpl = detail::lcpl_with_parents();
  if (!gcpl.valid() || !lcpl.valid() || H5Pset_link_phase_change(gcpl.get(), 128, 96) < 0)
    return note(h5_error(path_.string(), op));
  // each missing level is made here (not as an intermediate group) so that it gets gcpl too
  for (size_t slash = name.find('/', 1);; slash = name.find('/', slash + 1)) {
    const std::string level = name.substr(0, slash);
    if (slash != std::string::npos && H5Lexists(file_.get(), level.c_str(), H5P_DEFAULT) > 0) continue;
    H5Eclear2(H5E_DEFAULT);
    H5Handle g(H5Gcreate2(file_.get(), level.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT), H5Kind::kGroup);
    if (!g.valid()) return note(h5_error(path_.string(), op));
    ASCPROF_RETURN_IF_ERROR(note(g.close(path_.string(), op)));
    if (slash == std::string::npos) return {};
  }
}

Status H5Writer::create_external_link(std::string_view link, std::string_view target_file,
                                      std::string_view target_object) {
  const std::string name = detail::object_path(link);
  const std::string op = "create external link " + name;
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  H5Handle lcpl = detail::lcpl_with_parents();
  std::string file(target_file);
  if (const fs::path t(file); t.is_absolute()) {
    // HDF5 tries a relative name against the linking file's folder, so the output stays movable.
    std::error_code ec;
    const fs::path base = fs::absolute(path_, ec).parent_path().lexically_normal();
    const fs::path rel = t.lexically_normal().lexically_relative(base);
    if (!ec && !rel.empty()) file = rel.string();
  }
  const std::string obj = detail::object_path(target_object);
  if (H5Lcreate_external(file.c_str(), obj.c_str(), file_.get(), name.c_str(), lcpl.get(), H5P_DEFAULT) < 0)
    return note(h5_error(path_.string(), op));
  return {};
}

Status H5Writer::remove(std::string_view object) {
  const std::string name = detail::object_path(object);
  const std::string op = "remove " + name;
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  if (H5Ldelete(file_.get(), name.c_str(), H5P_DEFAULT) < 0) return note(h5_error(path_.string(), op));
  return {};
}

// ---- datasets -----------------------------------------------------------------------------------

namespace {

enum class Filters { kNone, kDeflate, kShuffleDeflate };

/// Dataset creation properties: 1-D chunks of min(n, chunk) elements (at least 1), extendible.
H5Handle make_dcpl(const WriterOptions& o, size_t n, bool vlen, Filters filters) {
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Kind::kPropList);
  if (!dcpl.valid()) return dcpl;
  const hsize_t chunk = std::max<hsize_t>(1, std::min<hsize_t>(n, o.chunk_elements));
  if (H5Pset_chunk(dcpl.get(), 1, &chunk) < 0) return {};
  // Every element is written, so filling chunks with the fill value first is wasted work
  // (HDF5 insists on a fill value for vlen types, so those keep the default).
  if (!vlen && H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0) return {};
  if (filters == Filters::kShuffleDeflate && H5Pset_shuffle(dcpl.get()) < 0) return {};
  if (filters != Filters::kNone && H5Pset_deflate(dcpl.get(), static_cast<unsigned>(o.deflate_level)) < 0) return {};
  return dcpl;
}

/// Numeric columns of at most this many bytes are stored compact: their values live in the
/// dataset's object header, with no chunk index and no filter. A rank file holds hundreds of small
/// columns, and as chunked, deflated datasets each one cost a B-tree, a chunk record and a zlib
/// stream set-up, which made the file larger than its data several times over and its write mostly
/// HDF5 bookkeeping (issue 17: a 64-rank decode capture, 1.36 MB per rank file holding ~90 KB of
/// data). Larger columns are chunked and deflated: compact data is stored uncompressed.
constexpr size_t kCompactMaxBytes = 2u << 10;

/// Compact, fixed-size layout for a small numeric column (see kCompactMaxBytes).
H5Handle make_compact_dcpl(bool vlen = false) {
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Kind::kPropList);
  if (!dcpl.valid() || H5Pset_layout(dcpl.get(), H5D_COMPACT) < 0) return {};
  if (!vlen && H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0) return {};  // see make_dcpl
  return dcpl;
}

/// Stored bytes of `n` elements written as `chunk`-element chunks through `filters`, measured by
/// writing them to an in-memory (core driver) HDF5 file: the exact filter code, no extra library.
/// Returns SIZE_MAX if HDF5 fails (the caller then keeps its default).
size_t filtered_size(ColumnType type, const void* data, size_t n, size_t chunk, Filters filters, int level) {
  static std::atomic<uint64_t> counter{0};
  const std::string name = "ascprof-filter-probe-" + std::to_string(counter++);
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Kind::kPropList);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 1u << 20, /*backing_store=*/0) < 0) return SIZE_MAX;
  H5Handle file(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Kind::kFile);
  WriterOptions o;
  o.chunk_elements = static_cast<uint32_t>(chunk);
  o.deflate_level = level;
  H5Handle dcpl = make_dcpl(o, n, false, filters);
  const hsize_t dims = n;
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Kind::kDataspace);
  if (!file.valid() || !dcpl.valid() || !space.valid()) return SIZE_MAX;
  H5Handle ds(H5Dcreate2(file.get(), "s", detail::file_type(type), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Kind::kDataset);
  if (!ds.valid() || H5Dwrite(ds.get(), detail::native_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    return SIZE_MAX;
  return static_cast<size_t>(H5Dget_storage_size(ds.get()));
}

/// Picks the filters for a numeric column from samples at its start, middle and end.
Filters choose_filters(const WriterOptions& o, ColumnType type, const void* data, size_t n) {
  if (o.deflate_level == 0) return Filters::kNone;
  const size_t width = column_type_size(type);
  const Filters fixed = o.shuffle && width > 1 ? Filters::kShuffleDeflate : Filters::kDeflate;
  constexpr size_t kSlice = 2048;  // elements: 16 KiB of int64, half a deflate window; cheap to compress
  if (!o.adaptive_filters || n * width < (64u << 10)) return fixed;
  const auto* bytes = static_cast<const unsigned char*>(data);
  const size_t slice = std::min(kSlice, n / 3);
  std::vector<unsigned char> sample;
  sample.reserve(3 * slice * width);
  for (const size_t start : {size_t{0}, (n - slice) / 2, n - slice})
    sample.insert(sample.end(), bytes + start * width, bytes + (start + slice) * width);
  const size_t raw = sample.size();
  // One slice per chunk, so shuffle sees the same kind of input as in the real dataset.
  const size_t plain = filtered_size(type, sample.data(), 3 * slice, slice, Filters::kDeflate, o.deflate_level);
  const size_t shuffled = width > 1 ? filtered_size(type, sample.data(), 3 * slice, slice, Filters::kShuffleDeflate,
                                                    o.deflate_level)
                                    : SIZE_MAX;
  H5Eclear2(H5E_DEFAULT);  // a failed probe only means "use the default"
  if (plain == SIZE_MAX && shuffled == SIZE_MAX) return fixed;
  const size_t best = std::min(plain, shuffled);
  if (static_cast<double>(best) > 0.85 * static_cast<double>(raw)) return Filters::kNone;
  return shuffled < plain ? Filters::kShuffleDeflate : Filters::kDeflate;
}

}  // namespace

Status H5Writer::write_numeric(std::string_view dataset, ColumnType type, const void* data, size_t n) {
  const std::string name = detail::object_path(dataset);
  const std::string op = "create dataset " + name;
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  const std::string p = path_.string();
  const hsize_t dims = n;
  const bool compact = n * column_type_size(type) <= kCompactMaxBytes;
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Kind::kDataspace);
  H5Handle dcpl = compact ? make_compact_dcpl() : make_dcpl(options_, n, false, choose_filters(options_, type, data, n));
  H5Handle lcpl = detail::lcpl_with_parents();
  if (!space.valid() || !dcpl.valid() || !lcpl.valid()) return note(h5_error(p, op));
  H5Handle ds(H5Dcreate2(file_.get(), name.c_str(), detail::file_type(type), space.get(), lcpl.get(), dcpl.get(),
                         H5P_DEFAULT),
              H5Kind::kDataset);
  if (!ds.valid()) return note(h5_error(p, op));
  if (n > 0 && H5Dwrite(ds.get(), detail::native_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    return note(h5_error(p, "write dataset " + name));
  return note(ds.close(p, "write dataset " + name));
}

Status H5Writer::write_vlen(std::string_view dataset, std::span<const std::string_view> values, bool is_table) {
  const std::string name = detail::object_path(dataset);
  const std::string op = "create dataset " + name;
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  const std::string p = path_.string();
  const CStrings strs(values);
  const hsize_t dims = values.size();
  // Each element is a 16-byte global-heap id in the dataset; the strings are in the global heap.
  const bool compact = values.size() * sizeof(hvl_t) <= kCompactMaxBytes;
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Kind::kDataspace);
  // Filters only see the 16-byte global-heap ids of vlen elements; shuffle+deflate still halves them.
  H5Handle dcpl = compact ? make_compact_dcpl(true)
                          : make_dcpl(options_, values.size(), true,
                                      options_.deflate_level > 0 ? Filters::kShuffleDeflate : Filters::kNone);
  H5Handle lcpl = detail::lcpl_with_parents();
  H5Handle type = detail::vlen_utf8_type();
  if (!space.valid() || !dcpl.valid() || !lcpl.valid() || !type.valid()) return note(h5_error(p, op));
  H5Handle ds(H5Dcreate2(file_.get(), name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
              H5Kind::kDataset);
  if (!ds.valid()) return note(h5_error(p, op));
  H5Handle dxpl = detail::transfer_plist(values.size(), sizeof(hvl_t));
  if (!dxpl.valid()) return note(h5_error(p, op));
  if (!values.empty() && H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, dxpl.get(), strs.ptrs.data()) < 0)
    return note(h5_error(p, "write dataset " + name));
  ASCPROF_RETURN_IF_ERROR(note(ds.close(p, "write dataset " + name)));
  if (strs.repaired > 0) ASCPROF_RETURN_IF_ERROR(set_int_attr(name, "repaired_strings", strs.repaired));
  if (is_table) table_sizes_[name] = values.size();
  return {};
}

Status H5Writer::write_string_column(std::string_view dataset, std::span<const std::string_view> values) {
  return write_vlen(dataset, values, false);
}

Status H5Writer::write_string_column(std::string_view dataset, std::span<const std::string> values) {
  std::vector<std::string_view> views(values.begin(), values.end());
  return write_vlen(dataset, views, false);
}

Status H5Writer::write_string_table(std::string_view dataset, const StringPool& pool) {
  std::vector<std::string_view> views(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) views[i] = pool.view(static_cast<StrId>(i));
  return write_vlen(dataset, views, true);
}

Status H5Writer::write_id_column(std::string_view dataset, std::span<const StrId> ids, std::string_view table) {
  const std::string name = detail::object_path(dataset);
  const std::string tab = detail::object_path(table);
  if (auto it = table_sizes_.find(tab); it != table_sizes_.end() && !ids.empty()) {
    const StrId max_id = *std::max_element(ids.begin(), ids.end());
    if (max_id >= it->second)
      return note(file_error(ErrorCode::kInternal, path_.string(), "write dataset " + name,
                             "string id " + std::to_string(max_id) + " is not in " + tab + " (" +
                                 std::to_string(it->second) + " strings)"));
  }
  ASCPROF_RETURN_IF_ERROR(write_numeric(name, ColumnType::kUInt32, ids.data(), ids.size()));
  return set_string_attr(name, "strings", tab);
}

// ---- attributes ---------------------------------------------------------------------------------

Status H5Writer::write_attr(std::string_view object, std::string_view name, ColumnType type, const void* data,
                            size_t n, bool scalar) {
  const std::string obj_name = detail::object_path(object);
  const std::string op = "write attribute " + detail::attr_label(obj_name, name);
  ASCPROF_RETURN_IF_ERROR(check_open(op));
  H5Handle obj(H5Oopen(file_.get(), obj_name.c_str(), H5P_DEFAULT), H5Kind::kObject);
  if (!obj.valid()) return note(h5_error(path_.string(), op));
  ASCPROF_RETURN_IF_ERROR(write_attr_on(obj.get(), obj_name, name, type, data, n, scalar, /*fresh=*/false));
  return note(obj.close(path_.string(), op));
}

Status H5Writer::write_attr_on(Hid obj, std::string_view object, std::string_view name, ColumnType type,
                               const void* data, size_t n, bool scalar, bool fresh) {
  const std::string attr_name(name);
  const std::string p = path_.string();
  const auto op = [&] { return "write attribute " + detail::attr_label(std::string(object), name); };
  if (!fresh) {
    const htri_t exists = H5Aexists(obj, attr_name.c_str());
    if (exists < 0) return note(h5_error(p, op()));
    if (exists > 0 && H5Adelete(obj, attr_name.c_str()) < 0) return note(h5_error(p, op()));
  }
  const hsize_t dims = n;
  H5Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dims, nullptr), H5Kind::kDataspace);
  H5Handle str_type;
  if (type == ColumnType::kString) str_type = detail::vlen_utf8_type();
  const hid_t ftype = type == ColumnType::kString ? str_type.get() : detail::file_type(type);
  const hid_t mtype = type == ColumnType::kString ? str_type.get() : detail::native_type(type);
  H5Handle acpl(H5Pcreate(H5P_ATTRIBUTE_CREATE), H5Kind::kPropList);
  if (!space.valid() || ftype < 0 || !acpl.valid() || H5Pset_char_encoding(acpl.get(), H5T_CSET_UTF8) < 0)
    return note(h5_error(p, op()));
  H5Handle attr(H5Acreate2(obj, attr_name.c_str(), ftype, space.get(), acpl.get(), H5P_DEFAULT), H5Kind::kAttribute);
  if (!attr.valid()) return note(h5_error(p, op()));
  if ((scalar || n > 0) && H5Awrite(attr.get(), mtype, data) < 0) return note(h5_error(p, op()));
  return note(attr.close(p, op()));
}

Status H5Writer::set_string_array_attr_on(Hid obj, std::string_view object, std::string_view name,
                                          std::span<const std::string> values) {
  const CStrings s(values);
  return write_attr_on(obj, object, name, ColumnType::kString, s.ptrs.data(), values.size(), false, /*fresh=*/true);
}

Status H5Writer::set_string_attr(std::string_view object, std::string_view name, std::string_view value) {
  const CStrings s(std::span<const std::string_view>(&value, 1));
  return write_attr(object, name, ColumnType::kString, s.ptrs.data(), 1, true);
}

Status H5Writer::set_int_attr(std::string_view object, std::string_view name, int64_t value) {
  return write_attr(object, name, ColumnType::kInt64, &value, 1, true);
}

Status H5Writer::set_uint_attr(std::string_view object, std::string_view name, uint64_t value) {
  return write_attr(object, name, ColumnType::kUInt64, &value, 1, true);
}

Status H5Writer::set_double_attr(std::string_view object, std::string_view name, double value) {
  return write_attr(object, name, ColumnType::kDouble, &value, 1, true);
}

Status H5Writer::set_string_array_attr(std::string_view object, std::string_view name,
                                       std::span<const std::string> values) {
  const CStrings s(values);
  return write_attr(object, name, ColumnType::kString, s.ptrs.data(), values.size(), false);
}

Status H5Writer::set_int_array_attr(std::string_view object, std::string_view name, std::span<const int64_t> values) {
  return write_attr(object, name, ColumnType::kInt64, values.data(), values.size(), false);
}

Status H5Writer::set_uint_array_attr(std::string_view object, std::string_view name,
                                     std::span<const uint64_t> values) {
  return write_attr(object, name, ColumnType::kUInt64, values.data(), values.size(), false);
}

Status H5Writer::set_double_array_attr(std::string_view object, std::string_view name,
                                       std::span<const double> values) {
  return write_attr(object, name, ColumnType::kDouble, values.data(), values.size(), false);
}

Status H5Writer::write_fingerprints(std::string_view object, std::span<const Fingerprint> inputs) {
  std::vector<std::string> paths;
  std::vector<int64_t> sizes;
  std::vector<int64_t> mtimes;
  std::vector<uint64_t> hashes;
  for (const auto& fp : inputs) {
    paths.push_back(fp.path);
    sizes.push_back(static_cast<int64_t>(fp.size));
    mtimes.push_back(fp.mtime_ns);
    hashes.push_back(fp.prefix_hash);
  }
  ASCPROF_RETURN_IF_ERROR(set_string_array_attr(object, "input_paths", paths));
  ASCPROF_RETURN_IF_ERROR(set_int_array_attr(object, "input_sizes", sizes));
  ASCPROF_RETURN_IF_ERROR(set_int_array_attr(object, "input_mtimes_ns", mtimes));
  return set_uint_array_attr(object, "input_prefix_hashes", hashes);
}

// ---- link files ---------------------------------------------------------------------------------

Status write_link_file(const fs::path& path, std::span<const ExternalLink> links, std::string_view stage,
                       const WriterOptions& options) {
  ASCPROF_ASSIGN_OR_RETURN(H5Writer w, H5Writer::create(path, options));
  for (const auto& l : links)
    ASCPROF_RETURN_IF_ERROR(w.create_external_link(l.link_name, l.target_file, l.target_object));
  return w.commit(stage);
}

}  // namespace ascprof::store
