#pragma once
// Persistence of the segment and classify results (model::RankStructure / model::RankClasses) in
// a rank's HDF5 file, OUT/<root-slug>/ranks/<rank_id>.h5. Small tables (thousands to a few hundred
// thousand rows), so strings are vlen UTF-8 columns (h5py: `f[...].asstr()[:]`), not /strings ids.
//
// Layout (every table is a group of equal-length 1-D columns with `columns` and `row_count`):
//   /structure                 attrs: rank_id (str), event_count (uint64), step_source (str),
//                              anchor_family (str)
//   /structure/segments        one row per StepSegment, in row order:
//       segment_id s, segment_type s (segment_type_name), complete u8, row_start u32, row_end u32,
//       start_ns i64, end_ns i64, step_family s, main_layer_count u32, speculative_layer_count u32,
//       structure_signature s, cluster_id s, first_layer u32, layer_count u32,
//       step_source s (step_source_name), declared_step i64 (-1: none), phase s, microbatch_count u32,
//       frame_reasons s, frame_tags s (each a compact JSON array of strings, e.g. ["a","b"]),
//       selection_rows s (a compact JSON array of rows, e.g. [102,148])
//   /structure/layers          one row per LayerSegment:
//       layer_id s, segment u32 (row of /structure/segments), layer_index u32, row_start u32,
//       row_end u32, start_ns i64, end_ns i64, first_anchor_row u32, layer_role s (layer_role_name),
//       microbatch i32 (-1: none), boundary_source s, signature u32 (row of /structure/layer_signatures)
//   /structure/layer_signatures  signature s: the distinct layer structure signatures
//   /structure/hard_errors     error_type s, row_start u32, row_end u32, segment i32 (-1: none), detail s
//   /structure/boundary_checks declared_step i64, step_source s, row_start u32, row_end u32,
//       structural_steps u32, agrees u8, note s
//   /structure/observations    segment u32, layer_role s, implementation_names s (JSON array)
//   /structure/role_observations  segment u32, role s, implementation_names s (JSON array),
//       rows s (JSON array of rows): the reference's step-scope observations (StepRoleObservation)
//   /classes                   attrs: rank_id (str)
//   /classes/blocks            block_id s, layer u32 (row of /structure/layers), block_index u32,
//       block_kind s (block_kind_name), companion_layer u8, row_start u32, row_end u32, start_ns i64,
//       end_ns i64, event_count u32, block_class u32 (row of /classes/block_classes)
//   /classes/block_classes, /classes/layer_classes, /classes/step_classes   (same columns each):
//       class_id s, structure_signature s, scope_label s, has_unknown_shape u8, shape_pairs_count u32,
//       members s (compact JSON array of row indices into blocks / layers / segments, e.g. [0,4,8]),
//       block_kind s, companion_layer u8, block_kinds s (JSON array of strings),
//       child_class_ids s (JSON array of class ids), main_layer_count u32, layer_count u32, step_family s
//   /classes/layer_class       1-D int32 dataset, one per layer: row of /classes/layer_classes (-1: none)
//   /classes/step_class        1-D int32 dataset, one per segment: row of /classes/step_classes (-1: non-step)
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
