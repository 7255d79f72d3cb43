// Layout: the /summary tables declared in include/ascprof/schema/rank_tables.hpp.
#include "summary_store.hpp"

#include <string>
#include <vector>

#include "ascprof/schema/rank_tables.hpp"
#include "ascprof/store/h5_reader.hpp"

namespace ascprof::pipeline {

namespace {

std::string at(const char* what, size_t i) { return std::string(what) + " " + std::to_string(i); }

}  // namespace

std::string summary_inconsistency(const model::RankSummary& s) {
  for (size_t i = 0; i < s.wait_anchors.size(); ++i)
    if (s.wait_anchors[i].op >= s.operators.size())
      return at("wait anchor", i) + ": op " + std::to_string(s.wait_anchors[i].op) + " out of range (" +
             std::to_string(s.operators.size()) + " operators)";
  return {};
}

Status write_summary_tables(store::H5Writer& w, const model::RankSummary& s) {
  if (auto e = summary_inconsistency(s); !e.empty())
    return file_error(ErrorCode::kInternal, w.path().string(), "/summary", "inconsistent summary: " + e);
  ASCPROF_RETURN_IF_ERROR(w.create_group("/summary"));
  ASCPROF_RETURN_IF_ERROR(schema::write_rows(w, schema::kRankSummaryTable, std::span<const model::WindowMetrics>(&s.rank, 1)));
  return schema::write_tables(w, s, schema::kSummaryTables);
}

Result<model::RankSummary> read_summary_tables(const std::string& h5_path) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(h5_path));
  if (r.kind("/summary") != store::ObjectKind::kGroup)
    return file_error(ErrorCode::kSchema, h5_path, "/summary", "missing group (summarize stage not written)");
  model::RankSummary s;
  std::vector<model::WindowMetrics> rank;  // exactly one row (the table says so)
  ASCPROF_RETURN_IF_ERROR(schema::read_rows(r, schema::kRankSummaryTable, &rank));
  s.rank = std::move(rank[0]);
  ASCPROF_RETURN_IF_ERROR(schema::read_tables(r, s, schema::kSummaryTables));
  if (auto e = summary_inconsistency(s); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/summary/wait_anchors", "inconsistent tables: " + e);
  return s;
}

}  // namespace ascprof::pipeline
