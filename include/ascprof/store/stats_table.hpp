#pragma once
/// The `/stats` table: data-quality counters (ascprof::Stats) in an HDF5 file.
///
/// One row per counter declared in stats.def, in declaration order (zero counts included, so the
/// table has the same shape in every file): `name`, `severity` ("info", "warning", "data_loss"),
/// `description`, `first_sample` (vlen UTF-8 strings; "" when none) and `count` (uint64).
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
