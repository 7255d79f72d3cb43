#pragma once
// Persistence of the summarize-stage results (model::RankSummary) in a rank's HDF5 file,
// OUT/<root-slug>/ranks/<rank_id>.h5: "the same tables" as the per-rank CSVs, but with integer
// nanoseconds and every field needed to rebuild the RankSummary exactly. Small tables (at most a few
// hundred thousand rows), so strings are vlen UTF-8 columns (h5py: `f[...].asstr()[:]`), list / dict
// cells are compact JSON strings, numbers are typed columns.
//
// Layout: every table is one compound dataset whose columns are declared once, with their types
// and meaning, in include/ascprof/schema/rank_tables.hpp (h5py: `pd.DataFrame(f[table][:])`).
//
// Strings are stored as the store writes every string (invalid UTF-8 and NUL become U+FFFD), so a
// round trip is exact for valid UTF-8. Re-running the stage on an existing file (H5Writer::update):
// remove "/summary" first (H5Writer::remove), since creating an existing table fails.
#include <string>

#include "ascprof/common/status.hpp"
#include "ascprof/model/summary.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::pipeline {

/// Empty if the internal references of `s` are consistent (every wait anchor's op is a row of
/// s.operators); otherwise a reason naming the first bad entry.
std::string summary_inconsistency(const model::RankSummary& s);

/// Writes /summary (summarize stage). kInternal error if `s` is inconsistent (nothing written then);
/// kIo from the store on write failures (e.g. /summary already exists).
Status write_summary_tables(store::H5Writer& w, const model::RankSummary& s);

/// Reads /summary of `h5_path` back exactly as written. kIo if the file cannot be opened; kSchema
/// (naming the file and dataset) if /summary or a table is missing, a column is missing or has the
/// wrong type or length, /summary/rank does not have exactly one row, a JSON cell does not parse, or
/// a wait anchor names a missing operator (so callers can index without checks).
Result<model::RankSummary> read_summary_tables(const std::string& h5_path);

}  // namespace ascprof::pipeline
