#include "ascprof/common/status.hpp"

namespace ascprof {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kParse: return "parse";
    case ErrorCode::kSchema: return "schema";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kKnowledge: return "knowledge";
    case ErrorCode::kLimit: return "limit";
    case ErrorCode::kMpi: return "mpi";
    case ErrorCode::kInterrupted: return "interrupted";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

Status file_error(ErrorCode code, std::string_view file, std::string_view place, std::string_view reason) {
  std::string msg(file);
  if (!place.empty()) {
    msg += ':';
    msg += place;
  }
  msg += ": ";
  msg += reason;
  return Status(code, std::move(msg));
}

}  // namespace ascprof
