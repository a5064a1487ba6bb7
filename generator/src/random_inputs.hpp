#pragma once
// Seeded, documented random inputs (SPEC.md, "Random inputs"): SplitMix64 (Steele, Lea, Flood
// 2014), not the standard library's unspecified distributions, so any language can reproduce them.
#include <cstdint>
#include <vector>

#include "posenc/formats.hpp"

namespace posenc::generator {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

// A value exactly representable in `format`: sign, binade 2^e with e uniform in [-4, 1], and a
// uniform significand of the format's precision, so |x| in [1/16, 4).
double random_value(SplitMix64& rng, Format format);
std::vector<double> random_vector(SplitMix64& rng, Format format, std::int64_t n);

// The common grid (SPEC.md section 3): values drawn with bf16's precision, 8 significant bits,
// in binades [-4, 1]. 8 bits fit f16's 11 and f32's 24, and |x| in [1/16, 4) lies inside f16's
// normal range [2^-14, 65504], so every value is exact in f64, f32, bf16 and f16 and a case on
// the grid is judged in all four formats.
inline constexpr Format kCommonGrid = Format::bf16;
inline std::vector<double> grid_vector(SplitMix64& rng, std::int64_t n) { return random_vector(rng, kCommonGrid, n); }

}  // namespace posenc::generator
