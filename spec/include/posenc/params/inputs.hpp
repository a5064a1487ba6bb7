#pragma once
// Checks on the data arguments (vectors, tables) every family's entry points take.
#include <cstdint>
#include <span>
#include <string_view>

namespace posenc {

// `x` must hold exactly `expected` finite values.
void validate_input_vector(std::string_view name, std::span<const double> x, std::int64_t expected);

}  // namespace posenc
