#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

model::RankSummary summarize_rank(const SummarizeInput& in, const model::RankStructure& structure) {
  model::RankSummary out;
  summarize_windows(in, structure, out);
  summarize_operators(in, out);
  return out;
}

}  // namespace ascprof::analysis
