#pragma once
// A certified result: the exact value to 40 significant decimal digits and its correctly rounded
// bit pattern in each format.
#include <array>
#include <bit>
#include <cstdint>
#include <string>

#include "posenc/formats.hpp"

namespace posenc {

struct Rounded {
  // The exact real value rounded to 41 significant decimal digits (d.dddde+XX), ties to even.
  std::string exact;
  // Correctly rounded (round to nearest, ties to even) bit pattern per format, in kAllFormats order.
  std::array<std::uint64_t, 4> bits{};

  std::uint64_t bits_of(Format f) const { return bits[static_cast<std::size_t>(f)]; }
  double as_double(Format f) const { return to_double(f, bits_of(f)); }
  double f64() const { return std::bit_cast<double>(bits_of(Format::f64)); }
  float f32() const { return std::bit_cast<float>(static_cast<std::uint32_t>(bits_of(Format::f32))); }
  std::string hex(Format f) const { return hex_float(f, bits_of(f)); }

  friend bool operator==(const Rounded&, const Rounded&) = default;
};

// NaN in every format (the canonical quiet NaN), its exact value written "nan".
inline Rounded rounded_nan() {
  Rounded r;
  r.exact = "nan";
  for (Format f : kAllFormats) r.bits[static_cast<std::size_t>(f)] = spec(f).quiet_nan_bits();
  return r;
}

}  // namespace posenc
