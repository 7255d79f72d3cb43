#pragma once
/// msprof-analyze's double hash of an HCCL communicator name: two 32-bit rolling hashes over the
/// Unicode code points (h0 = h0*29 + cp, h1 = h1*131 + cp, both mod 2^32) packed as
/// (h0 << 32) | h1. It is the number after '@' in communication.json op keys, so it links them to
/// profiler_metadata.json `parallel_group_info` (input-formats.md §1). Python hashes ord() of
/// characters, so UTF-8 is decoded first; an invalid byte counts as its own value.
#include <cstdint>
#include <string_view>

namespace ascprof {

uint64_t double_hash(std::string_view comm_name);

}  // namespace ascprof
