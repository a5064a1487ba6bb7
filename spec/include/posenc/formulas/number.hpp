#pragma once
// The number type a formula is written over (formulas/*.hpp): the few operations that differ
// between the reference's certified Approx<R> and the fast path's long double, as a traits
// struct. A formula is the same text for every type, so there is one definition of each
// (the reference certifies it, fast/ evaluates it in long double, the judge sizes tolerances).
//
// Number<N> provides, as static functions:
//   from_int(std::int64_t), from_double(double)  N holding that value exactly
//   pi()                                         pi (for a certified type, with its error bound)
//   log, exp, sqrt, floor, ceil (N); pow, min, max (N, N)
//   less(a, b)        a < b as a decision: a certified type throws when its intervals cannot
//                     decide (the reference's NeedMorePrecision, which raises the precision)
//   known_equal(a, b) a == b known for certain (a certified type: both exact and equal); used
//                     where a formula guards a special case that a near miss does not trigger
// Arithmetic (+, -, *, /, unary -) is the type's own operators.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numbers>

namespace posenc::formulas {

template <class N>
struct Number;  // specialized per number type

// Binary floating point (long double in fast/, double or long double for tolerances): the
// standard library, and comparisons that just compare.
template <std::floating_point F>
struct Number<F> {
  static F from_int(std::int64_t n) { return static_cast<F>(n); }
  static F from_double(double x) { return static_cast<F>(x); }
  static F pi() { return std::numbers::pi_v<F>; }
  static F log(F x) { return std::log(x); }
  static F exp(F x) { return std::exp(x); }
  static F pow(F x, F y) { return std::pow(x, y); }
  static F sqrt(F x) { return std::sqrt(x); }
  static F floor(F x) { return std::floor(x); }
  static F ceil(F x) { return std::ceil(x); }
  static F min(F a, F b) { return std::min(a, b); }
  static F max(F a, F b) { return std::max(a, b); }
  static bool less(F a, F b) { return a < b; }
  static bool known_equal(F a, F b) { return a == b; }
};

}  // namespace posenc::formulas
