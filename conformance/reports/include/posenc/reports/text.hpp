#pragma once
// The text summary of a run: per vector file the counts and worst errors, the failures, the
// properties and the verdict.
#include <ostream>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

void print_summary(std::ostream& out, const RunReport& report);

}  // namespace posenc::conformance
