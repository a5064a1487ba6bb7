#pragma once
// Checks on the data arguments (vectors, tables) every family's entry points take.
#include <cstdint>
#include <span>
#include <string_view>

namespace posenc {

// `x` must hold exactly `expected` values, finite, or NaN where `nan_allowed` (RoPE's rotated
// vector: a NaN propagates to its pair, SPEC.md section 2.3). Infinities are always refused.
void validate_input_vector(std::string_view name, std::span<const double> x, std::int64_t expected,
                           bool nan_allowed = false);

}  // namespace posenc
