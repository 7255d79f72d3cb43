// kernel_details.csv ingest throughput on a realistic late-2025 (E3) file of ~200 MB.
//
// Set-up (outside timing) writes the file to a temp folder: CRLF, `Start Time(us)` as %.3f + TAB,
// Wait Time %.6f, tripled-quote shapes, a PipeUtilization metric block, ~75% AI_VECTOR_CORE rows and
// a few COMMUNICATION rows with N/A cells, a few hundred distinct kernel names and shapes.
// Env ASCPROF_CSV_BENCH_MB overrides the size.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/csv_reader.hpp"
#include "ascprof/importers/kernel_details.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output "
    "Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_"
    "ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_"
    "vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_"
    "ratio,aiv_icache_miss_rate,cube_utilization(%)\r\n";

class BenchFile {
 public:
  BenchFile() {
    size_t mb = 200;
    if (const char* e = std::getenv("ASCPROF_CSV_BENCH_MB")) mb = static_cast<size_t>(std::strtoul(e, nullptr, 10));
    dir_ = fs::temp_directory_path() / ("ascprof-csv-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = dir_ / "kernel_details.csv";
    generate(mb << 20);
  }
  ~BenchFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return path_; }
  size_t size() const { return size_; }
  size_t rows() const { return rows_; }

 private:
  void generate(size_t target) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) std::abort();
    std::string buf;
    buf.reserve(size_t{8} << 20);
    buf += kHeader;
    static const char* kOps[] = {"Add",       "Mul",    "Cast",      "RmsNorm", "MatMulV3", "FlashAttentionScore",
                                 "Transpose", "SwiGlu", "RotaryMul", "Slice",   "ConcatD",  "Softmax",
                                 "ReduceSum", "Gather"};
    std::vector<std::string> shapes;
    for (int i = 0; i < 400; ++i) {
      char shape[96];
      std::snprintf(shape, sizeof shape, "%d,%d,%d;%d,1", 1 + i % 8, 4096 >> (i % 5), 128 * (1 + i % 13), 1024 + 7 * i);
      shapes.emplace_back(shape);
    }
    double start_us = 1764246877073569.640;
    char line[2048];
    uint64_t task = 1000;
    while (size_ + buf.size() < target) {
      const size_t i = rows_++;
      const unsigned r = static_cast<unsigned>((i * 2654435761u) % 100u);
      const char* core = r < 75   ? "AI_VECTOR_CORE"
                         : r < 89 ? "AI_CORE"
                         : r < 97 ? "MIX_AIV"
                         : r < 99 ? "MIX_AIC"
                                  : "COMMUNICATION";
      const char* op = kOps[(i * 7 + r) % (sizeof(kOps) / sizeof(kOps[0]))];
      const double dur = 1.0 + static_cast<double>((i * 131) % 20000) / 100.0;
      const double wait = static_cast<double>((i * 17) % 500) / 100.0;
      start_us += wait;
      int n = 0;
      if (r >= 99) {
        n = std::snprintf(line, sizeof line,
                          "13,0,4294967295,N/A,N/A,hcom_allReduce__%zu_%zu_1,hcom_allReduce_,N/A,COMMUNICATION,"
                          "%.3f\t,%.3f,%.6f,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,"
                          "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\r\n",
                          i % 977, i % 13, start_us, dur, wait);
      } else {
        const bool aiv = r < 75;
        const std::string& in = shapes[(i * 13) % shapes.size()];
        const std::string& out = shapes[(i * 29 + 3) % shapes.size()];
        const double a = aiv ? 0.0 : dur * 0.93;
        const double v = aiv ? dur * 0.91 : (r < 89 ? 0.0 : dur * 0.4);
        n = std::snprintf(
            line, sizeof line,
            "13,0,4294967295,%llu,2,aclnn%s_%sAiCore_%s,%s,dynamic,%s,%.3f\t,%.3f,%.6f,%d,%d,NO,\"\"\"%s\"\"\","
            "DT_BF16;DT_BF16,ND;ND,\"\"\"%s\"\"\",DT_BF16,ND,N/A,"
            "%.3f,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
            "%.3f,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\r\n",
            static_cast<unsigned long long>(task++), op, op, op, op, core, start_us, dur, wait, aiv ? 40 : 20,
            r < 89 ? 0 : 40, in.c_str(), out.c_str(), a, static_cast<unsigned long long>(a * 1850), a * 0.6,
            a ? 0.6 : 0.0, a * 0.1, a ? 0.1 : 0.0, a * 0.3, a ? 0.3 : 0.0, a * 0.5, a ? 0.5 : 0.0, a * 0.05,
            a ? 0.05 : 0.0, a ? 0.001 : 0.0, v, static_cast<unsigned long long>(v * 1850), v * 0.2, v ? 0.2 : 0.0,
            v * 0.1, v ? 0.1 : 0.0, v * 0.55, v ? 0.55 : 0.0, v * 0.6, v ? 0.6 : 0.0, v ? 0.02 : 0.0, a ? 61.5 : 0.0);
      }
      start_us += dur;
      buf.append(line, static_cast<size_t>(n));
      if (buf.size() >= (size_t{8} << 20)) flush(f, buf);
    }
    flush(f, buf);
    std::fclose(f);
  }
  void flush(std::FILE* f, std::string& buf) {
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) std::abort();
    size_ += buf.size();
    buf.clear();
  }

  fs::path dir_;
  fs::path path_;
  size_t size_ = 0;
  size_t rows_ = 0;
};

const BenchFile& bench_file() {
  static const BenchFile file;
  return file;
}

void BM_ImportKernelDetailsE3(benchmark::State& state) {
  const BenchFile& file = bench_file();
  size_t rows = 0;
  for (auto _ : state) {
    auto pool = std::make_unique<ascprof::StringPool>();
    auto table = std::make_unique<ascprof::model::KernelTable>();
    ascprof::Stats stats;
    const ascprof::Status st = ascprof::importers::import_kernel_details(file.path(), *pool, *table, stats);
    if (!st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      break;
    }
    rows = table->size();
    benchmark::DoNotOptimize(table->start_ns.data());
    state.PauseTiming();
    table.reset();
    pool.reset();
    state.ResumeTiming();
  }
  if (rows != file.rows()) state.SkipWithError("row count mismatch");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.size()));
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(rows) * static_cast<double>(state.iterations()),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ImportKernelDetailsE3)->Unit(benchmark::kMillisecond)->UseRealTime();

// The tokenizer alone over the same file: the floor under the importer.
void BM_CsvCursorOnlyE3(benchmark::State& state) {
  const BenchFile& file = bench_file();
  auto mapped = ascprof::MappedFile::open(file.path());
  if (!mapped.ok()) {
    state.SkipWithError(mapped.status().to_string().c_str());
    return;
  }
  std::vector<std::string_view> fields;
  size_t total_fields = 0;
  for (auto _ : state) {
    ascprof::Stats stats;
    ascprof::importers::CsvCursor cur(mapped->data(), "bench", stats);
    while (cur.next_row(fields)) total_fields += fields.size();
    benchmark::DoNotOptimize(total_fields);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * file.size()));
}
BENCHMARK(BM_CsvCursorOnlyE3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
