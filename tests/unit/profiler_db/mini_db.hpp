#pragma once
// Test helper: small profiler databases with the real schema (as torch_npu 2025 writes it), built
// row by row with known content, and ways to damage them.
#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ascprof::testing {

/// Runs `sql` on the database at `path` (created if absent); aborts the test with SQLite's message.
void sql_exec(const std::filesystem::path& path, const std::string& sql);

/// One compute kernel of a mini database.
struct MiniKernel {
  std::string name, op_type, core;  // core: AI_CORE, AI_VECTOR_CORE, ...
  int64_t start_ns = 0, dur_ns = 0;
  int32_t block = 0, stream = 2;
  std::string input_shapes = "\"8,16\"";  // as the database stores them: one pair of quotes kept
  double mac_time_ns = -1;                // a TASK_PMU_INFO aic_mac_time row when >= 0
};

struct MiniComm {
  std::string name = "hcom_allReduce__1_0_1", op_type = "hcom_allReduce_", group = "10.0.0.1%eth0_60000_0_1";
  int64_t start_ns = 0, dur_ns = 0;
};

/// Writes ascend_pytorch_profiler_<rank>.db at `path`: schema `version` (blockNum columns from
/// 1.1), the given kernels (TASK + COMPUTE_TASK_INFO + PMU rows), comm ops, one STEP_TIME row per
/// entry of `steps` ({id, start, end}), RANK_DEVICE_MAP (rank, device 0) and, when
/// `group_json` is not empty, META_DATA parallel_group_info.
void write_mini_db(const std::filesystem::path& path, int rank, const std::vector<MiniKernel>& kernels,
                   const std::vector<MiniComm>& comms = {}, const std::vector<std::array<int64_t, 3>>& steps = {},
                   const std::string& version = "1.2.0", const std::string& group_json = "");

/// `count` kernels of 1 µs, 2 µs apart, from t0, alternating two names.
std::vector<MiniKernel> mini_kernels(size_t count, int64_t t0 = 1'700'000'000'000'000'000);

/// Overwrites `bytes` bytes at `offset` of the file with 0x55.
void damage_bytes(const std::filesystem::path& path, uint64_t offset, size_t bytes);

}  // namespace ascprof::testing
