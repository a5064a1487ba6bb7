#pragma once
// Approx<R> as a number type of the shared formulas (spec's posenc/formulas/number.hpp): each
// operation is approx.hpp's certified one, so a formula instantiated with Approx<R> keeps its
// error bounds and exactness tracking, and a branch its intervals cannot decide throws
// NeedMorePrecision (the Ziv driver then retries at a higher precision).
#include <cstdint>

#include "posenc/formulas/number.hpp"
#include "posenc/reference/approx.hpp"

namespace posenc::formulas {

template <class R>
struct Number<ref::Approx<R>> {
  using A = ref::Approx<R>;
  static A from_int(std::int64_t n) { return ref::exact_int<R>(n); }
  static A from_double(double x) { return ref::exact_double<R>(x); }
  static A pi() { return ref::pi<R>(); }
  static A log(const A& x) { return ref::log(x); }
  static A exp(const A& x) { return ref::exp(x); }
  static A pow(const A& x, const A& y) { return ref::pow(x, y); }
  static A sqrt(const A& x) { return ref::sqrt(x); }
  static A floor(const A& x) { return ref::floor(x); }
  static A ceil(const A& x) { return ref::ceil(x); }
  static A min(const A& a, const A& b) { return ref::min(a, b); }
  static A max(const A& a, const A& b) { return ref::max(a, b); }
  static bool less(const A& a, const A& b) { return ref::less(a, b); }
  // Equal for certain: both exact and the same value. Two inexact values that happen to agree
  // are not known to be equal, and YaRN's guard does not fire on them.
  static bool known_equal(const A& a, const A& b) { return a.is_exact() && b.is_exact() && a.v == b.v; }
};

}  // namespace posenc::formulas
