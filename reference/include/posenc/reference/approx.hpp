#pragma once
// Certified approximation: a working-precision value v and a rigorous bound e on its distance to
// the exact real result, |exact - v| <= e. e == 0 means v is the exact result, and every
// operation keeps it 0 when it can prove its result exact (so exact midpoints, e.g. an ALiBi bias
// of 128.5 in bf16, still round correctly instead of being undecidable forever).
//
// Error model per operation (u = 2^(1-p) at precision p):
//   +, -, *, /, sqrt   round to nearest: rounding error <= u |v|
//   exp, log, sin, cos MPFR: correctly rounded, <= u |v|.
//                      cpp_bin_float: not proven correctly rounded; assumed <= 2^10 u max(1,|v|,|x|),
//                      which also covers argument reduction with a working-precision pi.
// Every new bound is inflated by 2^-20 to absorb the rounding of the bound's own arithmetic.
// Decisions on discontinuous functions (floor, branches) are taken only when the whole interval
// agrees; otherwise NeedMorePrecision asks the Ziv driver for a higher precision.
#include <algorithm>
#include <cstdint>

#include <boost/math/constants/constants.hpp>
#include <stdexcept>
#include <vector>

#include "posenc/reference/backends.hpp"

namespace posenc::ref {

struct NeedMorePrecision {};

template <class R>
struct Approx {
  R v;
  R e;

  static Approx exact(const R& x) { return {x, R(0)}; }
  bool is_exact() const { return e == 0; }
};

template <class R>
R unit_roundoff() {
  return ldexp(R(1), 1 - kDigits<R>);
}

template <class R>
Approx<R> exact_int(std::int64_t n) {
  return Approx<R>::exact(R(static_cast<long long>(n)));
}

template <class R>
Approx<R> exact_double(double x) {
  return Approx<R>::exact(R(x));
}

namespace detail {

template <class R>
R inflate(const R& e) {
  return e + ldexp(e, -20);
}

// Exact zero results are +0 (IEEE 754's rule for an exact zero sum under round-to-nearest);
// only values copied from inputs keep a negative zero.
template <class R>
Approx<R> exact_result(const R& v) {
  return Approx<R>::exact(v == 0 ? R(0) : v);
}

template <class R>
Approx<R> rounded_result(const R& v, const R& propagated) {
  return {v, inflate(propagated + abs(v) * unit_roundoff<R>())};
}

// Number of significant bits of x != 0 (position of its lowest set bit, counted from the top).
template <class R>
int significant_bits(const R& x) {
  int exponent = 0;
  R m = frexp(abs(x), &exponent);
  int lo = 1, hi = kDigits<R>;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    R y = ldexp(m, mid);
    if (floor(y) == y) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// x = m 2^top with m in [0.5, 1): the exponent of the bit just above the leading one.
template <class R>
int top_exponent(const R& x) {
  int exponent = 0;
  (void)frexp(x, &exponent);
  return exponent;
}

template <class R>
bool sum_is_exact(const R& a, const R& b) {
  if (a == 0 || b == 0) return true;
  int ta = top_exponent(a), tb = top_exponent(b);
  int lsb = std::min(ta - significant_bits(a), tb - significant_bits(b));
  return std::max(ta, tb) + 1 - lsb <= kDigits<R>;
}

template <class R>
bool product_is_exact(const R& a, const R& b) {
  return a == 0 || b == 0 || significant_bits(a) + significant_bits(b) <= kDigits<R>;
}

// Error of an elementary function's computed value v at argument x (see the file comment).
template <class R>
R function_error(const R& v, const R& x) {
  if constexpr (kCorrectlyRounded<R>) {
    (void)x;
    return abs(v) * unit_roundoff<R>();
  } else {
    R scale = std::max({R(1), abs(v), abs(x)});
    return ldexp(scale * unit_roundoff<R>(), 10);
  }
}

template <class R>
Approx<R> function_result(const R& v, const R& x, const R& propagated) {
  return {v, inflate(propagated + function_error(v, x))};
}

}  // namespace detail

// Conservative ends of the enclosing interval, in working precision: lower(a) <= exact <= upper(a).
template <class R>
R lower(const Approx<R>& a) {
  if (a.is_exact()) return a.v;
  return a.v - (a.e + ldexp(abs(a.v) * unit_roundoff<R>(), 2));
}

template <class R>
R upper(const Approx<R>& a) {
  if (a.is_exact()) return a.v;
  return a.v + (a.e + ldexp(abs(a.v) * unit_roundoff<R>(), 2));
}

template <class R>
Approx<R> operator-(const Approx<R>& a) {
  return {a.v == 0 ? R(0) : R(-a.v), a.e};  // the real number 0 has no sign
}

template <class R>
Approx<R> operator+(const Approx<R>& a, const Approx<R>& b) {
  R v = a.v + b.v;
  if (a.is_exact() && b.is_exact() && detail::sum_is_exact(a.v, b.v)) return detail::exact_result(v);
  return detail::rounded_result(v, a.e + b.e);
}

template <class R>
Approx<R> operator-(const Approx<R>& a, const Approx<R>& b) {
  return a + (-b);
}

template <class R>
Approx<R> operator*(const Approx<R>& a, const Approx<R>& b) {
  R v = a.v * b.v;
  if (a.is_exact() && b.is_exact() && detail::product_is_exact(a.v, b.v)) {
    return detail::exact_result(v);
  }
  return detail::rounded_result(v, abs(a.v) * b.e + abs(b.v) * a.e + a.e * b.e);
}

template <class R>
Approx<R> operator/(const Approx<R>& a, const Approx<R>& b) {
  if (b.is_exact() && b.v == 0) throw std::domain_error("posenc reference: division by an exact zero");
  R denominator_low = abs(b.v) - b.e;
  if (!(denominator_low > 0)) throw NeedMorePrecision{};
  R v = a.v / b.v;
  if (a.is_exact() && b.is_exact() && detail::product_is_exact(v, b.v) && v * b.v == a.v) {
    return detail::exact_result(v);
  }
  return detail::rounded_result(v, (a.e + abs(v) * b.e) / denominator_low);
}

template <class R>
Approx<R> sqrt(const Approx<R>& a) {
  R r = sqrt(a.v);
  if (a.is_exact()) {
    if (a.v < 0) throw std::domain_error("posenc reference: sqrt of a negative exact value");
    if (detail::product_is_exact(r, r) && r * r == a.v) return detail::exact_result(r);
    return detail::rounded_result(r, R(0));
  }
  R low = a.v - a.e;
  if (!(low > 0)) throw NeedMorePrecision{};
  return detail::rounded_result(r, a.e / sqrt(low));
}

template <class R>
Approx<R> exp(const Approx<R>& a) {
  if (a.is_exact() && a.v == 0) return Approx<R>::exact(R(1));
  if (a.e > R(0.5)) throw NeedMorePrecision{};
  R v = exp(a.v);
  // |exp(x) - exp(a.v)| <= exp(a.v) (exp(a.e) - 1) <= exp(a.v) 2 a.e for a.e <= 1/2.
  return detail::function_result(v, a.v, 2 * abs(v) * a.e);
}

template <class R>
Approx<R> log(const Approx<R>& a) {
  if (a.is_exact() && a.v == 1) return Approx<R>::exact(R(0));
  R low = a.v - a.e;
  if (!(low > 0)) throw NeedMorePrecision{};
  return detail::function_result(R(log(a.v)), a.v, a.e / low);
}

template <class R>
Approx<R> sin(const Approx<R>& a) {
  if (a.is_exact() && a.v == 0) return Approx<R>::exact(R(0));
  return detail::function_result(R(sin(a.v)), a.v, a.e);
}

template <class R>
Approx<R> cos(const Approx<R>& a) {
  if (a.is_exact() && a.v == 0) return Approx<R>::exact(R(1));
  return detail::function_result(R(cos(a.v)), a.v, a.e);
}

// a^b for a > 0, as exp(b log a); exact for b == 0.
template <class R>
Approx<R> pow(const Approx<R>& a, const Approx<R>& b) {
  if (b.is_exact() && b.v == 0) return Approx<R>::exact(R(1));
  if (b.is_exact() && b.v == 1) return a;
  return exp(b * log(a));
}

// 2^(num/den), exact when den divides num.
template <class R>
Approx<R> pow2_rational(std::int64_t num, std::int64_t den) {
  if (num % den == 0) return Approx<R>::exact(ldexp(R(1), static_cast<int>(num / den)));
  return pow(exact_int<R>(2), exact_int<R>(num) / exact_int<R>(den));
}

template <class R>
Approx<R> pi() {
  R v = boost::math::constants::pi<R>();
  return detail::function_result(v, v, R(0));
}

// Decisions. Each returns the truth when the enclosing intervals decide it, and otherwise asks
// for more precision.
template <class R>
bool less(const Approx<R>& a, const Approx<R>& b) {
  if (a.is_exact() && b.is_exact()) return a.v < b.v;
  if (upper(a) < lower(b)) return true;
  if (upper(b) <= lower(a)) return false;
  throw NeedMorePrecision{};
}

template <class R>
Approx<R> floor(const Approx<R>& a) {
  R lo = floor(lower(a));
  if (lo != floor(upper(a))) throw NeedMorePrecision{};
  return Approx<R>::exact(lo);
}

template <class R>
Approx<R> ceil(const Approx<R>& a) {
  R hi = ceil(upper(a));
  if (hi != ceil(lower(a))) throw NeedMorePrecision{};
  return Approx<R>::exact(hi);
}

// Continuous functions need no decision: max/min are 1-Lipschitz, so the bound carries over,
// and the result is exact where the interval lies on one side.
template <class R>
Approx<R> max(const Approx<R>& a, const Approx<R>& b) {
  if (lower(a) >= upper(b)) return a;
  if (lower(b) >= upper(a)) return b;
  return {std::max(a.v, b.v), std::max(a.e, b.e)};
}

template <class R>
Approx<R> min(const Approx<R>& a, const Approx<R>& b) {
  return -max(-a, -b);
}

template <class R>
Approx<R> dot(const std::vector<Approx<R>>& a, const std::vector<Approx<R>>& b) {
  Approx<R> sum = Approx<R>::exact(R(0));
  for (std::size_t i = 0; i < a.size(); ++i) sum = sum + a[i] * b[i];
  return sum;
}

}  // namespace posenc::ref
