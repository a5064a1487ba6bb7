#pragma once
// The reference's answer to one vector case: its correctly rounded outputs, or the
// InvalidParameter it raises. Used to generate the vectors and to check them.
#include <vector>

#include "posenc/vectors/vectors.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc::conformance {

std::vector<Rounded> evaluate_reference(const VectorGroup& group, const VectorCase& c,
                                        reference::Backend backend = reference::Backend::mpfr);

}  // namespace posenc::conformance
