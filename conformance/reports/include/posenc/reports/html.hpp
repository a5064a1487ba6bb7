#pragma once
// One self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched) from one or
// more run reports: verdicts, per-family tables, the worst scaled error against position for
// every RoPE and sinusoidal vector file with the profile's bound, and failing properties with
// their counterexample and replay command. Several reports share each plot's axes.
#include <string>
#include <vector>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

std::string html_report(const std::vector<RunReport>& reports);

}  // namespace posenc::conformance
