#pragma once
// ALiBi slopes and biases (Press et al. 2022; the paper's get_slopes):
//   n a power of two: slope_h = 2^(-8(h+1)/n), h = 0..n-1
//   otherwise, m = 2^floor(log2 n): the m slopes for m heads, then every other slope of 2m heads,
//   slope_{m+j} = 2^(-4(2j+1)/m), j = 0..n-m-1.
//   bias(i, j) = -slope (i - j) causal, -slope |i - j| symmetric.
#include <bit>

#include "posenc/params/alibi.hpp"
#include "posenc/reference/approx.hpp"

namespace posenc::ref {

template <class R>
Approx<R> alibi_slope(const AlibiParams& p, std::int64_t head) {
  const AlibiSlopeExponent e = alibi_slope_exponent(p, head);
  return pow2_rational<R>(e.numerator, e.denominator);
}

template <class R>
std::vector<Approx<R>> alibi_slopes(const AlibiParams& p) {
  std::vector<Approx<R>> out;
  for (std::int64_t h = 0; h < p.n_heads; ++h) out.push_back(alibi_slope<R>(p, h));
  return out;
}

template <class R>
Approx<R> alibi_bias(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key) {
  std::int64_t distance = query - key;
  if (p.mode == AlibiMode::symmetric && distance < 0) distance = -distance;
  return alibi_slope<R>(p, head) * exact_int<R>(-distance);
}

}  // namespace posenc::ref
