#pragma once
// The sinusoidal encoding's frequencies (Vaswani et al. 2017, section 3.5), over any number type
// of formulas/number.hpp:
//   paper:          w_i = base^(-2i/d)
//   tensor2tensor:  w_i = base^(-i/max(d/2-1, 1))  (get_timing_signal_1d: log_timescale_increment
//                   = log(max/min) / max(num_timescales - 1, 1), min_timescale = 1, max = base)
// The exponent is SinusoidalParams::frequency_exponent; the power is exp(-e ln base), with ln
// base computed once per table by the caller that wants every pair.
#include <cstdint>

#include "posenc/formulas/number.hpp"
#include "posenc/params/sinusoidal.hpp"

namespace posenc::formulas {

template <class N>
N sinusoidal_log_base(const SinusoidalParams& p) {
  return Number<N>::log(Number<N>::from_double(p.base));
}

// w_i, given log_base = sinusoidal_log_base<N>(p).
template <class N>
N sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i, const N& log_base) {
  using T = Number<N>;
  const auto e = p.frequency_exponent(i);
  return T::exp(T::from_int(-e.numerator) / T::from_int(e.denominator) * log_base);
}

template <class N>
N sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i) {
  return sinusoidal_frequency<N>(p, i, sinusoidal_log_base<N>(p));
}

}  // namespace posenc::formulas
