// StepWindows: the step windows of ranks by column (align.hpp).
#include <string>
#include <string_view>

#include "ascprof/analysis/align.hpp"

namespace ascprof::analysis {

StepWindows::StepWindows(const std::vector<StepWindow>& windows) {
  for (const auto& w : windows) push_back(w);
}

StepWindows::StepWindows(std::initializer_list<StepWindow> windows) {
  for (const auto& w : windows) push_back(w);
}

uint32_t StepWindows::intern(std::string_view s) {
  const auto [it, added] = index_.try_emplace(std::string(s), static_cast<uint32_t>(names_.size()));
  if (added) names_.emplace_back(s);
  return it->second;
}

void StepWindows::reindex() {
  index_.clear();
  for (size_t i = 0; i < names_.size(); ++i) index_.try_emplace(names_[i], static_cast<uint32_t>(i));
}

void StepWindows::push_back(const StepWindow& w) {
  rank_.push_back(intern(w.rank_id));
  family_.push_back(intern(w.step_family));
  main_layer_count_.push_back(w.main_layer_count);
  microbatch_count_.push_back(w.microbatch_count);
  start_ns_.push_back(w.start_ns);
  end_ns_.push_back(w.end_ns);
  segment_chars_ += w.segment_id;
  segment_end_.push_back(segment_chars_.size());
}

void StepWindows::append(const StepWindows& other) {
  std::vector<uint32_t> here(other.names_.size());  // other's name index -> this table's
  for (size_t i = 0; i < other.names_.size(); ++i) here[i] = intern(other.names_[i]);
  for (const uint32_t r : other.rank_) rank_.push_back(here[r]);
  for (const uint32_t f : other.family_) family_.push_back(here[f]);
  main_layer_count_.insert(main_layer_count_.end(), other.main_layer_count_.begin(), other.main_layer_count_.end());
  microbatch_count_.insert(microbatch_count_.end(), other.microbatch_count_.begin(), other.microbatch_count_.end());
  start_ns_.insert(start_ns_.end(), other.start_ns_.begin(), other.start_ns_.end());
  end_ns_.insert(end_ns_.end(), other.end_ns_.begin(), other.end_ns_.end());
  const uint64_t base = segment_chars_.size();
  segment_chars_ += other.segment_chars_;
  for (const uint64_t e : other.segment_end_) segment_end_.push_back(base + e);
}

StepWindowView StepWindows::operator[](size_t i) const {
  const uint64_t begin = i == 0 ? 0 : segment_end_[i - 1];
  StepWindowView v;
  v.rank_id = names_[rank_[i]];
  v.segment_id = std::string_view(segment_chars_).substr(begin, segment_end_[i] - begin);
  v.step_family = names_[family_[i]];
  v.main_layer_count = main_layer_count_[i];
  v.start_ns = start_ns_[i];
  v.end_ns = end_ns_[i];
  v.microbatch_count = microbatch_count_[i];
  return v;
}

uint64_t StepWindows::bytes() const {
  uint64_t b = segment_chars_.capacity() + segment_end_.capacity() * sizeof(uint64_t) +
               (start_ns_.capacity() + end_ns_.capacity()) * sizeof(int64_t) +
               (rank_.capacity() + family_.capacity() + main_layer_count_.capacity() + microbatch_count_.capacity()) *
                   sizeof(uint32_t);
  for (const auto& n : names_) b += sizeof(std::string) + (n.capacity() > 15 ? n.capacity() + 1 : 0);
  return b;
}

}  // namespace ascprof::analysis
