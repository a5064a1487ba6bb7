// Exact real-number identities between different cases. Both sides are the same real number, so
// their certified roundings must agree bit for bit in every format: a reference that rounds
// anything by luck, or computes a formula slightly wrong, fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "posenc/reference/reference.hpp"
#include "posenc/generator/seed_examples.hpp"

namespace posenc {
namespace {

using reference::rope_rotate;
using reference::rope_table_row;

RopeParams rope(std::int64_t head_dim, std::int64_t rotary_dim) {
  RopeParams p;
  p.head_dim = head_dim;
  p.rotary_dim = rotary_dim;
  return p;
}

std::vector<double> input(std::size_t n) {
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) x.push_back(seeds::kQ[i % 8] * (1.0 + static_cast<double>(i / 8)));
  return x;
}

std::vector<Rounded> rotate(const RopeParams& p, std::int64_t pos, const std::vector<double>& x) {
  std::int64_t position[] = {pos};
  return rope_rotate(p, position, x);
}

TEST(Identities, LinearScalingIsPositionInterpolation) {
  auto none = rope(16, 16);
  auto linear = none;
  linear.scaling.kind = RopeScalingKind::linear;
  linear.scaling.factor = 4.0;
  auto x = input(16);
  EXPECT_EQ(rotate(linear, 4 * 12345, x), rotate(none, 12345, x));
}

TEST(Identities, FactorOneIsNoScaling) {
  auto none = rope(16, 16);
  auto x = input(16);
  const auto expected = rotate(none, 777, x);
  auto linear = none;
  linear.scaling.kind = RopeScalingKind::linear;
  linear.scaling.factor = 1.0;
  EXPECT_EQ(rotate(linear, 777, x), expected);
  auto ntk = linear;
  ntk.scaling.kind = RopeScalingKind::ntk;
  EXPECT_EQ(rotate(ntk, 777, x), expected);
  auto yarn = linear;
  yarn.scaling.kind = RopeScalingKind::yarn;
  yarn.scaling.original_max_positions = 4096;
  EXPECT_EQ(rotate(yarn, 777, x), expected);
  auto llama3 = linear;
  llama3.scaling.kind = RopeScalingKind::llama3;
  llama3.scaling.original_max_positions = 8192;
  llama3.scaling.low_freq_factor = 1.0;
  llama3.scaling.high_freq_factor = 4.0;
  EXPECT_EQ(rotate(llama3, 777, x), expected);
  auto longrope = linear;
  longrope.scaling.kind = RopeScalingKind::longrope;
  longrope.scaling.original_max_positions = 4096;
  longrope.scaling.seq_len = 100000;
  longrope.scaling.short_factor.assign(8, 1.0);
  longrope.scaling.long_factor.assign(8, 1.0);
  EXPECT_EQ(rotate(longrope, 777, x), expected);
}

TEST(Identities, DynamicBelowOriginalLengthIsNoScaling) {
  auto none = rope(16, 16);
  auto dynamic = none;
  dynamic.scaling.kind = RopeScalingKind::dynamic;
  dynamic.scaling.factor = 8.0;
  dynamic.scaling.original_max_positions = 4096;
  auto x = input(16);
  for (std::int64_t seq_len : {1, 100, 4096}) {
    dynamic.scaling.seq_len = seq_len;
    EXPECT_EQ(rotate(dynamic, 3000, x), rotate(none, 3000, x)) << seq_len;
  }
  dynamic.scaling.seq_len = 4097;
  EXPECT_NE(rotate(dynamic, 3000, x), rotate(none, 3000, x));
}

TEST(Identities, InverseIsRotationByTheNegativePosition) {
  auto p = rope(16, 16);
  auto inv = p;
  inv.inverse = true;
  auto x = input(16);
  EXPECT_EQ(rotate(inv, 2147483647, x), rotate(p, -2147483647, x));
}

TEST(Identities, HalfLayoutIsAFixedPermutationOfInterleaved) {
  auto inter = rope(12, 8);
  auto half = inter;
  half.layout = RopeLayout::half;
  auto x = input(12);
  // Interleaved pair i = (2i, 2i+1) maps to half pair (i, i + 4); the tail stays in place.
  std::vector<std::size_t> to_half(12);
  for (std::size_t i = 0; i < 4; ++i) {
    to_half[2 * i] = i;
    to_half[2 * i + 1] = i + 4;
  }
  for (std::size_t j = 8; j < 12; ++j) to_half[j] = j;
  std::vector<double> xh(12);
  for (std::size_t j = 0; j < 12; ++j) xh[to_half[j]] = x[j];
  auto yi = rotate(inter, 99991, x);
  auto yh = rotate(half, 99991, xh);
  for (std::size_t j = 0; j < 12; ++j) EXPECT_EQ(yh[to_half[j]], yi[j]) << j;
}

TEST(Identities, PartialRotaryTailIsCopiedBitForBit) {
  auto p = rope(8, 4);
  std::vector<double> x{0.5, -0.25, 3.0, 1.0, -0.0, 0x1p-1074, -1e300, 0x1.fffffffffffffp+1023};
  auto y = rotate(p, 1000000, x);
  for (std::size_t j = 4; j < 8; ++j) {
    EXPECT_EQ(y[j].f64(), x[j]);
    EXPECT_EQ(std::signbit(y[j].f64()), std::signbit(x[j]));
  }
  EXPECT_EQ(y[4].bits_of(Format::bf16), 0x8000u);  // -0 stays -0 in every format
  EXPECT_EQ(y[7].bits_of(Format::f32), 0x7f800000u);  // max double overflows f32
}

TEST(Identities, MropeWithEqualAxesIsPlainRope) {
  auto plain = rope(16, 16);
  plain.layout = RopeLayout::half;
  auto mrope = plain;
  mrope.mrope_section = {2, 3, 3};
  auto x = input(16);
  std::int64_t three[] = {4242, 4242, 4242};
  EXPECT_EQ(rope_rotate(mrope, three, x), rotate(plain, 4242, x));
  std::int64_t mixed[] = {4242, 7, 4242};
  EXPECT_NE(rope_rotate(mrope, mixed, x), rotate(plain, 4242, x));
}

TEST(Identities, ProportionalWithFullRotaryIsStandard) {
  auto standard = rope(16, 16);
  auto proportional = standard;
  proportional.partial = PartialRotary::proportional;
  auto x = input(16);
  EXPECT_EQ(rotate(proportional, 31337, x), rotate(standard, 31337, x));
  // With rotary_dim < head_dim the conventions differ (exponent over head_dim, pairs across all).
  standard.rotary_dim = proportional.rotary_dim = 8;
  EXPECT_NE(rotate(proportional, 31337, x), rotate(standard, 31337, x));
}

TEST(Identities, PositionZeroTableIsTheAttentionFactor) {
  auto p = rope(16, 16);
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 16.0;
  p.scaling.original_max_positions = 4096;
  std::int64_t zero[] = {0};
  auto row = rope_table_row(p, zero);
  auto attention = reference::rope_frequencies(p).back();
  // YaRN: 0.1 ln 16 + 1 (binary64 evaluation, within 2 ulps of it).
  EXPECT_NEAR(attention.f64(), 0.1 * std::log(16.0) + 1.0, 0x1p-51);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(row[i], attention);
    EXPECT_EQ(row[8 + i].f64(), 0.0);
  }
}

TEST(Identities, AlibiSlopesFollowThePaper) {
  auto slopes = reference::alibi_slopes(AlibiParams{.n_heads = 8});
  for (int h = 0; h < 8; ++h) EXPECT_EQ(slopes[h].f64(), std::ldexp(1.0, -(h + 1)));
  // 12 heads: the 8 slopes of 8 heads, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (every other slope of
  // 16 heads). IEEE sqrt is correctly rounded, so it is an exact oracle for these.
  auto twelve = reference::alibi_slopes(AlibiParams{.n_heads = 12});
  for (int h = 0; h < 8; ++h) EXPECT_EQ(twelve[h], slopes[h]);
  EXPECT_EQ(twelve[8].f64(), std::sqrt(0.5));
  EXPECT_EQ(twelve[9].f64(), std::sqrt(0.125));
  EXPECT_EQ(twelve[10].f64(), std::sqrt(0x1p-5));
  EXPECT_EQ(twelve[11].f64(), std::sqrt(0x1p-7));
}

TEST(Identities, ExactMidpointsRoundToEven) {
  // Slope 1/2 at distance 257: bias -128.5, exactly a bf16 midpoint between 128 and 129.
  AlibiParams eight{.n_heads = 8};
  Rounded b = reference::alibi_bias(eight, 0, 257, 0);
  EXPECT_EQ(b.as_double(Format::bf16), -128.0);
  EXPECT_EQ(b.as_double(Format::f16), -128.5);
  // Symmetric bias depends on |i - j|; the diagonal is +0.
  AlibiParams sym{.n_heads = 8, .mode = AlibiMode::symmetric};
  EXPECT_EQ(reference::alibi_bias(sym, 3, 5, 105), reference::alibi_bias(sym, 3, 105, 5));
  EXPECT_EQ(reference::alibi_bias(sym, 3, 5, 5).bits_of(Format::f64), 0u);
  // x sqrt(4) + PE(0) with x = 1 + 2^-24: 2 + 2^-23 is an f32 midpoint (ties to 2).
  std::vector<double> x{1 + 0x1p-24, 0.0, 0.0, 0.0};
  auto y = reference::sinusoidal_embed(SinusoidalParams{.d_model = 4}, 0, x);
  EXPECT_EQ(y[0].f32(), 2.0f);
  EXPECT_EQ(y[0].f64(), 2 + 0x1p-23);
  EXPECT_EQ(y[1].f64(), 1.0);
}

AttentionParams attention_params(std::int64_t head_dim, std::int64_t query_heads, std::int64_t kv_heads) {
  AttentionParams p;
  p.head_dim = p.value_dim = head_dim;
  p.query_heads = query_heads;
  p.kv_heads = kv_heads;
  return p;
}

// Attention over one key is that key's value: its weight exp(s - max) / sum is 1 exactly. With v
// a value of every format (8 bits), every format's rounding of O is v's bits, rotated or not.
// Unrotated, with a binary64 scale, the logit is exact: L = scale q.k bit for bit.
TEST(Identities, AttentionOverOneKeyIsItsValue) {
  std::vector<double> q, k, v;
  for (int i = 0; i < 16; ++i) q.push_back((i - 7.5) / 4);  // two query heads of 8
  for (int i = 0; i < 8; ++i) k.push_back((3 - i) / 8.0), v.push_back((2 * i - 5) / 16.0);
  for (bool rotated : {false, true}) {
    auto p = attention_params(8, 2, 1);
    p.scale = 0.25;
    if (rotated) p.rope = rope(8, 8);
    const std::vector<std::int64_t> query_position{2147483647}, key_position{1000};
    const AttentionInputs in{1, 1, query_position, key_position, q, k, v, {}, {}};
    const auto o = reference::attention(p, in).values;
    ASSERT_EQ(o.size(), 2u * 8 + 2);
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t e = 0; e < 8; ++e) {
        for (Format f : kAllFormats) {
          EXPECT_EQ(o[h * 8 + e].bits_of(f), *exact_bits(f, v[e])) << "rotated " << rotated << ", head " << h;
        }
      }
      if (rotated) continue;
      double logit = 0;  // exact: 8 products of 5-bit values and their sum
      for (std::size_t e = 0; e < 8; ++e) logit += q[h * 8 + e] * k[e];
      EXPECT_EQ(o[16 + h].f64(), 0.25 * logit) << "head " << h;
    }
  }
}

// Attention reads positions only through relative rotations and ALiBi's distances, so shifting
// every position leaves the exact O and L unchanged: their certified roundings (every format's
// bits and the 41-digit decimal) are identical, however different the absolute angles whose
// enclosures produced them. The bound's ingredients (kappa, sum p |v|, the logit range) are long
// double values of those enclosures, rounded up: equal to within 2^-40 relative, not bit for bit.
TEST(Identities, AttentionDependsOnDistancesOnly) {
  auto llama = attention_params(8, 4, 2);
  llama.rope = rope(8, 8);
  llama.rope->base = 500000;
  auto yarn = attention_params(8, 2, 1);
  yarn.rope = rope(8, 8);
  yarn.rope->scaling.kind = RopeScalingKind::yarn;
  yarn.rope->scaling.factor = 32.0;
  yarn.rope->scaling.original_max_positions = 4096;
  auto alibi = attention_params(8, 12, 12);
  alibi.alibi = AlibiParams{.n_heads = 12};
  for (const auto& p : {llama, yarn, alibi}) {
    const std::int64_t keys = 6;
    const auto q = input(static_cast<std::size_t>(p.query_heads * p.head_dim));
    const auto k = input(static_cast<std::size_t>(keys * p.kv_heads * p.head_dim));
    auto v = k;
    std::reverse(v.begin(), v.end());
    auto run = [&](std::int64_t first) {
      std::vector<std::int64_t> key_positions;
      for (std::int64_t j = 0; j < keys; ++j) key_positions.push_back(first + j);
      const std::vector<std::int64_t> query_position{first + keys - 1};
      return reference::attention(p, AttentionInputs{1, keys, query_position, key_positions, q, k, v, {}, {}});
    };
    const auto at_zero = run(0);
    for (std::int64_t first : {std::int64_t{1}, std::int64_t{4096}, std::int64_t{2147483647} - keys, std::int64_t{1} << 40}) {
      const auto shifted = run(first);
      EXPECT_EQ(shifted.values, at_zero.values) << "keys from " << first << (p.alibi ? ", ALiBi" : ", RoPE");
      for (std::size_t r = 0; r < at_zero.terms.size(); ++r) {
        for (std::size_t e = 0; e < at_zero.terms[r].kappa.size(); ++e) {
          EXPECT_NEAR(shifted.terms[r].kappa[e], at_zero.terms[r].kappa[e], 0x1p-40 * at_zero.terms[r].pv[e]);
          EXPECT_NEAR(shifted.terms[r].pv[e], at_zero.terms[r].pv[e], 0x1p-40 * at_zero.terms[r].pv[e]);
        }
        EXPECT_NEAR(shifted.terms[r].logit_range, at_zero.terms[r].logit_range,
                    0x1p-40 * std::max(1.0, at_zero.terms[r].logit_range));
      }
    }
  }
}

}  // namespace
}  // namespace posenc
