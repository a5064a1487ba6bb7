#pragma once
// The condition terms of SPEC.md section 5 ("Scalings' intermediates"): for each pair, the
// relative error, in units of the working format's u, that a scaling's intermediates formed in
// that format (YaRN's correction-range ends and ramp, Llama 3's smoothing factor, the NTK and
// dynamic NTK base) can add to the pair's frequency, each intermediate's own error times the
// frequency's condition number with respect to it.
#include <vector>

#include "posenc/params.hpp"

namespace posenc::conformance {

// One value per pair (pair_count()); all 0 for a scaling without such intermediates.
std::vector<double> scaling_condition(const RopeParams& p);

}  // namespace posenc::conformance
