#pragma once
// RoPE and sinusoidal frequencies in long double (64-bit significand), from the same formulas as
// the reference (reference/include/posenc/reference/rope_frequencies.hpp cites each source).
// Long double keeps the relative error near 2^-63, so p * w stays accurate to ~2^-31 rad for
// |p| <= 2^32; the reference certifies, this only needs to be close.
#include <cmath>
#include <vector>

#include "posenc/fast/fast.hpp"
#include "posenc/params.hpp"

namespace posenc::fast::detail {

struct LongFrequencies {
  std::vector<long double> inv_freq;  // per pair
  long double attention = 1;
};

LongFrequencies rope_frequencies(const RopeParams& p);

// A frequency as a double-double: hi the nearest double, lo the rest.
struct SplitFrequency {
  double hi, lo;
};

inline SplitFrequency split(long double w) {
  const auto hi = static_cast<double>(w);
  return {hi, static_cast<double>(w - hi)};
}

// The angle p w as hi + lo: the product's rounding error by FMA, plus p times w's tail
// (p exact in binary64 for |p| <= 2^53).
inline void angle(double p, SplitFrequency w, double& hi, double& lo) {
  hi = p * w.hi;
  lo = std::fma(p, w.hi, -hi) + p * w.lo;
}
long double sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i);

}  // namespace posenc::fast::detail
