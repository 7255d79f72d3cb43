#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

model::RankSummary summarize_rank(const SummarizeInput& in, const model::RankStructure& structure,
                                  const model::RankClasses& classes) {
  model::RankSummary out;
  summarize_windows(in, structure, out);
  out.blocks = summarize_blocks(in, structure, classes);
  summarize_operators(in, out);
  return out;
}

}  // namespace ascprof::analysis
