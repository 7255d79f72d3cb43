#pragma once
// A reader for what torch.save writes for a list of int64 tensors (the MoeTracing host tools save
// each rank's profiling slots as `torch.save([group tensors], "rank003.pt")`): PyTorch's zip
// serialization (a stored, uncompressed zip holding <prefix>data.pkl, <prefix>data/<key> raw
// little-endian storages, <prefix>byteorder) and a protocol-2 pickle of torch._utils._rebuild_tensor_v2
// calls over persistent storage ids (moe-tracing.md §3.2). Only what that needs is understood: a
// pickle that builds anything else, a compressed or zip64 entry, a non-int64 storage, or a tensor
// that is not row-major fails with the file and the reason. Private to this module.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::importers::detail {

struct Int64Tensor {
  std::vector<int64_t> shape;  ///< e.g. {24, 2048}
  std::vector<int64_t> data;   ///< row-major, shape's product values
};

/// The tensors of a torch.save'd list (or of a single saved tensor: a list of one).
Result<std::vector<Int64Tensor>> read_torch_int64_list(const std::filesystem::path& path);

}  // namespace ascprof::importers::detail
