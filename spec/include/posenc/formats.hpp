#pragma once
// The binary interchange formats results are rounded to, and their text form (C99 hex floats).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace posenc {

enum class Format { f64, f32, bf16, f16 };
inline constexpr Format kAllFormats[] = {Format::f64, Format::f32, Format::bf16, Format::f16};

// IEEE 754 binary format: `precision` significand bits including the hidden one, normal
// exponents in [emin, emax], `width` bits in all.
struct FormatSpec {
  int precision;
  int emin;
  int emax;
  int width;
  // Exponent of the smallest subnormal's unit.
  constexpr int min_quantum() const { return emin - precision + 1; }
  // Bit pattern of +infinity.
  constexpr std::uint64_t inf_bits() const {
    return ((std::uint64_t{1} << (width - precision)) - 1) << (precision - 1);
  }
  constexpr std::uint64_t sign_bit() const { return std::uint64_t{1} << (width - 1); }
  // The canonical quiet NaN: exponent all ones, the top fraction bit set.
  constexpr std::uint64_t quiet_nan_bits() const { return inf_bits() | std::uint64_t{1} << (precision - 2); }
};

constexpr FormatSpec spec(Format f) {
  switch (f) {
    case Format::f64: return {53, -1022, 1023, 64};
    case Format::f32: return {24, -126, 127, 32};
    case Format::bf16: return {8, -126, 127, 16};
    case Format::f16: return {11, -14, 15, 16};
  }
  return {0, 0, 0, 0};
}

std::string_view to_string(Format f);
Format parse_format(std::string_view s);

// Unit roundoff u = 2^-precision (the bound on relative rounding error, round to nearest).
double unit_roundoff(Format f);

// The value a bit pattern of format f encodes, as a double (exact for all four formats).
double to_double(Format f, std::uint64_t bits);

// The bit pattern of v in format f, if v is exactly representable there (infinities are; NaN is
// not a value and gives nothing).
std::optional<std::uint64_t> exact_bits(Format f, double v);

// Bit pattern as a C99 hex float: normalized, trailing zero digits dropped, as printf("%a")
// prints a normal double ("0x1.8p+1", "-0x0p+0", "inf"). Subnormals are written normalized
// ("0x1p-24" for the smallest f16), which every hex-float reader accepts.
std::string hex_float(Format f, std::uint64_t bits);

}  // namespace posenc
