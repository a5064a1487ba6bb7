#pragma once
// RoPE and sinusoidal frequencies in long double (64-bit significand), from the same formulas as
// the reference (reference/include/posenc/reference/rope_frequencies.hpp cites each source).
// Long double keeps the relative error near 2^-63, so p * w stays accurate to ~2^-31 rad for
// |p| <= 2^32; the reference certifies, this only needs to be close.
#include <vector>

#include "posenc/params.hpp"

namespace posenc::fast::detail {

struct LongFrequencies {
  std::vector<long double> inv_freq;  // per pair
  long double attention = 1;
};

LongFrequencies rope_frequencies(const RopeParams& p);
long double sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i);

}  // namespace posenc::fast::detail
