#include "posenc/formats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "posenc/errors.hpp"

namespace posenc {

std::string_view to_string(Format f) {
  switch (f) {
    case Format::f64: return "f64";
    case Format::f32: return "f32";
    case Format::bf16: return "bf16";
    case Format::f16: return "f16";
  }
  return "?";
}

Format parse_format(std::string_view s) {
  for (Format f : kAllFormats) {
    if (to_string(f) == s) return f;
  }
  throw InvalidParameter("format", "'" + std::string(s) + "'", "one of f64, f32, bf16, f16");
}

double unit_roundoff(Format f) { return std::ldexp(1.0, -spec(f).precision); }

namespace {

struct Decoded {
  bool negative;
  bool infinite;
  bool nan;
  std::uint64_t significand;  // integer significand, hidden bit included for normals
  int quantum;                // value = significand * 2^quantum
};

Decoded decode(Format f, std::uint64_t bits) {
  const FormatSpec s = spec(f);
  const std::uint64_t frac_mask = (std::uint64_t{1} << (s.precision - 1)) - 1;
  const std::uint64_t exp_field = (bits & ~s.sign_bit()) >> (s.precision - 1);
  const std::uint64_t exp_max = (std::uint64_t{1} << (s.width - s.precision)) - 1;
  Decoded d{(bits & s.sign_bit()) != 0, false, false, bits & frac_mask, 0};
  if (exp_field == exp_max) {
    d.infinite = d.significand == 0;
    d.nan = !d.infinite;
    return d;
  }
  if (exp_field == 0) {
    d.quantum = s.min_quantum();
  } else {
    d.significand |= frac_mask + 1;
    d.quantum = s.min_quantum() + static_cast<int>(exp_field) - 1;
  }
  return d;
}

}  // namespace

double to_double(Format f, std::uint64_t bits) {
  if (f == Format::f64) return std::bit_cast<double>(bits);
  Decoded d = decode(f, bits);
  double v = d.nan ? NAN : d.infinite ? INFINITY : std::ldexp(static_cast<double>(d.significand), d.quantum);
  return d.negative ? -v : v;
}

std::optional<std::uint64_t> exact_bits(Format f, double v) {
  if (f == Format::f64) return std::bit_cast<std::uint64_t>(v);
  const FormatSpec s = spec(f);
  const std::uint64_t sign = std::signbit(v) ? s.sign_bit() : 0;
  if (std::isnan(v)) return s.quiet_nan_bits();  // every format has NaN; its payload is not kept
  if (std::isinf(v)) return sign | s.inf_bits();
  if (v == 0) return sign;
  int exponent = 0;
  (void)std::frexp(std::fabs(v), &exponent);
  const int quantum = std::max(exponent - s.precision, s.min_quantum());
  const double n = std::ldexp(std::fabs(v), -quantum);  // exact: a power-of-two scaling
  if (n != std::floor(n)) return std::nullopt;
  const std::int64_t field = std::int64_t{quantum} - s.min_quantum();
  const std::uint64_t magnitude = (static_cast<std::uint64_t>(field) << (s.precision - 1)) + static_cast<std::uint64_t>(n);
  if (magnitude >= s.inf_bits()) return std::nullopt;
  return sign | magnitude;
}

std::string hex_float(Format f, std::uint64_t bits) {
  Decoded d = decode(f, bits);
  std::string sign = d.negative ? "-" : "";
  if (d.nan) return "nan";
  if (d.infinite) return sign + "inf";
  if (d.significand == 0) return sign + "0x0p+0";
  // Normalize to 1.xxx: the top set bit becomes the leading 1.
  int top = 63 - std::countl_zero(d.significand);
  int exponent = d.quantum + top;
  std::uint64_t frac = d.significand & ((std::uint64_t{1} << top) - 1);
  // Left-align the fraction bits on a hex-digit boundary.
  int digits = (top + 3) / 4;
  frac <<= (4 * digits - top);
  std::string out = sign + "0x1";
  if (frac != 0) {
    std::string hex;
    for (int i = digits - 1; i >= 0; --i) hex += "0123456789abcdef"[(frac >> (4 * i)) & 0xf];
    while (!hex.empty() && hex.back() == '0') hex.pop_back();
    out += "." + hex;
  }
  out += "p" + std::string(exponent >= 0 ? "+" : "") + std::to_string(exponent);
  return out;
}

}  // namespace posenc
