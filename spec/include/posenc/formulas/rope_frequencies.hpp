#pragma once
// Per-pair RoPE frequencies and the attention factor, for every scaling, over any number type of
// formulas/number.hpp: the reference instantiates it with its certified Approx<R>, fast/ with
// long double. Sources are cited per scaling; "HF" is Hugging Face transformers,
// modeling_rope_utils.py. The formulas' own constants (2*pi, 0.1 of YaRN's mscale, 0.001 of the
// YaRN ramp guard) are formed from integers (2 * pi(), 1 / 10, 1 / 1000) so that a certified
// type gets the exact real numbers, not their binary64 roundings; in long double the quotient
// is the nearest value, as the literal 0.1L would be.
//
// The order of operations is part of the definition: fast/'s binary32 outputs and the
// reference's error bounds both follow from it, so change it only knowingly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "posenc/formulas/number.hpp"
#include "posenc/params/rope.hpp"

namespace posenc::formulas {

template <class N>
struct RopeFrequencies {
  std::vector<N> inv_freq;  // one per pair, pair_count() entries
  N attention_factor;       // multiplies cos and sin (HF "attention_scaling")
};

namespace rope_detail {

// base^(-2i/dim) for i = 0..count-1 (RoFormer eq. 15: theta_i = base^(-2(i-1)/d), 1-based).
template <class N>
std::vector<N> default_inv_freq(const N& base, std::int64_t dim, std::int64_t count) {
  using T = Number<N>;
  const N log_base = T::log(base);
  std::vector<N> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    out.push_back(T::exp(T::from_int(-2 * i) / T::from_int(dim) * log_base));
  }
  return out;
}

// NTK-aware base (bloc97): base * alpha^(dim/(dim-2)).
template <class N>
N ntk_base(const N& base, const N& alpha, std::int64_t dim) {
  using T = Number<N>;
  return base * T::pow(alpha, T::from_int(dim) / T::from_int(dim - 2));
}

// YaRN (Peng et al. 2023, eq. for r(d) and sqrt(1/t) = 0.1 ln s + 1); HF get_mscale.
template <class N>
N yarn_mscale(double scale, const N& mscale) {
  using T = Number<N>;
  if (scale <= 1.0) return T::from_int(1);
  const N tenth = T::from_int(1) / T::from_int(10);
  return tenth * mscale * T::log(T::from_double(scale)) + T::from_int(1);
}

// HF find_correction_dim: dim * ln(orig / (rotations * 2 pi)) / (2 ln base).
template <class N>
N yarn_correction_dim(double rotations, std::int64_t dim, const N& base, std::int64_t original) {
  using T = Number<N>;
  const N two_pi = T::from_int(2) * T::pi();
  const N ratio = T::from_int(original) / (T::from_double(rotations) * two_pi);
  return T::from_int(dim) * T::log(ratio) / (T::from_int(2) * T::log(base));
}

// YaRN (HF _compute_yarn_parameters): each pair blends interpolation (w / factor) and
// extrapolation (w) by a linear ramp between the correction dimensions of beta_fast and beta_slow.
template <class N>
RopeFrequencies<N> yarn(const RopeParams& p, const N& base) {
  using T = Number<N>;
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const std::int64_t original = *s.original_max_positions;
  const N factor = T::from_double(*s.factor);
  // HF find_correction_range: floor/ceil when truncating, then clamp to [0, dim - 1].
  N low = yarn_correction_dim<N>(s.yarn_beta_fast(), dim, base, original);
  N high = yarn_correction_dim<N>(s.yarn_beta_slow(), dim, base, original);
  bool same = s.yarn_beta_fast() == s.yarn_beta_slow();
  if (s.yarn_truncate()) {
    low = T::floor(low);
    high = T::ceil(high);
    same = false;
  }
  low = T::max(low, T::from_int(0));
  high = T::min(high, T::from_int(dim - 1));
  // HF linear_ramp_factor: "if min == max: max += 0.001" (guards a zero-width ramp).
  if (same || T::known_equal(low, high)) {
    high = high + T::from_int(1) / T::from_int(1000);
  }
  const auto extrapolation = default_inv_freq(base, dim, dim / 2);
  RopeFrequencies<N> out{{}, T::from_int(1)};
  const N one = T::from_int(1);
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    // HF linear_ramp_factor: clamp((i - min) / (max - min), 0, 1).
    const N ramp = T::max(T::min((T::from_int(i) - low) / (high - low), one), T::from_int(0));
    const N& e = extrapolation[static_cast<std::size_t>(i)];
    out.inv_freq.push_back(e / factor * ramp + e * (one - ramp));
  }
  if (s.attention_factor) {
    out.attention_factor = T::from_double(*s.attention_factor);
  } else if (s.mscale && s.mscale_all_dim) {
    out.attention_factor = yarn_mscale(*s.factor, T::from_double(*s.mscale)) /
                           yarn_mscale(*s.factor, T::from_double(*s.mscale_all_dim));
  } else {
    out.attention_factor = yarn_mscale(*s.factor, one);
  }
  return out;
}

// Llama 3.1 (Meta's reference apply_scaling; HF _compute_llama3_parameters).
template <class N>
std::vector<N> llama3(const RopeParams& p, std::vector<N> inv) {
  using T = Number<N>;
  const RopeScaling& s = p.scaling;
  const N factor = T::from_double(*s.factor);
  const N low_ff = T::from_double(*s.low_freq_factor);
  const N high_ff = T::from_double(*s.high_freq_factor);
  const N original = T::from_int(*s.original_max_positions);
  const N low_freq_wavelen = original / low_ff;
  const N high_freq_wavelen = original / high_ff;
  const N two_pi = T::from_int(2) * T::pi();
  // Equal factors (Llama 4): no medium band. The exact wavelength 2 pi base^(2i/D) is
  // transcendental and never equals the rational L0/low_freq_factor, so every pair is kept or
  // divided; a rounded type that lands on the threshold keeps it (HF's 0/0 there is NaN).
  const bool no_medium_band = *s.low_freq_factor == *s.high_freq_factor;
  for (auto& w : inv) {
    const N wavelen = two_pi / w;
    if (T::less(low_freq_wavelen, wavelen)) {
      w = w / factor;
    } else if (!no_medium_band && !T::less(wavelen, high_freq_wavelen)) {
      const N smooth = (original / wavelen - low_ff) / (high_ff - low_ff);
      w = (T::from_int(1) - smooth) * w / factor + smooth * w;
    }
  }
  return inv;
}

// LongRoPE / Phi-3 (HF _compute_longrope_parameters): inv_i = 1 / (ext_i * base^(2i/dim)),
// long factors when seq_len > original_max_positions, else short; attention factor
// sqrt(1 + ln(factor) / ln(original)) for factor > 1.
template <class N>
RopeFrequencies<N> longrope(const RopeParams& p, const N& base) {
  using T = Number<N>;
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const auto& ext = *s.seq_len > *s.original_max_positions ? s.long_factor : s.short_factor;
  RopeFrequencies<N> out{default_inv_freq(base, dim, dim / 2), T::from_int(1)};
  for (std::size_t i = 0; i < out.inv_freq.size(); ++i) {
    out.inv_freq[i] = out.inv_freq[i] / T::from_double(ext[i]);
  }
  if (s.attention_factor) {
    out.attention_factor = T::from_double(*s.attention_factor);
  } else if (*s.factor > 1.0) {
    const N ratio = T::log(T::from_double(*s.factor)) / T::log(T::from_int(*s.original_max_positions));
    out.attention_factor = T::sqrt(T::from_int(1) + ratio);
  }
  return out;
}

}  // namespace rope_detail

// The frequencies of validated parameters (validate(RopeParams) first: the optional fields a
// scaling needs are read unchecked).
template <class N>
RopeFrequencies<N> rope_frequencies(const RopeParams& p) {
  using T = Number<N>;
  using K = RopeScalingKind;
  const RopeScaling& s = p.scaling;
  N base = T::from_double(p.base);
  switch (s.kind) {
    case K::yarn:
      return rope_detail::yarn(p, base);
    case K::longrope:
      return rope_detail::longrope(p, base);
    case K::ntk:
      base = rope_detail::ntk_base(base, T::from_double(*s.factor), p.rotary_dim);
      break;
    case K::dynamic: {
      // HF _compute_dynamic_ntk_parameters, seq_len clamped below at the original length:
      // base * (factor * L / L_orig - (factor - 1))^(dim/(dim-2)).
      const std::int64_t length = std::max(*s.seq_len, *s.original_max_positions);
      const N factor = T::from_double(*s.factor);
      const N alpha = factor * T::from_int(length) / T::from_int(*s.original_max_positions) -
                      (factor - T::from_int(1));
      base = rope_detail::ntk_base(base, alpha, p.rotary_dim);
      break;
    }
    default:
      break;
  }
  // Proportional (HF _compute_proportional_rope_parameters): exponent over head_dim, and the
  // pairs past rotary_dim/2 get frequency 0.
  const bool proportional = p.partial == PartialRotary::proportional;
  const std::int64_t exponent_dim = proportional ? p.head_dim : p.rotary_dim;
  RopeFrequencies<N> out{rope_detail::default_inv_freq(base, exponent_dim, p.rotary_dim / 2), T::from_int(1)};
  out.inv_freq.resize(static_cast<std::size_t>(p.pair_count()), T::from_int(0));
  if (s.kind == K::linear) {
    // Position interpolation (Chen et al. 2023): w_i / factor.
    for (auto& w : out.inv_freq) w = w / T::from_double(*s.factor);
  } else if (s.kind == K::llama3) {
    out.inv_freq = rope_detail::llama3(p, std::move(out.inv_freq));
  }
  return out;
}

}  // namespace posenc::formulas
