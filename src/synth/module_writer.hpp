#pragma once
/// nn.Module ranges of the training scenario (SynthOptions::with_modules; internal to the synth
/// module): the ranges torch_npu's with_modules=True writes on the Python thread, derived from a
/// step's ops and their ModulePart, and the exact device time the analysis must attribute to each.
///
/// Per microbatch forward: Model_0 from the embedding's host op to the last forward layer's; per layer
/// Layer_<n> (n = the model layer) holding Attention_<n> (QKV projection .. its TP allReduce) and
/// MLP_<n> (up projection .. its allReduce); the norms are the layer's own. A range runs from the host
/// start of its first op to the host end of its last; every op's launch lies inside its own host op,
/// so each device task lands in the innermost range of its op. Backward, loss, optimizer, get_batch and
/// the step's EVENT_RECORD are outside every module (the EVENT_RECORD has no launch at all).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "simulate.hpp"

namespace ascprof::synth {

/// One module call, as written to trace_view.json.
struct ModuleRange {
  std::string name;        ///< "Layer_3"
  int64_t start = 0, end = 0;  ///< host ns (physical clock; the writer adds the clock offset)
  uint32_t depth = 0;
  int64_t python_id = 0, parent_id = 0;  ///< args "Python id" / "Python parent id"
};

/// The device tasks behind one op: kernels one, collectives their plane tasks (written on the device).
struct OpDevice {
  uint64_t tasks = 0;
  int64_t ns = 0;
  int64_t wait_ns = 0;  ///< of which Notify_Wait tasks (a collective waiting for its peers)
};

/// What the analysis must find on a rank (ground_truth.json "modules").
struct ModuleTruth {
  struct Row {
    std::string path;
    uint64_t calls = 0, self_tasks = 0, tasks = 0;
    int64_t host_ns = 0, self_device_ns = 0, total_device_ns = 0, self_wait_ns = 0, total_wait_ns = 0;
  };
  std::vector<Row> rows;               ///< in order of first call, a parent before its children
  std::map<std::string, size_t> index; ///< path -> rows index
  uint64_t ranges = 0, tasks = 0, module_tasks = 0, outside_tasks = 0, unlaunched_tasks = 0;
  int64_t device_ns = 0, module_ns = 0, outside_ns = 0, unlaunched_ns = 0;
};

/// The module ranges of one step (`ranges`, outer before inner on a tie) from its ops; adds their exact
/// device time (`device[i]` for rec.ops[i]) to `truth`. `next_id` numbers the Python ids of the rank.
void step_modules(const Scenario& sc, int program, const StepRec& rec, const std::vector<OpDevice>& device,
                  int64_t& next_id, std::vector<ModuleRange>& ranges, ModuleTruth& truth);

}  // namespace ascprof::synth
