#pragma once
/// Element types of the 1-D column datasets the store writes and reads.
#include <cstdint>
#include <string>
#include <type_traits>

namespace ascprof::store {

/// On disk every numeric type is the little-endian standard HDF5 type of the same width and sign
/// (H5T_STD_I64LE, H5T_IEEE_F64LE, ...); kString is a variable-length UTF-8 string.
enum class ColumnType : uint8_t { kUInt8, kInt32, kUInt32, kInt64, kUInt64, kFloat, kDouble, kString };

/// Stable lower-case name ("int64", "string") used in error messages.
const char* column_type_name(ColumnType t);

/// True for the C++ element types a numeric column can hold.
template <class T>
inline constexpr bool kIsColumnElement =
    std::is_same_v<T, uint8_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, float> ||
    std::is_same_v<T, double>;

/// The ColumnType of a C++ element type (numeric types only).
template <class T>
  requires kIsColumnElement<T>
constexpr ColumnType column_type_of() {
  if constexpr (std::is_same_v<T, uint8_t>) return ColumnType::kUInt8;
  else if constexpr (std::is_same_v<T, int32_t>) return ColumnType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>) return ColumnType::kUInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return ColumnType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>) return ColumnType::kUInt64;
  else if constexpr (std::is_same_v<T, float>) return ColumnType::kFloat;
  else return ColumnType::kDouble;
}

/// Size in bytes of one element (0 for kString, whose elements vary).
size_t column_type_size(ColumnType t);

}  // namespace ascprof::store
