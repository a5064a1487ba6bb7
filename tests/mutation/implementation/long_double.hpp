#pragma once
// Approx<long double>: the reference's certified number type over long double, and how a
// family's unit turns its results into an Answer. approx.hpp's templates call floor, sqrt, exp,
// ... unqualified on R; for the multiprecision backends (class types) argument-dependent lookup
// finds them, for long double the std:: overloads must be declared in posenc::ref, where the
// templates of the same names for Approx<R> would otherwise hide them (and abs(long double)
// would silently become the C library's abs(int)).
#include <cmath>
#include <cstdlib>
#include <exception>
#include <vector>

namespace posenc::ref {
using std::abs;
using std::ceil;
using std::cos;
using std::exp;
using std::floor;
using std::frexp;
using std::ldexp;
using std::log;
using std::sin;
using std::sqrt;
}  // namespace posenc::ref

#include "mutant.hpp"
#include "posenc/reference/approx.hpp"

namespace posenc::ref {

// Decisions on the long double values, as long double code takes them. Approx<R> decides only
// when its interval does, and for a type without correctly rounded functions its model allows
// 2^10 ulp per call, too wide for the branch edges the vectors place 64 ulp of binary64 from a
// threshold (rope/llama3.json, rope/yarn.json): long double code decides those right.
template <>
inline bool less(const Approx<long double>& a, const Approx<long double>& b) {
  return a.v < b.v;
}
template <>
inline Approx<long double> floor(const Approx<long double>& a) {
  return Approx<long double>::exact(std::floor(a.v));
}
template <>
inline Approx<long double> ceil(const Approx<long double>& a) {
  return Approx<long double>::exact(std::ceil(a.v));
}

}  // namespace posenc::ref

namespace posenc::mutation {

using L = long double;

template <class R>
std::vector<long double> values_of(const std::vector<ref::Approx<R>>& a) {
  std::vector<long double> out;
  out.reserve(a.size());
  for (const auto& x : a) out.push_back(static_cast<long double>(x.v));
  return out;
}

// body() returns the values. A refusal (InvalidParameter) is an invalid answer; an operation
// Approx cannot bound (NeedMorePrecision: a divisor, or the argument of log or sqrt, whose
// interval reaches 0), a domain error (log of a negative, division by an exact zero) or any
// other exception is a failed one, as the inf or NaN of real code would fail.
template <class F>
Answer answer(F&& body) {
  Answer a;
  try {
    a.values = body();
  } catch (const InvalidParameter& e) {
    a.status = Answer::Status::invalid;
    a.message = e.what();
  } catch (const ref::NeedMorePrecision&) {
    a.status = Answer::Status::failed;
    a.message = "a decision long double intervals cannot take";
  } catch (const std::exception& e) {
    a.status = Answer::Status::failed;
    a.message = e.what();
  }
  return a;
}

}  // namespace posenc::mutation
