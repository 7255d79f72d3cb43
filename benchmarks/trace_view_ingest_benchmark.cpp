// Ingest throughput of the streaming trace_view.json importer on a generated ~300 MB trace.
//
// The trace imitates a torch_npu + msprof capture of an LLM rank: Python cpu_op / python_function /
// enqueue events (torch_npu key order, ph first, shapes and sometimes call stacks in args), CANN API events,
// Ascend Hardware device tasks, HCCL ops and plane tasks, Overlap Analysis, flows and counter events
// (msprof key order, ph last), with the Python metadata written after its events as torch_npu does.
// Generated once (setup, untimed) in the temp folder; the timed region is one import_trace_view call.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ascprof/importers/trace_view.hpp"

namespace {

namespace fs = std::filesystem;

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t s_;
};

void append_us(std::string& out, int64_t ns) {
  out += std::to_string(ns / 1000);
  out += '.';
  const int64_t f = ns % 1000;
  out += static_cast<char>('0' + f / 100);
  out += static_cast<char>('0' + f / 10 % 10);
  out += static_cast<char>('0' + f % 10);
}

struct Trace {
  fs::path path;
  size_t bytes = 0;
  uint64_t events = 0;
};

Trace generate(size_t target_bytes) {
  Trace t;
  t.path = fs::temp_directory_path() / ("ascprof_tv_bench_" + std::to_string(::getpid()) + ".json");
  std::FILE* f = std::fopen(t.path.c_str(), "wb");
  if (f == nullptr) std::abort();
  const int64_t host_pid = 3096504;
  const int64_t cann_pid = (host_pid << 10 | 7 << 5) & 0xFFFFFFFF;
  const int64_t hw_pid = (host_pid << 10 | 13 << 5) & 0xFFFFFFFF;
  const int64_t hccl_pid = (host_pid << 10 | 15 << 5) & 0xFFFFFFFF;
  const int64_t ovl_pid = (host_pid << 10 | 23 << 5) & 0xFFFFFFFF;
  const int64_t freq_pid = (host_pid << 10 | 14 << 5) & 0xFFFFFFFF;
  const char* ops[] = {"aten::matmul", "aten::add", "aten::mul", "aten::empty", "aten::to", "aten::copy_",
                       "aten::_softmax", "aten::bmm", "npu::npu_fusion_attention", "aten::layer_norm",
                       "aten::view", "aten::transpose", "aten::silu", "aten::embedding"};
  const char* kernels[] = {"MatMulV2_7f3a", "Add_0", "Mul_12", "FlashAttentionScore_1", "RmsNorm_3",
                           "TransData_5", "Cast_2", "SwiGlu_8", "MEMCPY_ASYNC", "Notify Wait"};
  const char* task_types[] = {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "SDMA_SQE", "EVENT_WAIT_SQE"};
  const char* plane_types[] = {"Notify_Record", "Notify_Wait", "Memcpy", "Reduce_Inline"};
  std::string out;
  out.reserve(size_t{8} << 20);
  out += '[';
  bool first = true;
  auto begin_event = [&]() {
    if (!first) out += ", ";
    first = false;
    ++t.events;
  };
  // msprof metadata up front (as in the real files), Python metadata at the end.
  auto meta = [&](const char* what, int64_t pid, int64_t tid, const std::string& args) {
    begin_event();
    out += "{\"name\": \"";
    out += what;
    out += "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"args\": {" + args +
           "}, \"ph\": \"M\"}";
  };
  meta("process_name", cann_pid, 0, "\"name\": \"CANN\"");
  meta("process_name", hw_pid, 0, "\"name\": \"Ascend Hardware\"");
  for (int s = 0; s < 8; ++s) meta("thread_name", hw_pid, s, "\"name\": \"Stream " + std::to_string(s) + "\"");
  meta("process_name", hccl_pid, 0, "\"name\": \"HCCL\"");
  meta("thread_name", hccl_pid, 0, "\"name\": \"Group 0 Communication\"");
  for (int p = 1; p <= 8; ++p) meta("thread_name", hccl_pid, p, "\"name\": \"Plane " + std::to_string(p - 1) + "\"");
  meta("process_name", ovl_pid, 0, "\"name\": \"Overlap Analysis\"");
  const char* ovl_names[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
  for (int k = 0; k < 4; ++k) meta("thread_name", ovl_pid, k, std::string("\"name\": \"") + ovl_names[k] + "\"");
  meta("process_name", freq_pid, 0, "\"name\": \"AI Core Freq\"");

  Rng rng(42);
  int64_t ts = 1736408883688177930;
  uint64_t corr = 1000;
  while (t.bytes + out.size() < target_bytes) {
    ts += 1000 + static_cast<int64_t>(rng.below(20000));
    const uint64_t r = rng.below(100);
    begin_event();
    if (r < 35) {  // Python cpu_op / python_function / enqueue
      const uint64_t kind = rng.below(10);
      out += "{\"ph\": \"X\", \"name\": \"";
      out += kind < 7 ? ops[rng.below(14)] : kind < 9 ? "torch/nn/modules/module.py(1501): _call_impl" : "Enqueue";
      out += "\", \"pid\": " + std::to_string(host_pid) + ", \"tid\": " + std::to_string(host_pid + rng.below(2)) +
             ", \"ts\": \"";
      append_us(out, ts);
      out += "\", \"dur\": " + std::to_string(rng.below(500)) + "." + std::to_string(rng.below(100)) +
             ", \"cat\": \"";
      if (kind < 7) {
        out += "cpu_op\", \"args\": {\"Sequence number\": " + std::to_string(rng.below(5000)) +
               ", \"Fwd thread id\": 0, \"Input Dims\": \"[4096, 1024];\\r\\n[1024]\", \"Input type\": "
               "\"c10::BFloat16;\\r\\nc10::BFloat16\"";
        if (rng.below(4) == 0)
          out += ", \"Call stack\": \"/usr/lib/python3.9/site-packages/torch/nn/modules/linear.py(114): forward;"
                 "\\r\\n/usr/lib/python3.9/site-packages/torch/nn/modules/module.py(1501): _call_impl\"";
        out += "}}";
      } else if (kind < 9) {
        out += "python_function\", \"args\": {\"Python id\": " + std::to_string(rng.below(100000)) +
               ", \"Python parent id\": " + std::to_string(rng.below(100000)) + "}}";
      } else {
        out += "enqueue\", \"args\": {\"correlation_id\": " + std::to_string(++corr) + "}}";
      }
    } else if (r < 50) {  // CANN API
      out += "{\"name\": \"AscendCL@aclnnMatmul\", \"pid\": " + std::to_string(cann_pid) +
             ", \"tid\": " + std::to_string(host_pid + 3) + ", \"ts\": \"";
      append_us(out, ts);
      out += "\", \"dur\": " + std::to_string(rng.below(90)) + "." + std::to_string(rng.below(100)) +
             ", \"args\": {\"Thread Id\": " + std::to_string(host_pid + 3) +
             ", \"Mode\": \"ACL_OP\", \"level\": \"acl\", \"id\": \"aclnnMatmul\", \"item_id\": \"0\", "
             "\"connection_id\": " +
             std::to_string(corr) + "}, \"ph\": \"X\"}";
    } else if (r < 70) {  // device task
      const uint64_t stream = rng.below(8);
      out += "{\"name\": \"";
      out += kernels[rng.below(10)];
      out += "\", \"pid\": " + std::to_string(hw_pid) + ", \"tid\": " + std::to_string(stream) + ", \"ts\": \"";
      append_us(out, ts);
      out += "\", \"dur\": " + std::to_string(rng.below(900)) + "." + std::to_string(rng.below(1000)) +
             ", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"" + task_types[rng.below(5)] +
             "\", \"Physic Stream Id\": " + std::to_string(stream) + ", \"Task Id\": " +
             std::to_string(rng.below(60000)) +
             ", \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": " + std::to_string(corr) +
             "}, \"ph\": \"X\"}";
    } else if (r < 75) {  // HCCL plane task (and now and then a collective op)
      if (rng.below(50) == 0) {
        out += "{\"name\": \"hcom_allReduce__586_" + std::to_string(rng.below(100)) + "_1\", \"pid\": " +
               std::to_string(hccl_pid) + ", \"tid\": 0, \"ts\": \"";
        append_us(out, ts);
        out += "\", \"dur\": 79089.52021875, \"args\": {\"connection_id\": " + std::to_string(corr) +
               ", \"model id\": 4294967295, \"data_type\": \"BF16\", \"alg_type\": \"MESH-RING\", \"count\": "
               "4097000}, \"ph\": \"X\"}";
      } else {
        const char* pt = plane_types[rng.below(4)];
        out += std::string("{\"name\": \"") + pt + "\", \"pid\": " + std::to_string(hccl_pid) +
               ", \"tid\": " + std::to_string(1 + rng.below(8)) + ", \"ts\": \"";
        append_us(out, ts);
        out += std::string("\", \"dur\": 0.60003125, \"args\": {\"notify_id\": \"0\", \"duration estimated(us)\": "
                           "0.6002072538860104, \"stream id\": 4, \"task id\": 807, \"context id\": 0, \"task "
                           "type\": \"") +
               pt +
               "\", \"src rank\": 0, \"dst rank\": 4294967295, \"transport type\": \"SDMA\", \"size(Byte)\": "
               "4, \"data type\": \"INT32\", \"link type\": \"ON_CHIP\", \"bandwidth(GB/s)\": "
               "0.006666319462527994, \"model id\": 4294967295}, \"ph\": \"X\"}";
      }
    } else if (r < 78) {  // overlap
      const uint64_t k = rng.below(4);
      out += std::string("{\"name\": \"") + ovl_names[k] + "\", \"pid\": " + std::to_string(ovl_pid) +
             ", \"tid\": " + std::to_string(k) + ", \"ts\": \"";
      append_us(out, ts);
      out += "\", \"dur\": 53.742, \"ph\": \"X\"}";
    } else if (r < 90) {  // flows
      if (rng.below(2) == 0) {
        out += "{\"ph\": \"s\", \"bp\": \"e\", \"name\": \"torch_to_npu\", \"id\": " + std::to_string(ts + 5000000) +
               ", \"pid\": " + std::to_string(host_pid) + ", \"tid\": " + std::to_string(host_pid) + ", \"ts\": \"";
        append_us(out, ts);
        out += "\", \"cat\": \"async_npu\"}";
      } else {
        out += "{\"name\": \"HostToDevice" + std::to_string(corr) + "\", \"ph\": \"f\", \"id\": \"" +
               std::to_string(corr) + "\", \"ts\": \"";
        append_us(out, ts);
        out += "\", \"cat\": \"HostToDevice\", \"pid\": " + std::to_string(hw_pid) + ", \"tid\": 2, \"bp\": \"e\"}";
      }
    } else {  // counters
      out += "{\"name\": \"AI Core Freq\", \"ts\": \"";
      append_us(out, ts);
      out += "\", \"pid\": " + std::to_string(freq_pid) + ", \"tid\": 0, \"args\": {\"MHz\": 1800}, \"ph\": \"C\"}";
    }
    if (out.size() > (size_t{4} << 20)) {
      std::fwrite(out.data(), 1, out.size(), f);
      t.bytes += out.size();
      out.clear();
    }
  }
  out += ", {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(host_pid) +
         ", \"tid\": 0, \"args\": {\"name\": \"Python\"}}]";
  ++t.events;
  std::fwrite(out.data(), 1, out.size(), f);
  t.bytes += out.size();
  std::fclose(f);
  return t;
}

const Trace& trace() {
  static const Trace t = [] {
    size_t mb = 300;
    if (const char* e = std::getenv("ASCPROF_TV_BENCH_MB")) mb = static_cast<size_t>(std::atol(e));
    return generate(mb << 20);
  }();
  return t;
}

// Removes the generated file at exit (holds its own copy of the path: statics die in reverse order).
struct Cleanup {
  fs::path path;
  ~Cleanup() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

void run(benchmark::State& state, ascprof::importers::TraceViewParseMode mode) {
  const Trace& t = trace();
  static const Cleanup cleanup{t.path};
  ascprof::importers::TraceViewOptions opts;
  opts.parse_mode = mode;
  uint64_t host = 0;
  for (auto _ : state) {
    ascprof::StringPool pool;
    ascprof::model::TraceTables tables;
    ascprof::Stats stats;
    const ascprof::Status st = ascprof::importers::import_trace_view(t.path, pool, tables, stats, opts);
    if (!st.ok() || tables.events_total != t.events) {
      state.SkipWithError(("import failed: " + st.to_string()).c_str());
      break;
    }
    host = tables.host_ops.size();
    benchmark::DoNotOptimize(tables);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.bytes));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(t.events * state.iterations()), benchmark::Counter::kIsRate);
  state.counters["file_MB"] = static_cast<double>(t.bytes) / 1e6;
  state.counters["host_ops"] = static_cast<double>(host);
}

using ascprof::importers::TraceViewParseMode;
// Default: batches of events parsed as one simdjson document each.
void BM_TraceViewIngest(benchmark::State& state) { run(state, TraceViewParseMode::kBatched); }
// One simdjson document per event, copied into a padded buffer.
void BM_TraceViewIngestPerEvent(benchmark::State& state) { run(state, TraceViewParseMode::kPerEvent); }

BENCHMARK(BM_TraceViewIngest)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TraceViewIngestPerEvent)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
