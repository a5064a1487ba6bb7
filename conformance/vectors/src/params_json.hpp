#pragma once
// Parameters as JSON: keys are the parameter names of posenc/params (the names error kinds use),
// real values are C99 hex-float strings, dimensions and counts are JSON integers.
#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"
#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance::json_io {

Json params_to_json(const Params& p);
Params params_from_json(CaseType type, const JsonValue& j, const Location& at);

}  // namespace posenc::conformance::json_io
