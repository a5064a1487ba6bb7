#pragma once
// RoPE and sinusoidal frequencies in long double (64-bit significand): the reference's own
// formulas (spec's posenc/formulas/, which cite each source) instantiated with long double
// (formulas::rope_frequencies<long double>, formulas::sinusoidal_frequency<long double>), and
// their split into double-doubles for the kernels.
// Long double keeps the relative error near 2^-63, so p * w stays accurate to ~2^-31 rad for
// |p| <= 2^32; the reference certifies, this only needs to be close.
#include <cmath>
#include <cstdint>

#include "posenc/formulas/rope_frequencies.hpp"
#include "posenc/formulas/sinusoidal_frequency.hpp"
#include "posenc/params.hpp"

namespace posenc::fast::detail {

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

}  // namespace posenc::fast::detail
