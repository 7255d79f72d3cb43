#pragma once
/// RAII ownership of HDF5 identifiers (HighFive's handle pattern over the C API).
///
/// hdf5.h stays out of public headers: `Hid` is the same 64-bit integer as HDF5 1.10's `hid_t`
/// (checked by a static_assert in h5_handle.cpp).
#include <cstdint>
#include <string_view>

#include "ascprof/common/status.hpp"

namespace ascprof::store {

/// An HDF5 identifier (`hid_t`). Negative values are invalid.
using Hid = int64_t;

/// What an identifier names; decides which H5*close releases it.
enum class H5Kind : uint8_t {
  kFile,       ///< H5Fclose
  kGroup,      ///< H5Gclose
  kDataset,    ///< H5Dclose
  kDataspace,  ///< H5Sclose
  kDatatype,   ///< H5Tclose
  kAttribute,  ///< H5Aclose
  kPropList,   ///< H5Pclose
  kObject,     ///< H5Oclose (an object opened generically with H5Oopen)
};

/// Owns one HDF5 identifier and closes it with the close call of its kind. Move-only.
/// A default or moved-from handle is empty (valid() == false) and closes nothing.
class H5Handle {
 public:
  H5Handle() = default;
  /// Takes ownership of `id` (a negative id makes an empty handle).
  H5Handle(Hid id, H5Kind kind) : id_(id), kind_(kind) {}
  ~H5Handle() { reset(); }
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), kind_(o.kind_) { o.id_ = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept;
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;

  Hid get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  H5Kind kind() const { return kind_; }
  /// Closes now; errors are ignored (use close() when the result matters, e.g. for files).
  void reset();
  /// Closes now and reports failure (a file close flushes, so it can fail). Empty handle -> ok.
  /// `path` and `op` name the file and operation in the error text. A failed close leaves the id
  /// open in the library (HDF5 does not release it), so the handle keeps it: the owner of the file
  /// can still discard it (see discard_file), instead of HDF5's exit handler closing it later.
  Status close(std::string_view path, std::string_view op);
  /// Gives up ownership without closing (the caller closes the id).
  Hid release() {
    const Hid id = id_;
    id_ = -1;
    return id;
  }

 private:
  Hid id_ = -1;
  H5Kind kind_ = H5Kind::kObject;
};

/// Closes a file opened for writing and every object still open in it without writing anything
/// more to it: the file's descriptor is first pointed at an in-memory sink (memfd), then each
/// dataset, group, datatype and attribute of it is closed, then the file. For abandoning a file after a failed write (a full
/// disk, a quota, an I/O error): HDF5 keeps an object whose close failed to flush, and at exit its
/// library shutdown closes it again and crashed (SIGSEGV in H5F__close_cb, seen with a full
/// tmpfs). Afterwards the library holds no id of the file. The file's content is undefined: remove it.
void discard_file(H5Handle& file);

/// Tells HDF5 not to close what is still open at process exit (H5dont_atexit). Call first thing in
/// main, before any HDF5 call. Every file the tool writes is closed explicitly; what can remain open
/// is a file whose close failed (a full disk, a file-size limit even for discard_file's sink), whose
/// half torn down state made HDF5's exit handler crash (SIGSEGV in H5F__close_cb).
void skip_hdf5_shutdown_at_exit();

/// Turns off HDF5's automatic printing of error stacks on the calling thread (the Debian library is
/// thread-safe, so the setting is per thread). Every store entry point calls it; errors are
/// reported through Status instead.
void silence_hdf5_errors();

/// A kIo Status "PATH:OP: REASON" where REASON is taken from the calling thread's HDF5 error
/// stack (innermost descriptions first), which is then cleared. Call right after a failed H5* call.
Status h5_error(std::string_view path, std::string_view op);

}  // namespace ascprof::store
