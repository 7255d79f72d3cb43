#pragma once
/// Internal helpers shared by the store's .cpp files (not for use outside src/store).
#include <string>
#include <string_view>

#include "ascprof/store/column_type.hpp"
#include "ascprof/store/h5_handle.hpp"

namespace ascprof::store::detail {

/// Native in-memory HDF5 type of a numeric column type. Library-owned: never close it.
Hid native_type(ColumnType t);
/// Little-endian standard on-disk type of a numeric column type. Library-owned: never close it.
Hid file_type(ColumnType t);
/// A new variable-length, NUL-terminated UTF-8 string datatype.
H5Handle vlen_utf8_type();
/// Maps an HDF5 datatype to the ColumnType it exactly matches (any string type -> kString).
/// False for types the store does not use (compound, 16-bit, signed 8-bit, ...).
bool classify_type(Hid type, ColumnType* out);
/// Link-creation property list that creates missing intermediate groups.
H5Handle lcpl_with_parents();
/// Dataset-transfer property list whose type-conversion buffers fit `elements` of `element_size`
/// bytes (at most HDF5's 1 MiB default). HDF5 1.10 callocs two such buffers on every converting
/// H5Dwrite/H5Dread (every vlen string column): at the default size that is 2 MiB zeroed per small
/// table column, and under AddressSanitizer fresh mappings each time.
H5Handle transfer_plist(size_t elements, size_t element_size);
/// Appends `s` to `out` as valid UTF-8 without NUL bytes: invalid sequences and NUL become U+FFFD.
/// Returns true if anything was replaced.
bool append_clean_utf8(std::string& out, std::string_view s);
/// The calling thread's HDF5 error stack as one line (innermost cause first); clears the stack.
std::string h5_error_reason();
/// Root-anchored object path without trailing '/': "kernels/" -> "/kernels", "" -> "/".
std::string object_path(std::string_view p);
/// "object@name" for attribute operations in error text.
std::string attr_label(std::string_view object, std::string_view name);

}  // namespace ascprof::store::detail
