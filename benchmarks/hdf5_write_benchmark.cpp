// HDF5 store write throughput: a kernel-table-shaped 10M-row table plus a 100k-entry string table.
//
// Columns (20): int64 x3 (start_ns, dur_ns, source_offset), int32 x2 (stream_id, block_dim),
// uint32 string ids x4 (name, type, input_shapes, accelerator_core), double x11 (metrics).
// Values imitate profiler data (sorted timestamps, small-range ids with a skewed distribution,
// metrics with 3 decimals, some all-NaN metric columns) so the compression ratio means something.
// Reported: bytes_per_second = raw column bytes / CPU time (the machine is shared, so CPU time is
// the stable number; wall time is printed too); counters file_MB and ratio (raw / file).
// Variants over deflate level and chunk size justify the defaults in h5_writer.hpp.
// Output goes to $ASCPROF_BENCH_DIR (default: the system temp folder) and is deleted afterwards.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ascprof/store/h5_writer.hpp"

namespace {

namespace fs = std::filesystem;
using ascprof::StrId;
using ascprof::StringPool;
using ascprof::store::H5Writer;
using ascprof::store::TableWriter;
using ascprof::store::WriterOptions;

fs::path bench_dir() {
  if (const char* d = std::getenv("ASCPROF_BENCH_DIR"); d != nullptr && *d != '\0') return d;
  return fs::temp_directory_path();
}

struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

/// Skewed id in [1, n): a few kernels dominate, as in real captures.
StrId skewed_id(Rng& r, uint32_t n) {
  const double u = r.unit();
  return 1 + static_cast<StrId>(std::pow(u, 4.0) * (n - 2));
}

struct Data {
  size_t rows = 0;
  StringPool pool;
  std::vector<int64_t> i64[3];
  std::vector<int32_t> i32[2];
  std::vector<StrId> ids[4];
  std::vector<double> f64[11];

  size_t raw_bytes() const { return rows * (3 * 8 + 2 * 4 + 4 * 4 + 11 * 8); }
};

const Data& data(size_t rows) {
  static Data d;
  if (d.rows == rows) return d;
  d = Data();
  d.rows = rows;
  Rng r;
  // 100k distinct strings: operator names, shapes, a few non-ASCII names.
  d.pool.intern("AI_CORE");
  for (int i = 0; d.pool.size() < 100000; ++i) {
    switch (i % 4) {
      case 0: d.pool.intern("aclnnMatmul_MatMulV2_" + std::to_string(i) + "_MatMulCommon"); break;
      case 1: d.pool.intern("\"" + std::to_string(i % 977) + ",4096;" + std::to_string(i) + ",128,64\""); break;
      case 2: d.pool.intern("Default/network/layers." + std::to_string(i) + "/attention/FlashAttentionScore"); break;
      default: d.pool.intern("融合算子_" + std::to_string(i)); break;
    }
  }
  const auto n_str = static_cast<uint32_t>(d.pool.size());
  for (auto& c : d.i64) c.resize(rows);
  for (auto& c : d.i32) c.resize(rows);
  for (auto& c : d.ids) c.resize(rows);
  for (auto& c : d.f64) c.resize(rows);
  int64_t t = 1736408883704643000;
  uint64_t off = 0;
  for (size_t i = 0; i < rows; ++i) {
    const uint64_t x = r.next();
    t += static_cast<int64_t>(x % 20000);
    off += 200 + x % 300;
    d.i64[0][i] = t;
    d.i64[1][i] = static_cast<int64_t>((x >> 20) % 2000000) / 20 * 20;  // 20 ns granularity
    d.i64[2][i] = static_cast<int64_t>(off);
    d.i32[0][i] = static_cast<int32_t>((x >> 8) % 4);
    d.i32[1][i] = static_cast<int32_t>(8 << ((x >> 12) % 4));
    d.ids[0][i] = skewed_id(r, n_str);
    d.ids[1][i] = skewed_id(r, 200);
    d.ids[2][i] = skewed_id(r, n_str);
    d.ids[3][i] = 1 + static_cast<StrId>((x >> 30) % 3);
    for (size_t m = 0; m < 11; ++m) {
      if (m >= 8) {
        d.f64[m][i] = std::numeric_limits<double>::quiet_NaN();  // metric absent in this era
      } else {
        d.f64[m][i] = std::round(r.unit() * 1000.0 * static_cast<double>(m + 1)) / 1000.0;
      }
    }
  }
  return d;
}

void write_table(const Data& d, const fs::path& file, const WriterOptions& opt, benchmark::State& state) {
  auto w = H5Writer::create(file, opt);
  if (!w.ok()) {
    state.SkipWithError(w.status().to_string().c_str());
    return;
  }
  ascprof::Status s = w->write_string_table("/strings", d.pool);
  TableWriter t(*w, "/kernels", d.rows);
  static const char* kI64[] = {"start_ns", "dur_ns", "source_offset"};
  static const char* kI32[] = {"stream_id", "block_dim"};
  static const char* kIds[] = {"name", "type", "input_shapes", "accelerator_core"};
  for (int c = 0; c < 3; ++c) t.column(kI64[c], d.i64[c]);
  for (int c = 0; c < 2; ++c) t.column(kI32[c], d.i32[c]);
  for (int c = 0; c < 4; ++c) t.id_column(kIds[c], d.ids[c]);
  for (int c = 0; c < 11; ++c) t.column("metric_" + std::to_string(c), d.f64[c]);
  if (s.ok()) s = t.finish();
  if (s.ok()) s = w->commit("bench");
  if (!s.ok()) state.SkipWithError(s.to_string().c_str());
}

// Args: rows, chunk elements, deflate level, adaptive filters (0/1).
void BM_WriteKernelTable(benchmark::State& state) {
  const auto rows = static_cast<size_t>(state.range(0));
  WriterOptions opt;
  opt.chunk_elements = static_cast<uint32_t>(state.range(1));
  opt.deflate_level = static_cast<int>(state.range(2));
  opt.adaptive_filters = state.range(3) != 0;
  const Data& d = data(rows);
  const fs::path file = bench_dir() / ("ascprof_bench_" + std::to_string(::getpid()) + ".h5");
  uintmax_t size = 0;
  for (auto _ : state) {
    write_table(d, file, opt, state);
    state.PauseTiming();
    std::error_code ec;
    size = fs::file_size(file, ec);
    fs::remove(file, ec);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * d.raw_bytes()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows));
  state.counters["raw_MB"] = static_cast<double>(d.raw_bytes()) / 1e6;
  state.counters["file_MB"] = static_cast<double>(size) / 1e6;
  state.counters["ratio"] = size > 0 ? static_cast<double>(d.raw_bytes()) / static_cast<double>(size) : 0.0;
}

// The defaults (64Ki chunks, deflate 1, adaptive filters) at 10M rows, then the alternatives:
// always shuffle+deflate, no compression, deflate 4, smaller and larger chunks.
BENCHMARK(BM_WriteKernelTable)
    ->ArgNames({"rows", "chunk", "level", "adaptive"})
    ->Args({10'000'000, 1 << 16, 1, 1})
    ->Args({10'000'000, 1 << 16, 1, 0})
    ->Args({10'000'000, 1 << 16, 0, 0})
    ->Args({10'000'000, 1 << 16, 4, 1})
    ->Args({10'000'000, 1 << 14, 1, 1})
    ->Args({10'000'000, 1 << 18, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// One 1M-row string column: uint32 ids + string table (what the store does) vs vlen strings per row.
void string_column_bench(benchmark::State& state, bool as_vlen) {
  constexpr size_t kRows = 1'000'000;
  const Data& d = data(10'000'000);
  std::vector<StrId> ids(d.ids[0].begin(), d.ids[0].begin() + kRows);
  std::vector<std::string_view> views(kRows);
  size_t string_bytes = 0;
  for (size_t i = 0; i < kRows; ++i) {
    views[i] = d.pool.view(ids[i]);
    string_bytes += views[i].size();
  }
  const fs::path file = bench_dir() / ("ascprof_bench_s_" + std::to_string(::getpid()) + ".h5");
  uintmax_t size = 0;
  for (auto _ : state) {
    auto w = H5Writer::create(file);
    ascprof::Status s = w.ok() ? ascprof::Status() : w.status();
    if (s.ok()) {
      if (as_vlen) {
        s = w->write_string_column("/t/name", views);
      } else {
        s = w->write_string_table("/strings", d.pool);
        if (s.ok()) s = w->write_id_column("/t/name", ids);
      }
    }
    if (s.ok()) s = w->commit("bench");
    if (!s.ok()) state.SkipWithError(s.to_string().c_str());
    state.PauseTiming();
    std::error_code ec;
    size = fs::file_size(file, ec);
    fs::remove(file, ec);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kRows));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * string_bytes));
  state.counters["file_MB"] = static_cast<double>(size) / 1e6;
}

void BM_StringColumnIds(benchmark::State& state) { string_column_bench(state, false); }
void BM_StringColumnVlen(benchmark::State& state) { string_column_bench(state, true); }
BENCHMARK(BM_StringColumnIds)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_StringColumnVlen)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
