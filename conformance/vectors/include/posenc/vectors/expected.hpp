#pragma once
// The reference's answer to one vector case: its correctly rounded outputs, or the
// InvalidParameter it raises. Used to generate the vectors and to check them.
#include <vector>

#include "posenc/vectors/vectors.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc::conformance {

std::vector<Rounded> evaluate_reference(const VectorGroup& group, const VectorCase& c,
                                        reference::Backend backend = reference::Backend::mpfr);

// A valid case's expected values as a vector file stores them, set in c: for attention also the
// reference's ingredients of the error bound (c.attention's kappa, pv and logit_range).
void fill_expected(const VectorGroup& group, VectorCase& c, reference::Backend backend = reference::Backend::mpfr);

}  // namespace posenc::conformance
