// The store's compressor against zlib at the same level, on the rows the part packs hold.
//
// Input: $ASCPROF_CODEC_INPUT (a file, e.g. a root's normalized_event_index.csv or
// raw_kernel_index.csv), else ~16 MB of generated raw_kernel_index-shaped rows (event ids, a
// skewed kernel vocabulary, increasing timestamps with 3 decimals, JSON role lists, shape hashes).
// Compressed in 4 MiB segments, as PartPackWriter stores them. Reported: bytes_per_second (input
// bytes / CPU time) and the counter `ratio` (compressed / input). Inflate is measured the same way.
//   build/benchmarks/codec_benchmark [--benchmark_filter=Deflate]
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "store/zlib_codec.hpp"

namespace {

constexpr size_t kSegment = 4u << 20;  // PartPackWriter::kSegmentBytes

std::string generated_rows() {
  static const char* const kNames[] = {
      "hcom_allGather__612_0_1",         "aclnnEmbedding_GatherV2_GatherV2", "aclnnMatmul_MatMulV3_MatMulV3",
      "aclnnAddRmsNorm_AddRmsNorm",      "aclnnFlashAttentionScore_FA",      "aclnnGroupedMatmul_GMM_GMM",
      "aclnnMoeInitRouting_MoeRouting",  "aclnnSwiGlu_SwiGlu_SwiGlu",        "hcom_allReduce__233_0_1",
      "aclnnCast_Cast_Cast"};
  static const char* const kTypes[] = {"HCOM_ALLGATHER_", "GATHERV2", "MATMUL_V3", "ADD_RMS_NORM", "FLASH_ATTENTION",
                                       "GROUPED_MATMUL",  "MOE_ROUTING", "SWIGLU", "HCOM_ALLREDUCE_", "CAST"};
  std::string out = "event_id,rank_id,source_id,row_idx,name,task_type,start_us,duration_us,wait_us,roles,categories,shape_signature\n";
  uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  double t = 1766406184511064.495;
  char line[512];
  for (size_t row = 0; out.size() < (16u << 20); ++row) {
    const uint64_t r = next();
    const size_t k = (r % 100) < 60 ? r % 3 + 2 : r % 10;  // a few kernels dominate
    const double dur = 1.0 + static_cast<double>(r % 40000) / 1000.0;
    const double wait = (r >> 20) % 4 == 0 ? static_cast<double>((r >> 24) % 3000) / 1000.0 : 0.0;
    t += dur + wait;
    const bool comm = kTypes[k][0] == 'H';
    std::snprintf(line, sizeof line, "evt_0_%zu,rank0,src_5518449995e07fbf,%zu,%s,%s,%.3f,%.3f,%.3f,%s,%s,shape_%016llx\n",
                  row, row, kNames[k], kTypes[k], t, dur, wait, comm ? "\"[\"\"communication\"\"]\"" : "[]",
                  comm ? "\"[\"\"communication.collective\"\"]\"" : "[]",
                  static_cast<unsigned long long>(0x00b00c5c56d2c859ull * (k + 1)));
    out += line;
  }
  return out;
}

const std::string& input() {
  static const std::string data = [] {
    if (const char* p = std::getenv("ASCPROF_CODEC_INPUT"); p != nullptr && *p != '\0') {
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      if (!ss.str().empty()) return ss.str();
      std::fprintf(stderr, "codec_benchmark: cannot read %s; using generated rows\n", p);
    }
    return generated_rows();
  }();
  return data;
}

template <class Compress>
void run_deflate(benchmark::State& state, Compress compress) {
  const std::string& in = input();
  size_t out_bytes = 0;
  for (auto _ : state) {
    out_bytes = 0;
    for (size_t at = 0; at < in.size(); at += kSegment) out_bytes += compress(in.data() + at, std::min(kSegment, in.size() - at));
    benchmark::DoNotOptimize(out_bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.size()));
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(in.size());
}

void BM_DeflateZlib(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  std::vector<unsigned char> out(compressBound(kSegment));
  run_deflate(state, [&](const char* p, size_t n) {
    uLongf len = out.size();
    compress2(out.data(), &len, reinterpret_cast<const Bytef*>(p), n, level);
    return static_cast<size_t>(len);
  });
}

void BM_DeflateStore(benchmark::State& state) {  // detail::ZlibCompressor: libdeflate
  ascprof::store::detail::ZlibCompressor c(static_cast<int>(state.range(0)));
  std::vector<unsigned char> out;
  run_deflate(state, [&](const char* p, size_t n) {
    c.compress(p, n, out);
    return out.size();
  });
}

/// Inflate of the store's segments: zlib's streaming inflate (what packs used before) against the
/// store's whole-buffer decompressor.
struct Segments {
  std::vector<std::vector<unsigned char>> deflated;
  std::vector<size_t> raw;
  Segments() {
    ascprof::store::detail::ZlibCompressor c(1);
    const std::string& in = input();
    for (size_t at = 0; at < in.size(); at += kSegment) {
      raw.push_back(std::min(kSegment, in.size() - at));
      deflated.emplace_back();
      c.compress(in.data() + at, raw.back(), deflated.back());
    }
  }
};

void BM_InflateZlib(benchmark::State& state) {
  static const Segments segs;
  std::vector<unsigned char> out(kSegment);
  for (auto _ : state)
    for (size_t i = 0; i < segs.raw.size(); ++i) {
      uLongf len = out.size();
      uncompress(out.data(), &len, segs.deflated[i].data(), segs.deflated[i].size());
      benchmark::DoNotOptimize(len);
    }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input().size()));
}

void BM_InflateStore(benchmark::State& state) {
  static const Segments segs;
  ascprof::store::detail::ZlibDecompressor d;
  std::vector<unsigned char> out(kSegment);
  for (auto _ : state)
    for (size_t i = 0; i < segs.raw.size(); ++i)
      benchmark::DoNotOptimize(d.decompress_exact(segs.deflated[i].data(), segs.deflated[i].size(), out.data(), segs.raw[i]));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * input().size()));
}

}  // namespace

BENCHMARK(BM_DeflateZlib)->Arg(1)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeflateStore)->Arg(1)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InflateZlib)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InflateStore)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
