#pragma once
// Several runs' reports side by side: per vector file, each run's worst scaled error.
#include <ostream>
#include <vector>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

void print_comparison(std::ostream& out, const std::vector<RunReport>& reports);

}  // namespace posenc::conformance
