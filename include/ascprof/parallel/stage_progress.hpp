#pragma once
/// Progress of the stages after the rank jobs (gather, root outputs, report), on process 0, in the
/// run's --progress mode, so a person never watches "ETA 0 s" while a third of the run is still to
/// come (issue 17). kBar redraws one line (stage, parts done, ETA from the measured rate of the
/// parts' weights); kLines prints a line per part done; kJson one object per part done
/// ({"phase":"stage_progress","stage":…,"done":…,"total":…,"eta_s":…}); kNone nothing.
#include <cstdint>
#include <string>
#include <string_view>

#include "ascprof/common/stopwatch.hpp"
#include "ascprof/parallel/analyze_run.hpp"

namespace ascprof::parallel {

class StageProgress {
 public:
  /// A stage of `total` parts whose costs are measured in `total_weight` units (bytes, weighted
  /// part costs); prints that it started.
  StageProgress(ProgressMode mode, std::string_view stage, uint64_t total, uint64_t total_weight);
  /// `done` parts of `weight_done` weight are finished (calls must be serialised).
  void advance(uint64_t done, uint64_t weight_done);
  /// The stage is over (prints its end and the seconds it took).
  void finish();

 private:
  ProgressMode mode_;
  std::string stage_;
  uint64_t total_, total_weight_, done_ = 0;
  SteadyClock::time_point start_;
  bool finished_ = false;
};

}  // namespace ascprof::parallel
