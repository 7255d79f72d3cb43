#pragma once
/// The `/stats` table: data-quality counters (ascprof::Stats) in an HDF5 file.
///
/// One row per counter declared in stats.def, in declaration order (zero counts included, so the
/// table has the same shape in every file), columns in this order: `name`, `severity` ("info",
/// "warning", "data_loss"), `count` (uint64), `description`, `first_sample` ("" when none); the
/// string columns are vlen UTF-8 so pandas reads the table directly.
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::store {

/// Writes `stats` as a table at `group` (normally "/stats").
Status write_stats(H5Writer& writer, const Stats& stats, std::string_view group = "/stats");

/// Adds the counts (and first samples) of the table at `group` into `stats`, matching counters by
/// name; rows with names this build does not declare are ignored (files from other versions).
/// kSchema error if the table's columns are missing or of unequal length.
Status read_stats(const H5Reader& reader, Stats* stats, std::string_view group = "/stats");

}  // namespace ascprof::store
