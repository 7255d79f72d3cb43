#pragma once
/// UTF-8 validity, decided in one place for every writer: the JSON writer (invalid bytes become
/// U+FFFD), HDF5 strings (U+FFFD, counted), and error messages and CSV cells (visible \xNN).
#include <cstddef>
#include <string>
#include <string_view>

namespace ascprof {

/// Length (1-4) of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms,
/// no UTF-16 surrogates, nothing above U+10FFFF), or 0 when none starts there. Any byte below 0x80,
/// NUL included, is a sequence of 1: callers decide what NUL means for them.
size_t utf8_sequence_length(std::string_view s, size_t i);

/// `s` with every byte that does not belong to a valid UTF-8 sequence (and every NUL) replaced by
/// the four characters \xNN; valid text is returned unchanged.
std::string escape_invalid_utf8(std::string s);

}  // namespace ascprof
