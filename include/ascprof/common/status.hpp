#pragma once
/// Status and Result<T>: the error currency across module boundaries.
///
/// Every error names the file, the place in it (line, byte offset, key path) and the reason, so a user
/// can open the file and see what is wrong. Exceptions never cross a module boundary.
#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "ascprof/common/utf8.hpp"

namespace ascprof {

/// Broad error classes; they appear in the JSON result as `error_class`.
enum class ErrorCode {
  kOk = 0,
  kIo,               ///< file missing, unreadable, permission denied, write failed
  kParse,            ///< syntactically broken input (truncated JSON, unterminated quote)
  kSchema,           ///< well-formed input missing what we need (required column, key)
  kInvalidArgument,  ///< bad command line or configuration
  kKnowledge,        ///< a knowledge/ rule file failed validation
  kLimit,            ///< a configured resource bound was exceeded
  kMpi,              ///< a peer process failed
  kInterrupted,      ///< stopped by SIGTERM/SIGINT before it finished (see common/interrupt.hpp)
  kInternal,         ///< a bug in this tool
};

/// Stable lower-case name of an error class, e.g. "parse".
const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  /// Bytes of `message` that are not valid UTF-8 (a damaged input's, a folder name's) are written
  /// as visible \xNN escapes, so every output that carries an error (JSON, CSV, Markdown, stderr)
  /// stays valid UTF-8 and readable by CSV and JSON readers.
  Status(ErrorCode code, std::string message) : code_(code), message_(escape_invalid_utf8(std::move(message))) {}

  static Status ok_status() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "parse: kernel_details.csv:12: unterminated quoted field".
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

/// Builds "FILE:PLACE: REASON" (PLACE omitted when empty): the one message shape users see.
Status file_error(ErrorCode code, std::string_view file, std::string_view place, std::string_view reason);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result constructed from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ascprof

#define ASCPROF_CONCAT_INNER(a, b) a##b
#define ASCPROF_CONCAT(a, b) ASCPROF_CONCAT_INNER(a, b)

#define ASCPROF_RETURN_IF_ERROR(expr)         \
  do {                                        \
    ::ascprof::Status ascprof_st_ = (expr);   \
    if (!ascprof_st_.ok()) return ascprof_st_; \
  } while (0)

#define ASCPROF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#define ASCPROF_ASSIGN_OR_RETURN(lhs, expr) \
  ASCPROF_ASSIGN_OR_RETURN_IMPL(ASCPROF_CONCAT(ascprof_res_, __LINE__), lhs, expr)
