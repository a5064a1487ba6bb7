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
  // One per value given, in the vector's element order: every output, or an attention case's O
  // alone (answers_without_lse).
  std::vector<ElementError> elements;
  // A pass under a bound that admits any value the element can take says nothing: such an
  // element is not judged and stays out of the worst errors (a failure beyond it is real).
  std::vector<bool> vacuous;
  bool pass = true;           // every element within its bound
  bool any_vacuous = false;   // some element not judged for a vacuous bound
  std::optional<std::size_t> first_failure;
  std::string message;        // the first failing element, as the reports print it
};

// specs: element_specs(g, c). values: the outputs as doubles, exactly specs.size() of them, or
// for an attention case O alone (answers_without_lse; its L is then not judged). derived: the
// suite formed them itself (a dot product of rotated q and k), so `exact` judges them by `strict`
// bounds.
CaseJudgement judge_values(const VectorGroup& g, const VectorCase& c, const std::vector<ElementSpec>& specs,
                           std::span<const double> values, Format f, const Tolerance& t, bool derived);

// Whether `values` values answer valid case c without all its outputs: an attention case's O
// without L (SPEC.md sections 7 and 8: a kernel that forms no L is judged on O alone).
bool answers_without_lse(const VectorGroup& g, const VectorCase& c, std::size_t values);
// The numbers of values that answer valid case c: its outputs, and for attention O alone.
std::vector<std::size_t> accepted_value_counts(const VectorGroup& g, const VectorCase& c);
// "48 outputs", "48 outputs (O then L), or 36 (O alone)".
std::string value_counts_text(const std::vector<std::size_t>& counts);
// How failure messages name output j of the case: "O[query 0, head 3, column 17]" and
// "L[query 0, head 3]" for attention, "element 17" for the other case types.
std::string element_name(const VectorGroup& g, const VectorCase& c, std::size_t j);

// The case's distance from position 0 (max |p| over every axis, both sides of a dot), or
// nothing for cases without a position.
std::optional<double> case_position(const VectorCase& c);
// " position=2047 x[8] (comment)": the case's inputs as failure messages name them.
std::string describe_inputs(const VectorCase& c);

}  // namespace posenc::conformance
