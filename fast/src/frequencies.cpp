#include "frequencies.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace posenc::fast::detail {
namespace {

using L = long double;
constexpr L kTwoPi = 2 * std::numbers::pi_v<L>;

// base^(-2i/dim), i < count (RoFormer eq. 15).
std::vector<L> default_inv_freq(L base, std::int64_t dim, std::int64_t count) {
  std::vector<L> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(std::exp(L(-2 * i) / L(dim) * std::log(base)));
  return out;
}

// NTK-aware (bloc97): base * alpha^(dim/(dim-2)).
L ntk_base(L base, L alpha, std::int64_t dim) { return base * std::pow(alpha, L(dim) / L(dim - 2)); }

// YaRN's mscale (HF get_mscale): 0.1 m ln s + 1 for s > 1.
L yarn_mscale(L scale, L m) { return scale <= 1 ? L(1) : L(0.1L) * m * std::log(scale) + 1; }

// HF find_correction_dim.
L yarn_correction_dim(L rotations, std::int64_t dim, L base, std::int64_t original) {
  return L(dim) * std::log(L(original) / (rotations * kTwoPi)) / (2 * std::log(base));
}

LongFrequencies yarn(const RopeParams& p) {
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const L base = p.base, factor = *s.factor;
  L low = yarn_correction_dim(s.yarn_beta_fast(), dim, base, *s.original_max_positions);
  L high = yarn_correction_dim(s.yarn_beta_slow(), dim, base, *s.original_max_positions);
  bool same = s.yarn_beta_fast() == s.yarn_beta_slow();
  if (s.yarn_truncate()) {
    low = std::floor(low);
    high = std::ceil(high);
    same = false;
  }
  low = std::max(low, L(0));
  high = std::min(high, L(dim - 1));
  if (same || low == high) high += L(0.001L);  // HF linear_ramp_factor's guard
  LongFrequencies out;
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    const L e = std::exp(L(-2 * i) / L(dim) * std::log(base));
    const L ramp = std::clamp((L(i) - low) / (high - low), L(0), L(1));
    out.inv_freq.push_back(e / factor * ramp + e * (1 - ramp));
  }
  if (s.attention_factor) {
    out.attention = *s.attention_factor;
  } else if (s.mscale && s.mscale_all_dim) {
    out.attention = yarn_mscale(factor, *s.mscale) / yarn_mscale(factor, *s.mscale_all_dim);
  } else {
    out.attention = yarn_mscale(factor, 1);
  }
  return out;
}

void llama3(const RopeScaling& s, std::vector<L>& inv) {
  const L factor = *s.factor, low_ff = *s.low_freq_factor, high_ff = *s.high_freq_factor;
  const L original = L(*s.original_max_positions);
  const L low_freq_wavelen = original / low_ff, high_freq_wavelen = original / high_ff;
  for (auto& w : inv) {
    const L wavelen = kTwoPi / w;
    if (low_freq_wavelen < wavelen) {
      w = w / factor;
    } else if (!(wavelen < high_freq_wavelen)) {
      const L smooth = (original / wavelen - low_ff) / (high_ff - low_ff);
      w = (1 - smooth) * w / factor + smooth * w;
    }
  }
}

LongFrequencies longrope(const RopeParams& p) {
  const RopeScaling& s = p.scaling;
  const auto& ext = *s.seq_len > *s.original_max_positions ? s.long_factor : s.short_factor;
  LongFrequencies out{default_inv_freq(p.base, p.rotary_dim, p.rotary_dim / 2), 1};
  for (std::size_t i = 0; i < out.inv_freq.size(); ++i) out.inv_freq[i] /= L(ext[i]);
  if (s.attention_factor) {
    out.attention = *s.attention_factor;
  } else if (*s.factor > 1.0) {
    out.attention = std::sqrt(1 + std::log(L(*s.factor)) / std::log(L(*s.original_max_positions)));
  }
  return out;
}

}  // namespace

LongFrequencies rope_frequencies(const RopeParams& p) {
  using K = RopeScalingKind;
  const RopeScaling& s = p.scaling;
  L base = p.base;
  switch (s.kind) {
    case K::yarn:
      return yarn(p);
    case K::longrope:
      return longrope(p);
    case K::ntk:
      base = ntk_base(base, *s.factor, p.rotary_dim);
      break;
    case K::dynamic: {
      const std::int64_t length = std::max(*s.seq_len, *s.original_max_positions);
      const L factor = *s.factor;
      base = ntk_base(base, factor * L(length) / L(*s.original_max_positions) - (factor - 1), p.rotary_dim);
      break;
    }
    default:
      break;
  }
  const bool proportional = p.partial == PartialRotary::proportional;
  LongFrequencies out{default_inv_freq(base, proportional ? p.head_dim : p.rotary_dim, p.rotary_dim / 2), 1};
  out.inv_freq.resize(static_cast<std::size_t>(p.pair_count()), L(0));
  if (s.kind == K::linear) {
    for (auto& w : out.inv_freq) w /= L(*s.factor);
  } else if (s.kind == K::llama3) {
    llama3(s, out.inv_freq);
  }
  return out;
}

long double sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i) {
  const auto e = p.frequency_exponent(i);
  return std::exp(-L(e.numerator) / L(e.denominator) * std::log(L(p.base)));
}

}  // namespace posenc::fast::detail
