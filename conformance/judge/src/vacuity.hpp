#pragma once
// When a bound says nothing (SPEC.md section 5, "Vacuous bounds"): a check whose bound reaches
// the largest error its element can have passes any output of the right magnitude (x unrotated,
// its sign flipped), so it is not judged ("bound vacuous"), never a pass.
#include <vector>

#include "posenc/judge/profiles.hpp"

namespace posenc::conformance {

// Per element of a valid case, the largest error an output of the element's possible values
// can have, in units of its scale s (SPEC.md section 5): 2 for a signed value bounded by s.
std::vector<double> largest_errors(const VectorGroup& g, const VectorCase& c, const std::vector<ElementSpec>& specs);

// Whether a scaled bound (units of u s in format f) reaches that largest error.
bool bound_vacuous(const ElementSpec& e, double largest_error, double scaled_bound, Format f);

}  // namespace posenc::conformance
