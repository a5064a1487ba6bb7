#pragma once
// JUnit XML of a run (one test suite per vector file), for CI systems that read it.
#include <string>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

std::string junit_xml(const RunReport& report);

}  // namespace posenc::conformance
