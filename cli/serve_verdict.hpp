#pragma once
// `posenc serve`'s answer for one submitted case in one format (SPEC.md section 10): the judge's
// verdict (case_judgement.hpp, what the runner tallies) as JSON, with the margin, the worst and
// the first failing element (got, expected, margin, position).
#include "posenc/judge/case_judgement.hpp"
#include "posenc/judge/implementation.hpp"
#include "posenc/vectors/json_writer.hpp"

namespace posenc::cli {

// o: the submission (ok with values, invalid or unsupported). elements: also every element's
// got, expected and margin.
conformance::json_io::Json serve_verdict(const conformance::VectorGroup& g, const conformance::VectorCase& c,
                                         const conformance::Outcome& o, Format f, const conformance::Tolerance& t,
                                         bool elements);

// A number as JSON: finite ones as numbers, infinities and NaN as the strings "inf", "-inf", "nan"
// (JSON has no such numbers; a margin is infinite when the very bits were asked for and missed).
conformance::json_io::Json json_number(double v);

}  // namespace posenc::cli
