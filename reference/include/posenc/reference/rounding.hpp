#pragma once
// Correct rounding from a multiprecision value straight to a binary format: never through a
// narrower format, so there is no double rounding. Round to nearest, ties to even; subnormals,
// signed zeros and overflow to infinity as IEEE 754 specifies.
#include <optional>
#include <string>

#include "posenc/reference/approx.hpp"
#include "posenc/rounded.hpp"

namespace posenc::ref {

inline constexpr int kDecimalDigits = 40;  // digits after the point: 41 significant digits

// Bit pattern of x (exactly representable at R's precision) rounded to format f.
template <class R>
std::uint64_t round_to_format(const R& x, Format f) {
  const FormatSpec s = spec(f);
  const std::uint64_t sign = signbit(x) ? s.sign_bit() : 0;
  if (x == 0) return sign;
  R ax = abs(x);
  int exponent = 0;
  (void)frexp(ax, &exponent);  // ax in [2^(exponent-1), 2^exponent)
  // Unit of the last place of the result: precision bits below the leading one, but never below
  // the smallest subnormal's unit.
  const int quantum = std::max(exponent - s.precision, s.min_quantum());
  const std::int64_t field = std::int64_t{quantum} - s.min_quantum();
  if (field >= (std::int64_t{1} << (s.width - s.precision))) return sign | s.inf_bits();
  R scaled = ldexp(ax, -quantum);  // exact: a power-of-two scaling
  R integer = floor(scaled);
  R fraction = scaled - integer;   // exact: integer and scaled share an exponent range
  auto n = integer.template convert_to<std::uint64_t>();
  if (fraction > R(0.5) || (fraction == R(0.5) && (n & 1) != 0)) ++n;
  // A carry into the next binade lands on the right pattern because the encoding is monotone.
  std::uint64_t magnitude = (static_cast<std::uint64_t>(field) << (s.precision - 1)) + n;
  if (magnitude >= s.inf_bits()) magnitude = s.inf_bits();
  return sign | magnitude;
}

template <class R>
std::string decimal(const R& x) {
  return x.str(kDecimalDigits, std::ios_base::scientific);
}

// The rounded result if the interval around a decides every format and the decimal string;
// nothing if its ends round differently (Ziv: try again at a higher precision).
template <class R>
std::optional<Rounded> try_round(const Approx<R>& a) {
  Rounded out;
  if (a.is_exact()) {
    out.exact = decimal(a.v);
    for (Format f : kAllFormats) out.bits[static_cast<std::size_t>(f)] = round_to_format(a.v, f);
    return out;
  }
  const R lo = lower(a), hi = upper(a);
  // An interval that contains zero cannot decide the sign of an underflowed result.
  if (signbit(lo) != signbit(hi) || lo == 0 || hi == 0) return std::nullopt;
  out.exact = decimal(lo);
  if (out.exact != decimal(hi)) return std::nullopt;
  for (Format f : kAllFormats) {
    std::uint64_t bits = round_to_format(lo, f);
    if (bits != round_to_format(hi, f)) return std::nullopt;
    out.bits[static_cast<std::size_t>(f)] = bits;
  }
  return out;
}

}  // namespace posenc::ref
