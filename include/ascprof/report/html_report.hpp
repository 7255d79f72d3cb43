#pragma once
/// report/report.html (issue 5, reference-analysis.md §2.9): one self-contained interactive page
/// (inline CSS/JS, no network) built from the root's own output tables. Three levels: L1 cross-rank
/// overview, L2 Single-step Inspector, L3 layer/block/operator cards, plus a zoomable multi-lane
/// timeline on a canvas with a bubble axis and finding marks. A root with in-kernel MoE traces (issue 20)
/// adds an "In-kernel MoE" section whose calls open as nested per-core lanes in the timeline; a root
/// without them gets the page it got before, byte for byte.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

/// Size bounds of the page. The raw kernels of whole segments (each rank's heaviest and first step,
/// then more round-robin) are embedded while `max_kernel_events` lasts; the whole capture is always
/// drawn from a coarse per-rank/lane busy histogram, so the file size does not grow with the capture.
struct HtmlOptions {
  uint64_t max_kernel_events = 300'000;  ///< raw kernels embedded in the timeline and operator cards
  uint64_t max_layer_rows = 30'000;      ///< layer_summary rows embedded (embedded steps' first)
  uint64_t max_block_rows = 60'000;      ///< block_summary rows embedded (embedded steps' first)
  uint64_t max_bubbles = 20'000;         ///< bubble windows on the bubble axis (longest first)
  uint32_t histogram_bins = 4096;        ///< bins per rank lane over the whole capture (fewer for many ranks)
  uint32_t max_moe_calls = 64;           ///< attached in-kernel MoE calls whose intervals are embedded (nested lanes)
};

/// Writes `root_out`/report/report.html atomically (temporary name, then rename) and returns its path.
/// Absent optional tables give empty sections; a table that cannot be read or parsed gives its
/// kIo/kParse error (file and line) and no file is left behind.
Result<std::filesystem::path> write_report_html(const std::filesystem::path& root_out, const HtmlOptions& options = {});

/// Appends `text` as the body of a JSON string literal that is safe inside an HTML <script> element:
/// JSON escapes plus `<`, `>`, `&` as \u003c, \u003e, \u0026 and U+2028/U+2029 as escapes, invalid
/// UTF-8 as U+FFFD. Exposed for tests.
void append_script_json_string(std::string& out, std::string_view text);

}  // namespace ascprof::report
