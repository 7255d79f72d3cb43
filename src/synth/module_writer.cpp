#include "module_writer.hpp"

#include <algorithm>
#include <tuple>

namespace ascprof::synth {

namespace {

// The model layer of each forward layer of a program (-1 for the others): its tag with a pipeline,
// else its position among the forward layers of its microbatch.
std::vector<int> model_layers(const StepProgram& p) {
  std::vector<int> out(p.layers.size(), -1);
  std::map<int, int> seen;  // microbatch -> forward layers so far
  for (size_t l = 0; l < p.layers.size(); ++l) {
    if (p.layers[l].role != "forward") continue;
    const int n = seen[p.layers[l].microbatch]++;
    out[l] = p.layers[l].model_layer >= 0 ? p.layers[l].model_layer : n;
  }
  return out;
}

// An open range while the ops are walked.
struct Open {
  bool on = false;
  size_t range = 0;  // index into the step's ranges
  int key = -1;      // the layer it belongs to (Layer / Attention / MLP)
};

}  // namespace

void step_modules(const Scenario& sc, int program, const StepRec& rec, const std::vector<OpDevice>& device,
                  int64_t& next_id, std::vector<ModuleRange>& ranges, ModuleTruth& truth) {
  const StepProgram& prog = sc.programs[static_cast<size_t>(program)];
  const std::vector<int> model_layer = model_layers(prog);
  ranges.clear();
  std::vector<std::string> paths;        // per range
  std::vector<int> outer;                // per range: the range holding it (-1 none)
  std::vector<int> owner;                // per op: its innermost range (-1 none)
  owner.assign(rec.ops.size(), -1);
  Open model, layer, part;
  ModulePart part_kind = ModulePart::kNone;
  auto open = [&](Open& o, std::string name, int64_t start, const Open* parent, int key) {
    ModuleRange r;
    r.name = std::move(name);
    r.start = start;
    r.depth = parent == nullptr ? 0 : ranges[parent->range].depth + 1;
    r.python_id = next_id++;
    r.parent_id = parent == nullptr ? 1 : ranges[parent->range].python_id;
    paths.push_back(parent == nullptr ? r.name : paths[parent->range] + "/" + r.name);
    outer.push_back(parent == nullptr ? -1 : static_cast<int>(parent->range));
    ranges.push_back(std::move(r));
    o = {true, ranges.size() - 1, key};
  };
  auto extend = [&](Open& o, const OpRec& op) { ranges[o.range].end = op.host_start + op.host_dur; };
  for (size_t i = 0; i < rec.ops.size(); ++i) {
    const OpRec& op = rec.ops[i];
    if (op.kind == OpRec::Kind::kAux) continue;  // no host op of its own
    const ModulePart m = op.module;
    const int ml = op.layer >= 0 ? model_layer[static_cast<size_t>(op.layer)] : -1;
    const bool in_layer = m == ModulePart::kLayer || m == ModulePart::kAttention || m == ModulePart::kMlp;
    if (m == ModulePart::kNone || (in_layer && ml < 0)) {
      model.on = layer.on = part.on = false;
      continue;
    }
    if (!model.on) open(model, "Model_0", op.host_start, nullptr, -1);
    if (!in_layer || (layer.on && layer.key != op.layer)) layer.on = part.on = false;
    if (in_layer && !layer.on) open(layer, "Layer_" + std::to_string(ml), op.host_start, &model, op.layer);
    if (part.on && part_kind != m) part.on = false;
    if ((m == ModulePart::kAttention || m == ModulePart::kMlp) && !part.on) {
      open(part, (m == ModulePart::kAttention ? "Attention_" : "MLP_") + std::to_string(ml), op.host_start, &layer, op.layer);
      part_kind = m;
    }
    extend(model, op);
    if (layer.on) extend(layer, op);
    if (part.on) extend(part, op);
    owner[i] = static_cast<int>(part.on ? part.range : layer.on ? layer.range : model.range);
  }

  // exact device time: each op's tasks go to its innermost range, totals up the parents
  std::vector<int64_t> self_ns(ranges.size(), 0), total_ns(ranges.size(), 0);
  std::vector<int64_t> self_wait(ranges.size(), 0), total_wait(ranges.size(), 0);
  std::vector<uint64_t> self_tasks(ranges.size(), 0), total_tasks(ranges.size(), 0);
  for (size_t i = 0; i < rec.ops.size(); ++i) {
    const OpDevice& d = device[i];
    truth.tasks += d.tasks;
    truth.device_ns += d.ns;
    if (rec.ops[i].kind == OpRec::Kind::kAux) {
      truth.unlaunched_tasks += d.tasks;
      truth.unlaunched_ns += d.ns;
    } else if (owner[i] < 0) {
      truth.outside_tasks += d.tasks;
      truth.outside_ns += d.ns;
    } else {
      truth.module_tasks += d.tasks;
      truth.module_ns += d.ns;
      self_ns[static_cast<size_t>(owner[i])] += d.ns;
      self_wait[static_cast<size_t>(owner[i])] += d.wait_ns;
      self_tasks[static_cast<size_t>(owner[i])] += d.tasks;
    }
  }
  for (size_t r = 0; r < ranges.size(); ++r) {
    for (int p = static_cast<int>(r); p >= 0; p = outer[static_cast<size_t>(p)]) {  // at most 3 levels
      total_ns[static_cast<size_t>(p)] += self_ns[r];
      total_wait[static_cast<size_t>(p)] += self_wait[r];
      total_tasks[static_cast<size_t>(p)] += self_tasks[r];
    }
  }
  truth.ranges += ranges.size();
  for (size_t r = 0; r < ranges.size(); ++r) {
    auto [it, fresh] = truth.index.emplace(paths[r], truth.rows.size());
    if (fresh) truth.rows.push_back({paths[r]});
    ModuleTruth::Row& row = truth.rows[it->second];
    ++row.calls;
    row.host_ns += ranges[r].end - ranges[r].start;
    row.self_device_ns += self_ns[r];
    row.self_tasks += self_tasks[r];
    row.total_device_ns += total_ns[r];
    row.self_wait_ns += self_wait[r];
    row.total_wait_ns += total_wait[r];
    row.tasks += total_tasks[r];
  }
  // file order: by start, the outer range first on a tie (so a reader keeping file order nests them)
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const ModuleRange& a, const ModuleRange& b) { return std::tie(a.start, a.depth) < std::tie(b.start, b.depth); });
}

}  // namespace ascprof::synth
