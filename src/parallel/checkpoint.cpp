#include "ascprof/parallel/checkpoint.hpp"

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/shared_ptr.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ascprof/common/blake2b.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/pipeline/structure_outputs.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "ascprof/store/part_pack.hpp"
#include "ascprof/store/fingerprint.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::parallel {

namespace fs = std::filesystem;

namespace {

// -2: RankOutcome's operator counts (issue 22); -3: its collective marks name each communicator
// once and its step windows are a column table
constexpr const char* kMagic = "ascprof-rank-checkpoint-3";

// What must match for a checkpoint to stand in for a rerun.
struct Header {
  std::string magic, tool_version, knowledge_hash;
  int32_t last_stage = 0;
  int32_t rank_index = 0;  // event ids in the rank's fragments carry it: another numbering redoes the rank
  bool has_candidates = false;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & magic & tool_version & knowledge_hash & last_stage & rank_index & has_candidates;
  }
};

// The task's input files: every kind the rank job fingerprints (pipeline::kInputKinds).
std::vector<std::string> input_files(const pipeline::RankTask& t) {
  std::vector<std::string> out;
  for (const pipeline::InputKind& k : pipeline::kInputKinds)
    if (!(t.*k.path).empty()) out.push_back(t.*k.path);
  out.insert(out.end(), t.moe_traces.begin(), t.moe_traces.end());
  return out;
}

}  // namespace

std::string knowledge_fingerprint(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".rules") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) {
    auto text = read_file(f);
    all += f.filename().string() + '\0' + (text.ok() ? *text : std::string("?")) + '\0';
  }
  return blake2b_hex(all, 16);
}

fs::path checkpoint_path(const pipeline::RankTask& task) {
  return fs::path(task.root_out) / layout::rank_parts(task.rank_id);
}

Status add_checkpoint(store::PartPackWriter& pack, const pipeline::RankTask& task, const pipeline::RankOutcome& o,
                      const std::string& knowledge_hash) {
  if (!o.ok) return {};
  std::ostringstream bytes(std::ios::binary);
  try {
    boost::archive::binary_oarchive ar(bytes);
    Header h{kMagic, ASCPROF_VERSION, knowledge_hash, task.last_stage, task.rank_index, o.candidates != nullptr};
    ar << h << o;
    if (o.candidates != nullptr) ar << *o.candidates;
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, checkpoint_path(task).string() + ": checkpoint record: " + e.what());
  }
  pack.add(kCheckpointSection, bytes.view());
  return {};
}

pipeline::CheckpointSealer checkpoint_sealer(const pipeline::RankTask& task, const std::string& knowledge_hash) {
  return [task, knowledge_hash](const pipeline::RankOutcome& o, store::PartPackWriter& pack) {
    if (const Status st = add_checkpoint(pack, task, o, knowledge_hash); !st.ok())
      std::fprintf(stderr, "ascprof-mpi: warning: checkpoint not saved: %s\n", st.to_string().c_str());
  };
}

void remove_legacy_rank_files(const pipeline::RankTask& task) {
  for (const auto& name : layout::rank_legacy_files(task.rank_id)) {
    std::error_code ec;
    fs::remove_all(fs::path(task.root_out) / name, ec);
  }
}

std::optional<pipeline::RankOutcome> load_checkpoint(const pipeline::RankTask& task, const std::string& knowledge_hash) {
  auto pack = store::PartPackReader::open(checkpoint_path(task));
  if (!pack.ok() || !pack->has(kCheckpointSection)) return std::nullopt;  // gone, damaged, an old layout, unsealed
  auto text = pack->read(kCheckpointSection);
  if (!text.ok()) return std::nullopt;
  pipeline::RankOutcome o;
  auto candidates = std::make_shared<analysis::OperatorCandidates>();
  try {
    std::istringstream in(*text, std::ios::binary);
    boost::archive::binary_iarchive ar(in);
    Header h;
    ar >> h;
    if (h.magic != kMagic || h.tool_version != ASCPROF_VERSION || h.knowledge_hash != knowledge_hash ||
        h.last_stage != task.last_stage || h.rank_index != task.rank_index)
      return std::nullopt;
    ar >> o;
    if (h.has_candidates) ar >> *candidates;
    else candidates.reset();
  } catch (const std::exception&) {  // a damaged or foreign file is simply not a checkpoint
    return std::nullopt;
  }
  if (!o.ok || o.rank_id != task.rank_id) return std::nullopt;
  // every input still the one the checkpoint was made from
  for (const auto& path : input_files(task)) {
    auto fp = store::fingerprint_file(path);
    if (!fp.ok()) return std::nullopt;
    const auto it = std::find_if(o.sources.begin(), o.sources.end(), [&path](const pipeline::SourceRef& s) { return s.path == path; });
    if (it == o.sources.end() || it->size != fp->size || it->mtime_ns != fp->mtime_ns || it->prefix_hash != fp->prefix_hash)
      return std::nullopt;
  }
  // and no MoE trace gone since (a new one is caught above: it has no source entry)
  if (static_cast<size_t>(std::count_if(o.sources.begin(), o.sources.end(), [](const pipeline::SourceRef& s) {
        return s.kind == pipeline::kMoeTraceKind;
      })) != task.moe_traces.size())
    return std::nullopt;
  // and the rank's outputs all there (they are renamed into place only when complete)
  std::error_code ec;
  if (!fs::exists(fs::path(task.root_out) / o.h5_file, ec)) return std::nullopt;
  // (the checkpoint's own pack holds the rank's rows of the root tables too)
  if (!o.parts_file.empty())
    for (const auto& section : pipeline::summary_part_sections())
      if (!pack->has(section)) return std::nullopt;
  if (pipeline::kernel_stages_ran(o) && task.last_stage >= pipeline::kStageSegment)
    for (const auto& section : pipeline::structure_part_sections(task.last_stage >= pipeline::kStageClassify))
      if (!pack->has(section)) return std::nullopt;
  o.candidates = std::move(candidates);
  o.operator_buckets = {};
  o.reused = true;
  // this run spent no time on it
  o.ingest_seconds = o.normalize_seconds = o.write_seconds = o.segment_seconds = o.classify_seconds = o.summarize_seconds = 0;
  o.root_index = task.root_index;  // the plan of this run numbers roots and ranks
  o.rank_index = task.rank_index;
  return o;
}

}  // namespace ascprof::parallel
