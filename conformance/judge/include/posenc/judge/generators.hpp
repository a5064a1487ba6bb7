#pragma once
// RapidCheck generators of valid parameter sets of every family, shared by the backends'
// cross-check and the suite's differential property so both explore the same space.
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "posenc/params.hpp"

namespace posenc::generators {

// Scaling factors: round values models use, and arbitrary multiples of 2^-12 up to 256.
inline double positive_factor() {
  return *rc::gen::oneOf(rc::gen::element(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0),
                         rc::gen::map(rc::gen::inRange(1, 1 << 20), [](int v) { return v / 4096.0; }));
}

// Any valid RoPE configuration with head_dim <= 16: every scaling with its optional fields,
// both layouts, partial and proportional rotary, M-RoPE sections, the inverse rotation.
inline RopeParams any_rope_params() {
  RopeParams p;
  p.head_dim = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.rotary_dim = 2 * *rc::gen::inRange<std::int64_t>(1, p.head_dim / 2 + 1);
  p.base = *rc::gen::oneOf(rc::gen::element(10000.0, 500000.0, 1e6, 150000.0, 1.5),
                           rc::gen::map(rc::gen::inRange(1, 1 << 24), [](int v) { return 1.0 + v / 64.0; }));
  p.layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half);
  p.inverse = *rc::gen::arbitrary<bool>();
  auto& s = p.scaling;
  s.kind = *rc::gen::element(RopeScalingKind::none, RopeScalingKind::linear, RopeScalingKind::ntk,
                             RopeScalingKind::dynamic, RopeScalingKind::yarn, RopeScalingKind::llama3,
                             RopeScalingKind::longrope);
  if (p.rotary_dim < 4 && (s.kind == RopeScalingKind::ntk || s.kind == RopeScalingKind::dynamic)) {
    s.kind = RopeScalingKind::linear;
  }
  if (s.kind != RopeScalingKind::none) s.factor = positive_factor();
  auto original = [] { return *rc::gen::inRange<std::int64_t>(2, 20000); };
  switch (s.kind) {
    case RopeScalingKind::dynamic:
      s.original_max_positions = original();
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, 40000);
      break;
    case RopeScalingKind::yarn: {
      s.original_max_positions = original();
      if (*rc::gen::arbitrary<bool>()) {  // else Hugging Face's defaults
        auto betas = *rc::gen::element(std::pair{32.0, 1.0}, std::pair{1.0, 1.0}, std::pair{16.0, 2.0});
        s.beta_fast = betas.first;
        s.beta_slow = betas.second;
      }
      if (*rc::gen::arbitrary<bool>()) s.truncate = *rc::gen::arbitrary<bool>();
      if (*rc::gen::arbitrary<bool>()) {
        s.mscale = *rc::gen::element(0.707, 1.0, 0.5);
        s.mscale_all_dim = *rc::gen::element(0.707, 1.0);
      }
      if (*rc::gen::arbitrary<bool>()) s.attention_factor = positive_factor();
      break;
    }
    case RopeScalingKind::llama3:
      s.original_max_positions = original();
      s.low_freq_factor = *rc::gen::element(1.0, 0.5, 2.0);
      s.high_freq_factor = *s.low_freq_factor * *rc::gen::element(2.0, 4.0, 1.5);
      break;
    case RopeScalingKind::longrope:
      s.original_max_positions = original();
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, 40000);
      for (std::int64_t i = 0; i < p.rotary_dim / 2; ++i) {
        s.short_factor.push_back(positive_factor());
        s.long_factor.push_back(positive_factor());
      }
      if (*rc::gen::arbitrary<bool>()) s.attention_factor = positive_factor();
      break;
    default:
      break;
  }
  if (s.kind == RopeScalingKind::none || s.kind == RopeScalingKind::linear) {
    if (*rc::gen::arbitrary<bool>()) p.partial = PartialRotary::proportional;
  }
  if (p.partial == PartialRotary::standard && p.rotary_dim >= 6 && *rc::gen::arbitrary<bool>()) {
    std::int64_t pairs = p.rotary_dim / 2;
    std::int64_t first = *rc::gen::inRange<std::int64_t>(1, pairs - 1);
    std::int64_t second = *rc::gen::inRange<std::int64_t>(1, pairs - first);
    p.mrope_section = {first, second, pairs - first - second};
  }
  return p;
}

inline SinusoidalParams any_sinusoidal_params() {
  SinusoidalParams p;
  p.d_model = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.base = *rc::gen::element(10000.0, 500.0, 1e6, 1.25);
  p.layout = *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated);
  p.frequencies = *rc::gen::element(SinusoidalFrequencies::paper, SinusoidalFrequencies::tensor2tensor);
  return p;
}

// Any valid attention configuration of a few heads (SPEC.md section 2.7): head_dim <= 16 (the
// rope's, any_rope_params(), when rotated), value_dim <= 8, 1 to 4 query heads over a divisor of
// KV heads, no encoding, RoPE or ALiBi in either mode, every mask (causal ALiBi with the causal
// mask: a visible key after its query is invalid), the scale absent, given or from a denominator,
// and DeepSeek's mscale^2 on a rope with a factor. The table is never given (the properties ask
// the implementation for its own rotation).
inline AttentionParams any_attention_params() {
  AttentionParams p;
  const int encoding = *rc::gen::inRange(0, 3);
  if (encoding == 1) {
    p.rope = any_rope_params();
    p.head_dim = p.rope->head_dim;
  } else {
    p.head_dim = *rc::gen::inRange<std::int64_t>(1, 17);
  }
  p.value_dim = *rc::gen::inRange<std::int64_t>(1, 9);
  p.query_heads = *rc::gen::inRange<std::int64_t>(1, 5);
  std::vector<std::int64_t> divisors;
  for (std::int64_t g = 1; g <= p.query_heads; ++g) {
    if (p.query_heads % g == 0) divisors.push_back(g);
  }
  p.kv_heads = *rc::gen::elementOf(divisors);
  p.mask = *rc::gen::element(AttentionMask::none, AttentionMask::causal, AttentionMask::explicit_);
  if (encoding == 2) {
    AlibiParams a;
    a.n_heads = p.query_heads;
    a.mode = *rc::gen::element(AlibiMode::causal, AlibiMode::symmetric);
    if (a.mode == AlibiMode::causal) p.mask = AttentionMask::causal;
    p.alibi = a;
  }
  switch (*rc::gen::inRange(0, 3)) {
    case 1: p.scale = *rc::gen::element(0.125, 0.25, 0.5, 1.0, 0x1.6a09e667f3bcdp-2); break;
    case 2: p.scale_denominator = *rc::gen::element(8.0, 12.0, 256.0); break;
    default: break;
  }
  if (!p.scale && p.rope && p.rope->scaling.factor && *rc::gen::arbitrary<bool>()) {
    p.scale_mscale_all_dim = *rc::gen::element(0.707, 1.0);
  }
  return p;
}

// The tokens of an attention problem: n_k keys at first_a + j on each position axis a, the
// queries the last n_q of them (n_q <= n_k), and for an explicit mask random visibility with at
// least one key per row.
struct AttentionShape {
  std::int64_t queries = 0, keys = 0;
  std::vector<std::int64_t> query_positions, key_positions;
  std::vector<std::uint8_t> mask;
};

inline AttentionShape any_attention_shape(const AttentionParams& p, std::int64_t max_first, std::int64_t max_keys = 8,
                                          std::int64_t max_queries = 4) {
  AttentionShape s;
  s.keys = *rc::gen::inRange<std::int64_t>(1, max_keys + 1);
  s.queries = *rc::gen::inRange<std::int64_t>(1, std::min(s.keys, max_queries) + 1);
  const std::int64_t axes = p.position_axes();
  std::vector<std::int64_t> first;
  for (std::int64_t a = 0; a < axes; ++a) first.push_back(*rc::gen::inRange<std::int64_t>(0, max_first + 1));
  for (std::int64_t j = 0; j < s.keys; ++j) {
    for (std::int64_t a = 0; a < axes; ++a) s.key_positions.push_back(first[static_cast<std::size_t>(a)] + j);
  }
  const auto first_query = static_cast<std::size_t>((s.keys - s.queries) * axes);
  s.query_positions.assign(s.key_positions.begin() + static_cast<std::ptrdiff_t>(first_query), s.key_positions.end());
  if (p.mask == AttentionMask::explicit_) {
    for (std::int64_t i = 0; i < s.queries; ++i) {
      const auto seen = *rc::gen::inRange<std::int64_t>(0, s.keys);  // a key row i surely sees
      for (std::int64_t j = 0; j < s.keys; ++j) {
        s.mask.push_back(j == seen || *rc::gen::arbitrary<bool>() ? 1 : 0);
      }
    }
  }
  return s;
}

inline std::string describe(const RopeParams& p);

inline std::string describe(const AttentionParams& p) {
  std::ostringstream os;
  os << "attention head_dim=" << p.head_dim << " value_dim=" << p.value_dim << " heads=" << p.query_heads << "/"
     << p.kv_heads << " mask=" << to_string(p.mask);
  if (p.rope) os << " rope(" << describe(*p.rope) << ")";
  if (p.alibi) os << " alibi(" << to_string(p.alibi->mode) << ")";
  if (p.scale) os << " scale=" << std::hexfloat << *p.scale << std::defaultfloat;
  if (p.scale_denominator) os << " scale_denominator=" << *p.scale_denominator;
  if (p.scale_mscale_all_dim) os << " scale_mscale_all_dim=" << *p.scale_mscale_all_dim;
  return os.str();
}

inline std::string describe(const RopeParams& p) {
  std::ostringstream os;
  os << "head_dim=" << p.head_dim << " rotary_dim=" << p.rotary_dim << " base=" << std::hexfloat << p.base
     << " layout=" << to_string(p.layout) << " partial=" << to_string(p.partial) << " inverse=" << p.inverse
     << " scaling=" << to_string(p.scaling.kind) << " mrope_sections=" << p.mrope_section.size();
  return os.str();
}

inline std::string describe(const SinusoidalParams& p) {
  std::ostringstream os;
  os << "d_model=" << p.d_model << " base=" << p.base << " layout=" << to_string(p.layout)
     << " frequencies=" << to_string(p.frequencies);
  return os.str();
}

}  // namespace posenc::generators
