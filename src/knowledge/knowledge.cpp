#include "ascprof/knowledge/knowledge.hpp"

#include <unistd.h>

#include <cstdlib>

namespace ascprof::knowledge {

namespace fs = std::filesystem;

Result<Knowledge> Knowledge::load(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return file_error(ErrorCode::kKnowledge, dir.string(), "", "knowledge folder not found (use --knowledge DIR)");
  Knowledge k;
  k.dir = dir;
  auto load = [&dir](const char* name) { return load_rule_file(dir / name); };
  ASCPROF_ASSIGN_OR_RETURN(RuleFile vocab, load("vocabulary.rules"));
  ASCPROF_RETURN_IF_ERROR(k.vocab.load(vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile taxonomy, load("operator_taxonomy.rules"));
  ASCPROF_RETURN_IF_ERROR(k.taxonomy.load(taxonomy, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile op_type, load("op_type.rules"));
  ASCPROF_RETURN_IF_ERROR(k.op_types.load_op_type(op_type, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile hccl, load("hccl_op_kind.rules"));
  ASCPROF_RETURN_IF_ERROR(k.op_types.load_hccl_kind(hccl, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile pipeline, load("pipeline.rules"));
  ASCPROF_RETURN_IF_ERROR(k.pipeline.load(pipeline));
  for (const auto& f : k.op_types.fusion_fields())
    if (k.pipeline.field_index(f) < 0)
      return op_type.error(1, "comm_aiv_fusion field '" + f + "' is not a pipeline field in pipeline.rules");
  ASCPROF_ASSIGN_OR_RETURN(RuleFile names, load("name_key.rules"));
  ASCPROF_RETURN_IF_ERROR(k.names.load(names, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile segmentation, load("segmentation.rules"));
  ASCPROF_RETURN_IF_ERROR(k.segmentation.load(segmentation, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile summarize, load("summarize.rules"));
  ASCPROF_RETURN_IF_ERROR(k.summarize.load(summarize));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile diagnostics, load("diagnostics.rules"));
  ASCPROF_RETURN_IF_ERROR(k.diagnostics.load(diagnostics, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile op_align, load("operator_alignment.rules"));
  ASCPROF_RETURN_IF_ERROR(k.operator_alignment.load(op_align, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile deep_dive, load("operator_deep_dive.rules"));
  ASCPROF_RETURN_IF_ERROR(k.deep_dive.load(deep_dive, k.vocab));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile moe_trace, load("moe_trace.rules"));
  ASCPROF_RETURN_IF_ERROR(k.moe_trace.load(moe_trace));
  ASCPROF_ASSIGN_OR_RETURN(RuleFile modules, load("modules.rules"));
  ASCPROF_RETURN_IF_ERROR(k.modules.load(modules));
  return k;
}

fs::path default_knowledge_dir() {
  if (const char* env = std::getenv("ASCPROF_KNOWLEDGE_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bin = exe.parent_path();
    for (const fs::path& cand : {bin / "../share/ascprof-mpi/knowledge", bin / "../knowledge", bin / "../../knowledge"})
      if (fs::is_regular_file(cand / "vocabulary.rules", ec)) return fs::weakly_canonical(cand, ec);
  }
  return "knowledge";
}

}  // namespace ascprof::knowledge
