#pragma once
/// Number parsing for profiler text: exact decimal-µs → integer-ns conversion and tolerant
/// integer/double parsing. Whitespace (including the TAB CANN appends to times) is trimmed.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ascprof {

/// Trims ASCII spaces, tabs, CR and LF on both sides.
std::string_view trim(std::string_view s);

/// True for cells that mean "no value": empty, N/A, nan, none, null (case-insensitive).
bool is_null_cell(std::string_view s);

/// Parses a decimal number of microseconds ("1736408883704643.212", "12", "-3.5", "1.69512E+15")
/// into integer nanoseconds without going through double for plain decimals, so 16-digit epoch
/// times keep sub-µs precision. Rounds half away from zero beyond 3 fractional digits. Exponent
/// forms fall back to long double. Returns nullopt for null cells, garbage, or overflow.
std::optional<int64_t> parse_us_to_ns(std::string_view s);

/// Parses a double (accepts exponent forms, "inf" rejected). nullopt for null cells or garbage.
std::optional<double> parse_double(std::string_view s);

/// Parses a signed decimal integer; nullopt for null cells, garbage or overflow.
std::optional<int64_t> parse_int64(std::string_view s);

/// Converts a double µs value (e.g. JSON `dur`) to integer ns, rounding to nearest.
int64_t us_double_to_ns(double us);

/// Integer ns as µs with exactly 3 decimals ("1736408883704643.212"), with no double in between:
/// epoch µs need 19 digits, more than a double holds. The inverse of parse_us_to_ns.
void append_us(std::string& out, int64_t ns);
inline std::string us_text(int64_t ns) {
  std::string s;
  append_us(s, ns);
  return s;
}

}  // namespace ascprof
