#pragma once
// The softmax scale of an attention (SPEC.md section 2.7), over any number type of
// formulas/number.hpp: the given binary64 value, else 1/sqrt(denominator) (head_dim unless
// scale_denominator is given: Gemma's query_pre_attn_scalar), times DeepSeek-V2's
// g(factor, mscale_all_dim)^2 (modeling_deepseek_v2: softmax_scale * mscale * mscale) when asked.
#include "posenc/formulas/number.hpp"
#include "posenc/formulas/rope_frequencies.hpp"
#include "posenc/params/attention.hpp"

namespace posenc::formulas {

template <class N>
N attention_scale(const AttentionParams& p) {
  using T = Number<N>;
  if (p.scale) return T::from_double(*p.scale);
  const N denominator = p.scale_denominator ? T::from_double(*p.scale_denominator) : T::from_int(p.head_dim);
  N scale = T::from_int(1) / T::sqrt(denominator);
  if (p.scale_mscale_all_dim) {
    const N g = rope_detail::yarn_mscale(*p.rope->scaling.factor, T::from_double(*p.scale_mscale_all_dim));
    scale = scale * g * g;
  }
  return scale;
}

}  // namespace posenc::formulas
