#pragma once
// The JSON report of a run (SPEC.md section 9) and its reader, which refuses anything malformed
// with a VectorFileError naming `source` and the field.
#include <string>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

std::string report_json(const RunReport& report);
RunReport parse_report_json(const std::string& text, const std::string& source);

}  // namespace posenc::conformance
