#include "ascprof/parallel/stage_progress.hpp"

#include <algorithm>
#include <cstdio>

#include "ascprof/common/json_writer.hpp"

namespace ascprof::parallel {

namespace {

// One --progress json line: {"phase":…,"stage":…,"done":…,"total":…,"seconds":…[,"eta_s":…]}.
void print_json(const char* phase, const std::string& stage, uint64_t done, uint64_t total, double seconds, double eta) {
  JsonWriter w;
  w.begin_object();
  w.kv("phase", phase);
  w.kv("stage", stage);
  w.kv("done", done);
  w.kv("total", total);
  w.kv("seconds", seconds);
  if (eta >= 0) w.kv("eta_s", eta);
  w.end_object();
  std::fprintf(stderr, "%s\n", w.str().c_str());
}

}  // namespace

StageProgress::StageProgress(ProgressMode mode, std::string_view stage, uint64_t total, uint64_t total_weight)
    : mode_(mode), stage_(stage), total_(total), total_weight_(std::max<uint64_t>(total_weight, 1)), start_(SteadyClock::now()) {
  if (mode_ == ProgressMode::kLines) std::fprintf(stderr, "[stage] %s: %llu part(s)\n", stage_.c_str(), static_cast<unsigned long long>(total_));
  advance(0, 0);
}

void StageProgress::advance(uint64_t done, uint64_t weight_done) {
  if (mode_ == ProgressMode::kNone || finished_) return;
  const bool progressed = done > done_;
  done_ = done;
  const double secs = seconds_since(start_);
  // the remaining weight at the rate measured so far; unknown (-1) before the first part ends
  const double eta = weight_done > 0 ? secs * static_cast<double>(total_weight_ - std::min(weight_done, total_weight_)) /
                                           static_cast<double>(weight_done)
                                     : -1.0;
  if (mode_ == ProgressMode::kBar) {
    const size_t filled = static_cast<size_t>(30.0 * static_cast<double>(weight_done) / static_cast<double>(total_weight_));
    char eta_text[32] = "ETA …";
    if (eta >= 0) std::snprintf(eta_text, sizeof eta_text, "ETA %.0f s", eta);
    std::fprintf(stderr, "\r[%-30s] %-12s %llu/%llu  %.0f s  %s     ", std::string(std::min<size_t>(filled, 30), '#').c_str(),
                 stage_.c_str(), static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_), secs, eta_text);
    std::fflush(stderr);
  } else if (progressed) {
    if (mode_ == ProgressMode::kJson) {
      print_json("stage_progress", stage_, done, total_, secs, std::max(eta, 0.0));
    } else {
      std::fprintf(stderr, "[stage] %s: %llu/%llu done, %.1f s, ETA %.0f s\n", stage_.c_str(), static_cast<unsigned long long>(done),
                   static_cast<unsigned long long>(total_), secs, std::max(eta, 0.0));
    }
  }
}

void StageProgress::finish() {
  if (finished_) return;
  finished_ = true;
  const double secs = seconds_since(start_);
  if (mode_ == ProgressMode::kBar) {
    std::fprintf(stderr, "\r[%s] %-12s %llu/%llu  %.1f s                \n", std::string(30, '#').c_str(), stage_.c_str(),
                 static_cast<unsigned long long>(total_), static_cast<unsigned long long>(total_), secs);
  } else if (mode_ == ProgressMode::kJson) {
    print_json("stage_done", stage_, total_, total_, secs, -1.0);
  } else if (mode_ == ProgressMode::kLines) {
    std::fprintf(stderr, "[stage] %s: done in %.1f s\n", stage_.c_str(), secs);
  }
  std::fflush(stderr);
}

}  // namespace ascprof::parallel
