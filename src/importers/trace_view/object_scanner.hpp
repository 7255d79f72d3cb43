#pragma once
/// Byte-level scanning helpers for trace_view.json: finding where a JSON object ends without parsing
/// it (string/escape aware brace matching), skipping other values, and resynchronisation points.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ascprof::importers::tv {

inline constexpr size_t kNpos = static_cast<size_t>(-1);

/// Offset of the '}' matching the '{' at `start` (data[start] must be '{'), or kNpos when the data ends
/// first. Only braces outside strings count; escapes inside strings are honoured. Iterative, so any
/// nesting depth is fine. Reads only inside `data` (the tail is copied into a local padded block).
size_t find_object_end(std::string_view data, size_t start);

/// The baseline (SSE2 or portable) variant; find_object_end uses AVX2 when the CPU has it.
size_t find_object_end_portable(std::string_view data, size_t start);

/// Plain byte-at-a-time reference of find_object_end (used by tests to check the SIMD path).
size_t find_object_end_scalar(std::string_view data, size_t start);

/// Offset just past the JSON value starting at `pos` (string, object, array or scalar), or kNpos when
/// the data ends inside it. Scalar and slow: for the few keys of an object-form container only.
size_t skip_value(std::string_view data, size_t pos);

/// Offset just past the string whose opening quote is at `pos`, or kNpos if unterminated.
size_t skip_string(std::string_view data, size_t pos);

/// First offset in (from, to) holding a '{' that plausibly starts a fresh event after a defect:
/// the previous non-whitespace byte is '[' or '}' and the next non-whitespace byte is '"'.
/// kNpos when there is none.
size_t find_resync_point(std::string_view data, size_t from, size_t to);

inline bool is_json_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace ascprof::importers::tv
