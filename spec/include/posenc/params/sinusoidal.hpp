#pragma once
// Sinusoidal absolute positional encoding (Vaswani et al. 2017, "Attention Is All You Need", 3.5).
#include <cstdint>
#include <string_view>

namespace posenc {

enum class SinusoidalLayout {
  interleaved,   // paper: PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i)
  concatenated,  // tensor2tensor / fairseq: [sin(p w_0..w_{d/2-1}), cos(p w_0..w_{d/2-1})]
};

enum class SinusoidalFrequencies {
  paper,          // w_i = base^(-2i/d)
  tensor2tensor,  // w_i = base^(-i/max(d/2-1, 1)): tensor2tensor get_timing_signal_1d, fairseq
};

struct SinusoidalParams {
  std::int64_t d_model = 0;  // even, >= 2
  double base = 10000.0;     // finite, > 1
  SinusoidalLayout layout = SinusoidalLayout::interleaved;
  SinusoidalFrequencies frequencies = SinusoidalFrequencies::paper;

  // w_i = base^(-numerator/denominator): the exact exponent of pair i's frequency.
  struct Exponent {
    std::int64_t numerator, denominator;
  };
  Exponent frequency_exponent(std::int64_t i) const {
    if (frequencies == SinusoidalFrequencies::paper) return {2 * i, d_model};
    return {i, d_model / 2 - 1 > 1 ? d_model / 2 - 1 : 1};
  }
  // Where pair i's sine and cosine sit in a row of d_model values.
  std::int64_t sin_index(std::int64_t i) const { return layout == SinusoidalLayout::interleaved ? 2 * i : i; }
  std::int64_t cos_index(std::int64_t i) const {
    return layout == SinusoidalLayout::interleaved ? 2 * i + 1 : i + d_model / 2;
  }

  // Equal when every field holds the same value (reals as numbers: +0 equals -0).
  friend bool operator==(const SinusoidalParams&, const SinusoidalParams&) = default;
};

void validate(const SinusoidalParams& p);
// Positions of absolute encodings are token indices: [0, 2^53], so any double-based consumer can
// also represent them exactly.
void validate_sinusoidal_position(std::int64_t position);

std::string_view to_string(SinusoidalLayout v);
std::string_view to_string(SinusoidalFrequencies v);
SinusoidalLayout parse_sinusoidal_layout(std::string_view s);
SinusoidalFrequencies parse_sinusoidal_frequencies(std::string_view s);

}  // namespace posenc
