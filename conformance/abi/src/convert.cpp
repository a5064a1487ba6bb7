#include "posenc/abi/convert.hpp"

namespace posenc::plugin {

RopeParams from_abi(const posenc_rope_params& a) {
  RopeParams p;
  p.head_dim = a.head_dim;
  p.rotary_dim = a.rotary_dim;
  p.base = a.base;
  p.layout = a.layout ? RopeLayout::half : RopeLayout::interleaved;
  p.partial = a.partial ? PartialRotary::proportional : PartialRotary::standard;
  p.inverse = a.inverse != 0;
  if (a.n_axes > 1) p.mrope_section.assign(a.mrope_section, a.mrope_section + std::min(a.n_axes, 4));
  const posenc_rope_scaling& s = a.scaling;
  RopeScaling& t = p.scaling;
  if (s.kind < 0 || s.kind > POSENC_SCALING_LONGROPE) {
    throw InvalidParameter("rope.scaling.kind", std::to_string(s.kind), "a posenc_rope_scaling_kind");
  }
  t.kind = static_cast<RopeScalingKind>(s.kind);
  auto has = [&](uint32_t bit) { return (s.fields & bit) != 0; };
  if (has(POSENC_FIELD_FACTOR)) t.factor = s.factor;
  if (has(POSENC_FIELD_ORIGINAL_MAX_POSITIONS)) t.original_max_positions = s.original_max_positions;
  if (has(POSENC_FIELD_SEQ_LEN)) t.seq_len = s.seq_len;
  if (has(POSENC_FIELD_BETA_FAST)) t.beta_fast = s.beta_fast;
  if (has(POSENC_FIELD_BETA_SLOW)) t.beta_slow = s.beta_slow;
  if (has(POSENC_FIELD_TRUNCATE)) t.truncate = s.truncate != 0;
  if (has(POSENC_FIELD_MSCALE)) t.mscale = s.mscale;
  if (has(POSENC_FIELD_MSCALE_ALL_DIM)) t.mscale_all_dim = s.mscale_all_dim;
  if (has(POSENC_FIELD_ATTENTION_FACTOR)) t.attention_factor = s.attention_factor;
  if (has(POSENC_FIELD_LOW_FREQ_FACTOR)) t.low_freq_factor = s.low_freq_factor;
  if (has(POSENC_FIELD_HIGH_FREQ_FACTOR)) t.high_freq_factor = s.high_freq_factor;
  if (s.short_factor && s.n_short_factor > 0) t.short_factor.assign(s.short_factor, s.short_factor + s.n_short_factor);
  if (s.long_factor && s.n_long_factor > 0) t.long_factor.assign(s.long_factor, s.long_factor + s.n_long_factor);
  return p;
}

SinusoidalParams from_abi(const posenc_sinusoidal_params& a) {
  SinusoidalParams p;
  p.d_model = a.d_model;
  p.base = a.base;
  p.layout = a.layout ? SinusoidalLayout::concatenated : SinusoidalLayout::interleaved;
  p.frequencies = a.frequencies ? SinusoidalFrequencies::tensor2tensor : SinusoidalFrequencies::paper;
  return p;
}

AlibiParams from_abi(const posenc_alibi_params& a) {
  AlibiParams p;
  p.n_heads = a.n_heads;
  p.mode = a.mode ? AlibiMode::symmetric : AlibiMode::causal;
  return p;
}

}  // namespace posenc::plugin
