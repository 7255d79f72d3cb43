#pragma once
/// A diagnosis finding (reference-analysis.md §2.8): what was found, how sure, which ranks, and the
/// evidence that lets a reader go back to the source rows. Serialisable for the MPI gather.
#include <cstdint>
#include <string>
#include <vector>

namespace ascprof::model {

/// The evidence id of a kernel row: evt_<rank ordinal>_<row> (raw_kernel_index.csv's event_id).
inline std::string event_id(uint64_t ordinal, uint64_t row) {
  return "evt_" + std::to_string(ordinal) + "_" + std::to_string(row);
}

struct Finding {
  std::string claim_id;            ///< stable_id("claim", type, scope, summary, rank_ids, alignment_ids)
  std::string finding_type;        ///< device_idle_bubble, aicpu_exposed, ...
  std::string scope;               ///< step | operator | cross_rank
  std::string summary;             ///< one line a person reads
  std::string severity;            ///< high | medium | low
  std::string confidence;          ///< high | medium | low
  std::vector<std::string> rank_ids;         ///< every rank involved
  std::vector<std::string> suspected_ranks;  ///< the rank(s) singled out as the cause
  std::vector<std::string> alignment_ids;
  std::vector<std::string> evidence_ids;     ///< evd_... windows and evt_<ordinal>_<row> events
  std::vector<std::string> counter_evidence_ids;
  std::vector<std::string> limitations;
  std::string metrics_json;        ///< compact JSON object: the triggering row's numbers
  double magnitude_ms = 0;         ///< time at stake (idle time, exposed time, ...)
  /// Rank-local, not sent: the summary table row the finding is about ("step_summary.csv" and its
  /// index among the rank's rows), whose columns the summary writer adds to metrics_json.
  std::string row_table;
  size_t row_index = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & claim_id & finding_type & scope & summary & severity & confidence & rank_ids & suspected_ranks &
        alignment_ids & evidence_ids & counter_evidence_ids & limitations & metrics_json & magnitude_ms;
  }
};

}  // namespace ascprof::model
