#include "random_inputs.hpp"

#include <cmath>

namespace posenc::generator {

std::uint64_t SplitMix64::below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t v = next();
  while (v >= limit) v = next();
  return v % n;
}

double random_value(SplitMix64& rng, Format format) {
  const int p = spec(format).precision;
  const bool negative = (rng.next() >> 63) != 0;
  const int binade = static_cast<int>(rng.below(6)) - 4;
  const std::uint64_t significand = (std::uint64_t{1} << (p - 1)) | rng.below(std::uint64_t{1} << (p - 1));
  const double v = std::ldexp(static_cast<double>(significand), binade - (p - 1));
  return negative ? -v : v;
}

std::vector<double> random_vector(SplitMix64& rng, Format format, std::int64_t n) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(random_value(rng, format));
  return out;
}

}  // namespace posenc::generator
