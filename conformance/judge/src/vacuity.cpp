#include "vacuity.hpp"

#include <cmath>

#include "attention_elements.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {

std::vector<double> largest_errors(const VectorGroup& g, const VectorCase& c, const std::vector<ElementSpec>& specs) {
  // A signed value with |y*| <= s (sin, cos, a rotated or copied element, a logit, a table
  // entry, a learned row): any y in [-s, s] is within 2 s of it.
  std::vector<double> out(specs.size(), 2.0);
  std::visit(overloaded{
                 // x sqrt(d) + PE: only the position term, within [-1, 1], is in question: 2 absolute.
                 [&](const cases::SinusoidalEmbed&) {
                   for (std::size_t j = 0; j < out.size(); ++j) out[j] = specs[j].scale > 0 ? 2 / specs[j].scale : 0;
                 },
                 // A frequency or slope (> 0, s = y*) and a bias (<= 0, |y*| <= s): a bound of s
                 // admits 0, i.e. no frequency, no slope, no bias.
                 [&](const cases::RopeFrequencies&) { out.assign(out.size(), 1.0); },
                 [&](const cases::AlibiSlopes&) { out.assign(out.size(), 1.0); },
                 [&](const cases::AlibiBias&) { out.assign(out.size(), 1.0); },
                 [&](const cases::Attention&) { out = attention_largest_errors(specs); },
                 [](const auto&) {},
             },
             typed_case(g, c));
  return out;
}

bool bound_vacuous(const ElementSpec& e, double largest_error, double scaled_bound, Format f) {
  // Measured in units of s, without the unit's floor at the smallest subnormal: that floor is
  // the format's resolution (an element of scale below it cannot be resolved by any code), not
  // an allowance of the profile, so it never makes a bound vacuous.
  if (!(e.scale > 0) || !(scaled_bound > 0)) return false;
  return static_cast<long double>(scaled_bound) * unit_roundoff(f) >= largest_error;
}

}  // namespace posenc::conformance
