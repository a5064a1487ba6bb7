#pragma once
// One valid case's outputs in one format, judged element by element by a tolerance (SPEC.md
// section 5). The runner tallies these for every report, and `posenc serve` answers them one case
// at a time: one judgement, so both give the same verdict on the same outputs.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posenc/judge/profiles.hpp"

namespace posenc::conformance {

struct CaseJudgement {
  std::vector<ElementError> elements;  // one per output, in the vector's element order
  // A pass under a bound that admits any value the element can take says nothing: such an
  // element is not judged and stays out of the worst errors (a failure beyond it is real).
  std::vector<bool> vacuous;
  bool pass = true;           // every element within its bound
  bool any_vacuous = false;   // some element not judged for a vacuous bound
  std::optional<std::size_t> first_failure;
  std::string message;        // the first failing element, as the reports print it
};

// specs: element_specs(g, c). values: the outputs as doubles, exactly specs.size() of them.
// derived: the suite formed them itself (a dot product of rotated q and k), so `exact` judges
// them by `strict` bounds.
CaseJudgement judge_values(const VectorGroup& g, const VectorCase& c, const std::vector<ElementSpec>& specs,
                           std::span<const double> values, Format f, const Tolerance& t, bool derived);

// The case's distance from position 0 (max |p| over every axis, both sides of a dot), or
// nothing for cases without a position.
std::optional<double> case_position(const VectorCase& c);
// " position=2047 x[8] (comment)": the case's inputs as failure messages name them.
std::string describe_inputs(const VectorCase& c);

}  // namespace posenc::conformance
