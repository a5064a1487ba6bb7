#pragma once
// One self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched) from one or
// more run reports: verdicts and their parts, per-family tables, the worst margin (error /
// bound) against position for every RoPE and sinusoidal vector file with the line at 1 and each
// series' accurate context marked, and the properties per format, failing ones with their
// counterexample and replay command. Several reports share each plot's axes.
#include <string>
#include <vector>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

std::string html_report(const std::vector<RunReport>& reports);

}  // namespace posenc::conformance
