#pragma once
// Per-pair RoPE frequencies and the attention factor, for every scaling, in exact real math.
// Sources are cited per scaling; "HF" is Hugging Face transformers, modeling_rope_utils.py.
// The formulas' own constants (2*pi, 0.1 of YaRN's mscale, 0.001 of the YaRN ramp guard) are the
// exact real numbers, not their binary64 roundings.
#include <cmath>
#include <vector>

#include "posenc/params/rope.hpp"
#include "posenc/reference/approx.hpp"

namespace posenc::ref {

template <class R>
struct RopeFrequencies {
  std::vector<Approx<R>> inv_freq;  // one per pair, pair_count() entries
  Approx<R> attention_factor;       // multiplies cos and sin (HF "attention_scaling")
};

namespace rope_detail {

// base^(-2i/dim) for i = 0..count-1 (RoFormer eq. 15: theta_i = base^(-2(i-1)/d), 1-based).
template <class R>
std::vector<Approx<R>> default_inv_freq(const Approx<R>& base, std::int64_t dim, std::int64_t count) {
  const Approx<R> log_base = log(base);
  std::vector<Approx<R>> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    out.push_back(exp(exact_int<R>(-2 * i) / exact_int<R>(dim) * log_base));
  }
  return out;
}

// NTK-aware base (bloc97): base * alpha^(dim/(dim-2)).
template <class R>
Approx<R> ntk_base(const Approx<R>& base, const Approx<R>& alpha, std::int64_t dim) {
  return base * pow(alpha, exact_int<R>(dim) / exact_int<R>(dim - 2));
}

// YaRN (Peng et al. 2023, eq. for r(d) and sqrt(1/t) = 0.1 ln s + 1); HF get_mscale.
template <class R>
Approx<R> yarn_mscale(double scale, const Approx<R>& mscale) {
  if (scale <= 1.0) return Approx<R>::exact(R(1));
  const Approx<R> tenth = exact_int<R>(1) / exact_int<R>(10);
  return tenth * mscale * log(exact_double<R>(scale)) + exact_int<R>(1);
}

// HF find_correction_dim: dim * ln(orig / (rotations * 2 pi)) / (2 ln base).
template <class R>
Approx<R> yarn_correction_dim(double rotations, std::int64_t dim, const Approx<R>& base,
                              std::int64_t original) {
  const Approx<R> two_pi = exact_int<R>(2) * pi<R>();
  const Approx<R> ratio = exact_int<R>(original) / (exact_double<R>(rotations) * two_pi);
  return exact_int<R>(dim) * log(ratio) / (exact_int<R>(2) * log(base));
}

template <class R>
RopeFrequencies<R> yarn(const RopeParams& p, const Approx<R>& base) {
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const std::int64_t original = *s.original_max_positions;
  const Approx<R> factor = exact_double<R>(*s.factor);
  // HF find_correction_range: floor/ceil when truncating, then clamp to [0, dim - 1].
  Approx<R> low = yarn_correction_dim<R>(s.yarn_beta_fast(), dim, base, original);
  Approx<R> high = yarn_correction_dim<R>(s.yarn_beta_slow(), dim, base, original);
  bool same = s.yarn_beta_fast() == s.yarn_beta_slow();
  if (s.yarn_truncate()) {
    low = floor(low);
    high = ceil(high);
    same = false;
  }
  low = max(low, exact_int<R>(0));
  high = min(high, exact_int<R>(dim - 1));
  // HF linear_ramp_factor: "if min == max: max += 0.001" (guards a zero-width ramp).
  if (same || (low.is_exact() && high.is_exact() && low.v == high.v)) {
    high = high + exact_int<R>(1) / exact_int<R>(1000);
  }
  const auto extrapolation = default_inv_freq(base, dim, dim / 2);
  RopeFrequencies<R> out{{}, Approx<R>::exact(R(1))};
  const Approx<R> one = exact_int<R>(1);
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    const Approx<R> ramp = max(min((exact_int<R>(i) - low) / (high - low), one), exact_int<R>(0));
    const Approx<R>& e = extrapolation[static_cast<std::size_t>(i)];
    out.inv_freq.push_back(e / factor * ramp + e * (one - ramp));
  }
  if (s.attention_factor) {
    out.attention_factor = exact_double<R>(*s.attention_factor);
  } else if (s.mscale && s.mscale_all_dim) {
    out.attention_factor = yarn_mscale(*s.factor, exact_double<R>(*s.mscale)) /
                           yarn_mscale(*s.factor, exact_double<R>(*s.mscale_all_dim));
  } else {
    out.attention_factor = yarn_mscale(*s.factor, one);
  }
  return out;
}

// Llama 3.1 (Meta's reference apply_scaling; HF _compute_llama3_parameters).
template <class R>
std::vector<Approx<R>> llama3(const RopeParams& p, std::vector<Approx<R>> inv) {
  const RopeScaling& s = p.scaling;
  const Approx<R> factor = exact_double<R>(*s.factor);
  const Approx<R> low_ff = exact_double<R>(*s.low_freq_factor);
  const Approx<R> high_ff = exact_double<R>(*s.high_freq_factor);
  const Approx<R> original = exact_int<R>(*s.original_max_positions);
  const Approx<R> low_freq_wavelen = original / low_ff;
  const Approx<R> high_freq_wavelen = original / high_ff;
  const Approx<R> two_pi = exact_int<R>(2) * pi<R>();
  for (auto& w : inv) {
    const Approx<R> wavelen = two_pi / w;
    if (less(low_freq_wavelen, wavelen)) {
      w = w / factor;
    } else if (!less(wavelen, high_freq_wavelen)) {
      const Approx<R> smooth = (original / wavelen - low_ff) / (high_ff - low_ff);
      w = (exact_int<R>(1) - smooth) * w / factor + smooth * w;
    }
  }
  return inv;
}

// LongRoPE / Phi-3 (HF _compute_longrope_parameters): inv_i = 1 / (ext_i * base^(2i/dim)),
// long factors when seq_len > original_max_positions, else short; attention factor
// sqrt(1 + ln(factor) / ln(original)) for factor > 1.
template <class R>
RopeFrequencies<R> longrope(const RopeParams& p, const Approx<R>& base) {
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const auto& ext = *s.seq_len > *s.original_max_positions ? s.long_factor : s.short_factor;
  RopeFrequencies<R> out{default_inv_freq(base, dim, dim / 2), Approx<R>::exact(R(1))};
  for (std::size_t i = 0; i < out.inv_freq.size(); ++i) {
    out.inv_freq[i] = out.inv_freq[i] / exact_double<R>(ext[i]);
  }
  if (s.attention_factor) {
    out.attention_factor = exact_double<R>(*s.attention_factor);
  } else if (*s.factor > 1.0) {
    const Approx<R> ratio =
        log(exact_double<R>(*s.factor)) / log(exact_int<R>(*s.original_max_positions));
    out.attention_factor = sqrt(exact_int<R>(1) + ratio);
  }
  return out;
}

}  // namespace rope_detail

template <class R>
RopeFrequencies<R> rope_frequencies(const RopeParams& p) {
  using K = RopeScalingKind;
  const RopeScaling& s = p.scaling;
  Approx<R> base = exact_double<R>(p.base);
  switch (s.kind) {
    case K::yarn:
      return rope_detail::yarn(p, base);
    case K::longrope:
      return rope_detail::longrope(p, base);
    case K::ntk:
      base = rope_detail::ntk_base(base, exact_double<R>(*s.factor), p.rotary_dim);
      break;
    case K::dynamic: {
      // HF _compute_dynamic_ntk_parameters, seq_len clamped below at the original length:
      // base * (factor * L / L_orig - (factor - 1))^(dim/(dim-2)).
      const std::int64_t length = std::max(*s.seq_len, *s.original_max_positions);
      const Approx<R> factor = exact_double<R>(*s.factor);
      const Approx<R> alpha = factor * exact_int<R>(length) / exact_int<R>(*s.original_max_positions) -
                              (factor - exact_int<R>(1));
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
  RopeFrequencies<R> out{rope_detail::default_inv_freq(base, exponent_dim, p.rotary_dim / 2),
                         Approx<R>::exact(R(1))};
  out.inv_freq.resize(static_cast<std::size_t>(p.pair_count()), Approx<R>::exact(R(0)));
  if (s.kind == K::linear) {
    for (auto& w : out.inv_freq) w = w / exact_double<R>(*s.factor);
  } else if (s.kind == K::llama3) {
    out.inv_freq = rope_detail::llama3(p, std::move(out.inv_freq));
  }
  return out;
}

}  // namespace posenc::ref
