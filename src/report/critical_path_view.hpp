#pragma once
/// The critical path section of report.html (issue 21): the ranks' shares and each walked step, and
/// the chain of the step with the longest wall, as static tables read from critical_path_ranks.csv,
/// critical_path_steps.csv and critical_path.csv. Private to src/report.
#include <filesystem>
#include <string>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

/// The section's HTML (a <section id="cp">), or "" when the root has no critical-path tables.
Result<std::string> critical_path_section_html(const std::filesystem::path& root_out);

}  // namespace ascprof::report
