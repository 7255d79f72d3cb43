#pragma once
// Persistence of the segment and classify results (model::RankStructure / model::RankClasses) in
// a rank's HDF5 file, OUT/<root-slug>/ranks/<rank_id>.h5. Small tables (thousands to a few hundred
// thousand rows), so strings are vlen UTF-8 columns (h5py: `f[...].asstr()[:]`), not /strings ids.
//
// Layout: every table is one compound dataset whose columns are declared once, with their types
// and meaning, in include/ascprof/schema/rank_tables.hpp (h5py: `pd.DataFrame(f[table][:])`).
//
// Strings are stored as the store writes every string (invalid UTF-8 and NUL become U+FFFD), so a
// round trip is exact for valid UTF-8. Re-running a stage on an existing file (H5Writer::update):
// remove "/structure" / "/classes" first (H5Writer::remove), since creating an existing table fails.
#include <string>

#include "ascprof/common/status.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::pipeline {

/// Empty if the cross references of `s` and `c` are consistent (every layer's segment, every
/// segment's layer range, every hard error's segment, every block's layer and class, every class
/// member, layer_class / step_class lengths (equal to layers / segments, or both empty when the rank
/// is not classified) and values); otherwise a reason naming the first bad entry.
std::string structure_inconsistency(const model::RankStructure& s, const model::RankClasses& c);

/// Writes /structure (segment stage). kInternal error if `s` is inconsistent (nothing written then);
/// kIo from the store on write failures.
Status write_segment_tables(store::H5Writer& w, const model::RankStructure& s);
/// Writes /classes (classify stage); `s` is the structure `c` was computed from (for validation).
Status write_class_tables(store::H5Writer& w, const model::RankStructure& s, const model::RankClasses& c);
/// Both of the above.
Status write_structure_tables(store::H5Writer& w, const model::RankStructure& s, const model::RankClasses& c);

/// What read_structure_tables() returns.
struct StoredStructure {
  model::RankStructure structure;
  model::RankClasses classes;  ///< empty when the file has no /classes
  bool has_classes = false;
};

/// Reads /structure and, if present, /classes of `h5_path` back exactly as written. kIo if the file
/// cannot be opened; kSchema (naming the file and dataset) if /structure is missing, a column is
/// missing or has the wrong type or length, an enum name or JSON list does not parse, or the cross
/// references are inconsistent (so callers can index without checks).
Result<StoredStructure> read_structure_tables(const std::string& h5_path);

}  // namespace ascprof::pipeline
