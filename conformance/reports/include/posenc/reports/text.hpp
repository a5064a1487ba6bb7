#pragma once
// The text summary of a run: per vector file the counts and worst errors, its first
// max_failures failures grouped by test group (the JSON report has every one), the properties
// per format, a line per verdict part and the verdict line with what was and was not judged.
#include <cstddef>
#include <ostream>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

void print_summary(std::ostream& out, const RunReport& report, std::size_t max_failures = 5);

}  // namespace posenc::conformance
