#pragma once
/// Columnar table of communication.json for one profiling rank: one row per (step, op).
#include <array>
#include <cstdint>
#include <vector>

#include "ascprof/common/string_pool.hpp"

namespace ascprof::model {

/// Transport keys of "Communication Bandwidth Info", in file order.
enum class Transport : uint8_t { kRdma = 0, kHccs, kPcie, kSdma, kSio, kCount };
inline constexpr const char* kTransportNames[] = {"RDMA", "HCCS", "PCIE", "SDMA", "SIO"};
inline constexpr size_t kTransportCount = static_cast<size_t>(Transport::kCount);

struct TransportColumns {
  std::vector<double> size_mb;        ///< "Transit Size(MB)"
  std::vector<double> time_ms;        ///< "Transit Time(ms)"
  std::vector<double> bandwidth_gbps; ///< "Bandwidth(GB/s)" (NaN where the entry has none, e.g. Total Op Info)
  std::vector<double> large_packet_ratio;
};

struct CommStatTable {
  std::vector<int32_t> step;          ///< N of "step<N>"; -1 for plain "step"
  std::vector<uint8_t> is_p2p;        ///< 1 under "p2p", 0 under "collective"
  std::vector<uint8_t> is_total;      ///< 1 for the "Total Op Info" row
  std::vector<StrId> op_name;         ///< name before '@' ("hcom_allReduce__612_4_1"; "Total Op Info")
  std::vector<uint64_t> group_hash;   ///< number after '@' (0 when absent)
  std::vector<StrId> op_kind;         ///< lower-case text between "hcom_" and the first "__"/"_Aicpu"
  std::vector<int64_t> start_ns;      ///< "Start Timestamp(us)" as ns (kAbsentI64 for totals)
  std::vector<double> elapse_ms;
  std::vector<double> transit_ms;
  std::vector<double> wait_ms;
  std::vector<double> sync_ms;
  std::vector<double> idle_ms;
  std::vector<double> wait_ratio;
  std::vector<double> sync_ratio;
  std::array<TransportColumns, kTransportCount> transport;
  size_t size() const { return step.size(); }
};

}  // namespace ascprof::model
