#include "ascprof/store/h5_handle.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "ascprof/common/utf8.hpp"
#include "ascprof/store/column_type.hpp"
#include "h5_detail.hpp"

namespace ascprof::store {

static_assert(std::is_same_v<Hid, hid_t>, "Hid must be HDF5's hid_t (HDF5 >= 1.10)");

H5Handle& H5Handle::operator=(H5Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    kind_ = o.kind_;
    o.id_ = -1;
  }
  return *this;
}

namespace {

herr_t close_id(hid_t id, H5Kind kind) {
  switch (kind) {
    case H5Kind::kFile: return H5Fclose(id);
    case H5Kind::kGroup: return H5Gclose(id);
    case H5Kind::kDataset: return H5Dclose(id);
    case H5Kind::kDataspace: return H5Sclose(id);
    case H5Kind::kDatatype: return H5Tclose(id);
    case H5Kind::kAttribute: return H5Aclose(id);
    case H5Kind::kPropList: return H5Pclose(id);
    case H5Kind::kObject: return H5Oclose(id);
  }
  return -1;
}

struct WalkState {
  std::vector<std::string> parts;
};

// HDF5's file drivers describe a failed system call in one long multi-line text ("file write
// failed: time = ..., filename = ..., errno = 28, error message = 'No space left on device', buf =
// ..."). Users need the operation and the system's reason: "file write failed: No space left on
// device (errno 28)".
std::string condense_system_error(std::string desc) {
  const size_t msg = desc.find("error message = '");
  if (msg == std::string::npos) return desc;
  const size_t start = msg + 17;
  const size_t end = desc.find('\'', start);
  std::string reason = desc.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const size_t errno_at = desc.find("errno = ");
  if (errno_at != std::string::npos) {
    const size_t e0 = errno_at + 8, e1 = desc.find_first_not_of("0123456789", e0);
    reason += " (errno " + desc.substr(e0, e1 - e0) + ")";
  }
  const size_t colon = desc.find(':');
  return (colon == std::string::npos ? std::string("system call failed") : desc.substr(0, colon)) + ": " + reason;
}

herr_t collect_error(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto* st = static_cast<WalkState*>(data);
  std::string part;
  if (err->desc != nullptr && err->desc[0] != '\0') part = condense_system_error(err->desc);
  // The minor message ("file exists", "can't open object") often says more than desc; add it
  // only for the innermost record, where it names the root cause.
  if (st->parts.empty()) {
    char minor[256];
    if (H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor)) > 0) {
      const std::string m(minor);
      if (!m.empty() && part.find(m) == std::string::npos) part = part.empty() ? m : part + " (" + m + ")";
    }
  }
  if (part.empty()) return 0;
  for (const auto& p : st->parts)
    if (p == part) return 0;
  st->parts.push_back(std::move(part));
  return 0;
}

}  // namespace

void H5Handle::reset() {
  if (id_ >= 0) {
    silence_hdf5_errors();
    if (close_id(id_, kind_) < 0) H5Eclear2(H5E_DEFAULT);
    id_ = -1;
  }
}

Status H5Handle::close(std::string_view path, std::string_view op) {
  if (id_ < 0) return {};
  silence_hdf5_errors();
  if (close_id(id_, kind_) < 0) {
    // HDF5 1.10 keeps the id when its close fails (e.g. a flush hit a full disk): keep owning it
    return h5_error(path, op);
  }
  id_ = -1;
  return {};
}

void discard_file(H5Handle& file) {
  if (!file.valid()) return;
  silence_hdf5_errors();
  const hid_t f = file.release();
  // From here on the file's writes go to an anonymous in-memory file: not /dev/null, because the
  // close truncates the file to its end address, which a character device refuses. A memfd holds
  // only what the closes below flush (dirty metadata and chunk caches), and its pages are sparse.
  void* vfd = nullptr;
  if (H5Fget_vfd_handle(f, H5P_DEFAULT, &vfd) >= 0 && vfd != nullptr) {
    const int sink = ::memfd_create("ascprof-discarded-h5", MFD_CLOEXEC);
    if (sink >= 0) {
      ::dup2(sink, *static_cast<int*>(vfd));
      ::close(sink);
    }
  }
  constexpr unsigned kObjects = H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR | H5F_OBJ_LOCAL;
  const ssize_t n = H5Fget_obj_count(f, kObjects);
  if (n > 0) {
    std::vector<hid_t> ids(static_cast<size_t>(n));
    const ssize_t got = H5Fget_obj_ids(f, kObjects, static_cast<size_t>(n), ids.data());
    for (ssize_t i = 0; i < got; ++i) {
      const hid_t id = ids[static_cast<size_t>(i)];
      // an id may carry several references (H5Iinc_ref); drop them all
      for (int refs = H5Iget_ref(id); refs > 0 && H5Iis_valid(id) > 0; --refs)
        if (H5Idec_ref(id) < 0) break;
    }
  }
  // Once. After a failed H5Fclose the library's file object is half torn down, and a second close
  // (or the exit handler's) crashes; the memfd above is what makes this one succeed.
  H5Fclose(f);
  H5Eclear2(H5E_DEFAULT);
}

void skip_hdf5_shutdown_at_exit() { H5dont_atexit(); }

void silence_hdf5_errors() {
  // Per-thread in the thread-safe Debian build, hence thread_local.
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

Status h5_error(std::string_view path, std::string_view op) {
  return file_error(ErrorCode::kIo, path, op, detail::h5_error_reason());
}

std::string detail::h5_error_reason() {
  WalkState st;
  const hid_t stack = H5Eget_current_stack();  // copies and clears the thread's stack
  if (stack >= 0) {
    H5Ewalk2(stack, H5E_WALK_UPWARD, collect_error, &st);
    H5Eclose_stack(stack);
  }
  // The innermost record names the cause, the outermost the API call; the ones between are
  // library plumbing ("traversal operator failed") that only lengthens the message.
  if (st.parts.empty()) return "HDF5 call failed";
  std::string reason = st.parts.front();
  if (st.parts.size() > 1) reason += " <- " + st.parts.back();
  return reason;
}

const char* column_type_name(ColumnType t) {
  switch (t) {
    case ColumnType::kUInt8: return "uint8";
    case ColumnType::kInt32: return "int32";
    case ColumnType::kUInt32: return "uint32";
    case ColumnType::kInt64: return "int64";
    case ColumnType::kUInt64: return "uint64";
    case ColumnType::kFloat: return "float32";
    case ColumnType::kDouble: return "float64";
    case ColumnType::kString: return "string";
  }
  return "unknown";
}

size_t column_type_size(ColumnType t) {
  switch (t) {
    case ColumnType::kUInt8: return 1;
    case ColumnType::kInt32:
    case ColumnType::kUInt32:
    case ColumnType::kFloat: return 4;
    case ColumnType::kInt64:
    case ColumnType::kUInt64:
    case ColumnType::kDouble: return 8;
    case ColumnType::kString: return 0;
  }
  return 0;
}

namespace detail {

Hid native_type(ColumnType t) {
  switch (t) {
    case ColumnType::kUInt8: return H5T_NATIVE_UINT8;
    case ColumnType::kInt32: return H5T_NATIVE_INT32;
    case ColumnType::kUInt32: return H5T_NATIVE_UINT32;
    case ColumnType::kInt64: return H5T_NATIVE_INT64;
    case ColumnType::kUInt64: return H5T_NATIVE_UINT64;
    case ColumnType::kFloat: return H5T_NATIVE_FLOAT;
    case ColumnType::kDouble: return H5T_NATIVE_DOUBLE;
    case ColumnType::kString: return -1;
  }
  return -1;
}

Hid file_type(ColumnType t) {
  switch (t) {
    case ColumnType::kUInt8: return H5T_STD_U8LE;
    case ColumnType::kInt32: return H5T_STD_I32LE;
    case ColumnType::kUInt32: return H5T_STD_U32LE;
    case ColumnType::kInt64: return H5T_STD_I64LE;
    case ColumnType::kUInt64: return H5T_STD_U64LE;
    case ColumnType::kFloat: return H5T_IEEE_F32LE;
    case ColumnType::kDouble: return H5T_IEEE_F64LE;
    case ColumnType::kString: return -1;
  }
  return -1;
}

H5Handle vlen_utf8_type() {
  H5Handle t(H5Tcopy(H5T_C_S1), H5Kind::kDatatype);
  if (!t.valid()) return t;
  if (H5Tset_size(t.get(), H5T_VARIABLE) < 0 || H5Tset_cset(t.get(), H5T_CSET_UTF8) < 0 ||
      H5Tset_strpad(t.get(), H5T_STR_NULLTERM) < 0)
    return {};
  return t;
}

bool classify_type(Hid type, ColumnType* out) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_STRING) {
    *out = ColumnType::kString;
    return true;
  }
  if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if (size == 1 && !is_signed) *out = ColumnType::kUInt8;
    else if (size == 4) *out = is_signed ? ColumnType::kInt32 : ColumnType::kUInt32;
    else if (size == 8) *out = is_signed ? ColumnType::kInt64 : ColumnType::kUInt64;
    else return false;
    return true;
  }
  if (cls == H5T_FLOAT) {
    if (size == 4) *out = ColumnType::kFloat;
    else if (size == 8) *out = ColumnType::kDouble;
    else return false;
    return true;
  }
  return false;
}

H5Handle lcpl_with_parents() {
  H5Handle p(H5Pcreate(H5P_LINK_CREATE), H5Kind::kPropList);
  if (p.valid() && H5Pset_create_intermediate_group(p.get(), 1) < 0) return {};
  if (p.valid() && H5Pset_char_encoding(p.get(), H5T_CSET_UTF8) < 0) return {};
  return p;
}

H5Handle transfer_plist(size_t elements, size_t element_size) {
  constexpr size_t kDefault = size_t{1} << 20;  // H5D_TEMP_BUF_SIZE
  constexpr size_t kMin = 4096;
  const size_t want = elements > kDefault / std::max<size_t>(element_size, 1) ? kDefault : elements * element_size;
  H5Handle p(H5Pcreate(H5P_DATASET_XFER), H5Kind::kPropList);
  if (p.valid() && H5Pset_buffer(p.get(), std::clamp(want, kMin, kDefault), nullptr, nullptr) < 0) return {};
  return p;
}

bool append_clean_utf8(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  // Fast path: plain ASCII without NUL is by far the common case for profiler names.
  size_t i = 0;
  while (i < n && p[i] != 0 && p[i] < 0x80) ++i;
  if (i == n) {
    out.append(s);
    return false;
  }
  out.append(s.data(), i);
  bool repaired = false;
  while (i < n) {
    const size_t len = p[i] == 0 ? 0 : utf8_sequence_length(s, i);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");
      repaired = true;
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  return repaired;
}

std::string object_path(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  std::string s;
  s.reserve(p.size() + 1);
  if (p.empty() || p.front() != '/') s.push_back('/');
  s.append(p.data(), p.size());
  return s;
}

std::string attr_label(std::string_view object, std::string_view name) {
  std::string s(object);
  s += '@';
  s += name;
  return s;
}

}  // namespace detail
}  // namespace ascprof::store
