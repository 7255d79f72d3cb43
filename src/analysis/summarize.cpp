#include "ascprof/analysis/summarize.hpp"

#include <mutex>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace ascprof::model {

namespace {

// Node-based set: an element's address is stable, so CountName keeps a plain pointer. Never freed
// (a function-local static outlives every CountName, even in other statics' destructors).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

const std::string* intern(std::string_view name) {
  static auto* mu = new std::mutex;
  static auto* names = new std::unordered_set<std::string, NameHash, std::equal_to<>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = names->find(name);
  if (it == names->end()) it = names->emplace(name).first;
  return &*it;
}

}  // namespace

CountName::CountName() : CountName(std::string_view()) {}
CountName::CountName(std::string_view name) : name_(intern(name)) {}

}  // namespace ascprof::model

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
