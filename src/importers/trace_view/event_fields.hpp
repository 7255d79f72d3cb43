#pragma once
/// The fields of one trace_view.json event as read by the parser (views point into the parser's
/// buffers and are valid only until the next event is parsed).
#include <cstdint>
#include <string_view>

namespace ascprof::importers::tv {

/// Presence bits of EventFields::has.
enum EventBit : uint32_t {
  kHasPh = 1u << 0,
  kHasName = 1u << 1,
  kHasCat = 1u << 2,
  kHasPid = 1u << 3,
  kHasTid = 1u << 4,
  kHasTs = 1u << 5,
  kHasDur = 1u << 6,
  kHasId = 1u << 7,
  kHasArgs = 1u << 8,   ///< args was an object and was read (not skipped)
  kIdIsString = 1u << 9,  ///< id could not be read as an int64: id_str holds its text
  kTidIsString = 1u << 10,  ///< tid was a non-numeric string: tid_str holds it
};

/// Bits of EventFields::bad: the key was present but its value was unusable.
enum BadBit : uint32_t {
  kBadPid = 1u << 0,
  kBadTid = 1u << 1,
  kBadTs = 1u << 2,
  kBadDur = 1u << 3,
  kBadId = 1u << 4,
};

/// Presence bits of ArgFields::present.
enum ArgBit : uint32_t {
  kArgMetaName = 1u << 0,     ///< "name" (metadata events)
  kArgLabels = 1u << 1,       ///< "labels"
  kArgSortIndex = 1u << 2,    ///< "sort_index"
  kArgTaskType = 1u << 3,     ///< "Task Type" (device task)
  kArgTaskId = 1u << 4,       ///< "Task Id"
  kArgConnectionId = 1u << 5, ///< "connection_id"
  kArgStreamId = 1u << 6,     ///< "Physic Stream Id" / "Stream Id"
  kArgDataType = 1u << 7,     ///< "data_type" (communication op)
  kArgAlgType = 1u << 8,      ///< "alg_type"
  kArgCount = 1u << 9,        ///< "count"
  kArgPlaneTaskType = 1u << 10,  ///< "task type" (plane task)
  kArgSrcRank = 1u << 11,     ///< "src rank"
  kArgDstRank = 1u << 12,     ///< "dst rank"
  kArgTransport = 1u << 13,   ///< "transport type"
  kArgSize = 1u << 14,        ///< "size(Byte)"
  kArgLinkType = 1u << 15,    ///< "link type"
  kArgBandwidth = 1u << 16,   ///< "bandwidth(GB/s)"
  kArgMhz = 1u << 17,         ///< "MHz" (AI Core Freq counter)
};

/// Args keys that matter for X events (a staged args row is kept only if one of them is present).
inline constexpr uint32_t kXArgMask = ~(kArgMetaName | kArgLabels | kArgSortIndex);
/// Args keys that mark a communication plane task / a communication op.
inline constexpr uint32_t kPlaneArgMask = kArgPlaneTaskType | kArgSrcRank | kArgDstRank | kArgTransport | kArgLinkType;
inline constexpr uint32_t kCommOpArgMask = kArgDataType | kArgAlgType | kArgCount;

/// The one counter (ph C) whose samples are kept: the AI Core frequency in MHz.
inline constexpr std::string_view kAicoreFreqCounter = "AI Core Freq";

struct ArgFields {
  uint32_t present = 0;
  std::string_view meta_name, labels, task_type, data_type, alg_type, plane_task_type, transport, link_type;
  int64_t sort_index = 0, task_id = 0, connection_id = 0, stream_id = 0, count = 0;
  int64_t src_rank = 0, dst_rank = 0, size_bytes = 0;
  double bandwidth = 0, mhz = 0;
};

struct EventFields {
  uint32_t has = 0;
  uint32_t bad = 0;
  std::string_view ph, name, cat, id_str, tid_str;
  int64_t pid = 0, tid = 0, ts_ns = 0, dur_ns = 0, id = 0;
  ArgFields args;

  void reset() {
    has = 0;
    bad = 0;
    args.present = 0;
  }
};

}  // namespace ascprof::importers::tv
