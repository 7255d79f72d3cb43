#pragma once
/// The text cells of the row tables (row_table.hpp): lists and small records kept as compact JSON
/// in one column, so a table stays one flat compound dataset that h5py and pandas read as is.
/// Each codec renders a value and parses it back exactly (render(parse(x)) == x).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ascprof/model/summary.hpp"
#include "ascprof/schema/row_table.hpp"

namespace ascprof::schema {

using RowRanges = std::vector<std::pair<uint32_t, uint32_t>>;

void render_strings(const std::vector<std::string>& v, std::string& out);
const char* parse_strings(std::string_view cell, std::vector<std::string>* out);
void render_indices(const std::vector<uint32_t>& v, std::string& out);
const char* parse_indices(std::string_view cell, std::vector<uint32_t>* out);
void render_ranges(const RowRanges& v, std::string& out);
const char* parse_ranges(std::string_view cell, RowRanges* out);
void render_counts(const model::NameCounts& v, std::string& out);
const char* parse_counts(std::string_view cell, model::NameCounts* out);
void render_bubbles(const std::vector<model::Bubble>& v, std::string& out);
const char* parse_bubbles(std::string_view cell, std::vector<model::Bubble>* out);
void render_doubles(const std::vector<double>& v, std::string& out);
const char* parse_doubles(std::string_view cell, std::vector<double>* out);
void render_comma_ints(const std::vector<int64_t>& v, std::string& out);
const char* parse_comma_ints(std::string_view cell, std::vector<int64_t>* out);
void render_top_ops(const std::vector<model::BlockSummary::TopOp>& v, std::string& out);
const char* parse_top_ops(std::string_view cell, std::vector<model::BlockSummary::TopOp>* out);

/// ["a","b"]
inline constexpr TextCodec<std::vector<std::string>> kStringList{render_strings, parse_strings};
/// [1,2]: row indices
inline constexpr TextCodec<std::vector<uint32_t>> kIndexList{render_indices, parse_indices};
/// [[start,end],...]: inclusive row runs
inline constexpr TextCodec<RowRanges> kRowRanges{render_ranges, parse_ranges};
/// {"NAME":count,...}
inline constexpr TextCodec<model::NameCounts> kNameCounts{render_counts, parse_counts};
/// [{"bubble_index","start_ns","end_ns","before_row","after_row"},...]
inline constexpr TextCodec<std::vector<model::Bubble>> kBubbles{render_bubbles, parse_bubbles};
/// [1.0,null,...] in shortest round-trip form (non-finite: null); an empty list is an empty cell
inline constexpr TextCodec<std::vector<double>> kDoubles{render_doubles, parse_doubles};
/// 0,1,2 (plain text, as profiler_metadata.json's rank lists are usually shown)
inline constexpr TextCodec<std::vector<int64_t>> kCommaInts{render_comma_ints, parse_comma_ints};
/// [{"name","task_type","call_count","duration_sum_ns"},...]
inline constexpr TextCodec<std::vector<model::BlockSummary::TopOp>> kTopOps{render_top_ops, parse_top_ops};

}  // namespace ascprof::schema
