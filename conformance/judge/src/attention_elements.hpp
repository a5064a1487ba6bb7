#pragma once
// The elements of an attention case (SPEC.md section 5, "Attention"): what each one's bound is
// formed from, and the largest error each can have (for the vacuous-bound rule).
#include <vector>

#include "posenc/judge/profiles.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {

// Fills out (one spec per output: O, then L) for an attention case with its expected values.
void attention_elements(std::vector<ElementSpec>& out, const cases::Attention& a, const VectorCase& c);

// Per element, in units of its scale: O lies between the smallest and largest value of its
// column over the keys its row sees, so no error beyond that range is possible; L lies in
// [max_j s_j, max_j s_j + ln n] with |s_j| <= sigma + bias.
std::vector<double> attention_largest_errors(const std::vector<ElementSpec>& specs);

}  // namespace posenc::conformance
