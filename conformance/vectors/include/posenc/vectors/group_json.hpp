#pragma once
// The pieces of a vector file's JSON (SPEC.md section 4) for tools that send cases one group at a
// time (posenc serve, SPEC.md section 10): the same writer as write_vector_file, so a case reads
// the same wherever it comes from.
#include "posenc/vectors/json_writer.hpp"
#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance::json_io {

// A test group without its tests: type, comment, params, inputFormat (and a learned table).
Json group_header_json(const VectorGroup& g);
// One case as in "tests"; with_expected false leaves out "expected" (its correct roundings).
Json case_to_json(CaseType type, const VectorCase& c, bool with_expected);

}  // namespace posenc::conformance::json_io
