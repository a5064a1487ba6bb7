// posenc/abi/convert.hpp: C++ -> ABI -> C++ gives back every field, for every scaling kind and
// every enumerator; every enum-valued ABI int outside its range is refused with the field named.
#include <gtest/gtest.h>

#include <string>

#include "posenc/abi/convert.hpp"

namespace {

using namespace posenc;

// Every optional field set, each to a value of its own so that a field read into another shows.
RopeScaling all_fields(RopeScalingKind kind) {
  RopeScaling s;
  s.kind = kind;
  s.factor = 8.0;
  s.original_max_positions = 4096;
  s.seq_len = 9000;
  s.beta_fast = 31.0;
  s.beta_slow = 1.5;
  s.truncate = false;
  s.mscale = 0.75;
  s.mscale_all_dim = 0.25;
  s.attention_factor = 1.125;
  s.low_freq_factor = 2.0;
  s.high_freq_factor = 4.0;
  s.short_factor = {1.0, 1.25, 1.5};
  s.long_factor = {2.0, 2.5, 3.0};
  return s;
}

void expect_same(const RopeParams& a, const RopeParams& b) {
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.rotary_dim, b.rotary_dim);
  EXPECT_EQ(a.base, b.base);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.partial, b.partial);
  EXPECT_EQ(a.inverse, b.inverse);
  EXPECT_EQ(a.mrope_section, b.mrope_section);
  const RopeScaling &s = a.scaling, &t = b.scaling;
  EXPECT_EQ(s.kind, t.kind);
  EXPECT_EQ(s.factor, t.factor);
  EXPECT_EQ(s.original_max_positions, t.original_max_positions);
  EXPECT_EQ(s.seq_len, t.seq_len);
  EXPECT_EQ(s.beta_fast, t.beta_fast);
  EXPECT_EQ(s.beta_slow, t.beta_slow);
  EXPECT_EQ(s.truncate, t.truncate);
  EXPECT_EQ(s.mscale, t.mscale);
  EXPECT_EQ(s.mscale_all_dim, t.mscale_all_dim);
  EXPECT_EQ(s.attention_factor, t.attention_factor);
  EXPECT_EQ(s.low_freq_factor, t.low_freq_factor);
  EXPECT_EQ(s.high_freq_factor, t.high_freq_factor);
  EXPECT_EQ(s.short_factor, t.short_factor);
  EXPECT_EQ(s.long_factor, t.long_factor);
}

// The message of the InvalidParameter that `convert` throws ("" if none).
template <class F>
std::string refusal(F convert) {
  try {
    convert();
  } catch (const InvalidParameter& e) {
    return e.what();
  }
  return "";
}

TEST(AbiConversion, RoundTripsEveryScalingKindWithAllItsFields) {
  for (const char* name : {"none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"}) {
    SCOPED_TRACE(name);
    RopeParams p;
    p.head_dim = 12;
    p.rotary_dim = 6;
    p.base = 500000.0;
    p.layout = RopeLayout::half;
    p.partial = PartialRotary::proportional;
    p.inverse = true;
    p.mrope_section = {1, 2};
    p.scaling = all_fields(parse_rope_scaling_kind(name));
    const posenc_rope_params a = plugin::to_abi(p);
    // The factor arrays are not copied: they point into p.
    EXPECT_EQ(a.scaling.short_factor, p.scaling.short_factor.data());
    EXPECT_EQ(a.scaling.long_factor, p.scaling.long_factor.data());
    expect_same(plugin::from_abi(a), p);
  }
}

TEST(AbiConversion, RoundTripsOptionalFieldsLeftUnset) {
  RopeParams p;
  p.head_dim = 8;
  p.rotary_dim = 8;
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 4.0;
  const posenc_rope_params a = plugin::to_abi(p);
  EXPECT_EQ(a.scaling.fields, POSENC_FIELD_FACTOR);
  EXPECT_EQ(a.scaling.short_factor, nullptr);
  EXPECT_EQ(a.n_axes, 1);
  expect_same(plugin::from_abi(a), p);
}

TEST(AbiConversion, RoundTripsEveryEnumerator) {
  for (const auto& choices : {rope_choices(), sinusoidal_choices(), alibi_choices(), attention_choices()}) {
    for (const auto& choice : choices) {
      for (const char* value : choice.values) {
        SCOPED_TRACE(std::string(choice.parameter) + " " + value);
        if (choice.parameter == "rope.layout") {
          RopeParams p;
          p.layout = parse_rope_layout(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).layout, p.layout);
        } else if (choice.parameter == "rope.partial") {
          RopeParams p;
          p.partial = parse_partial_rotary(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).partial, p.partial);
        } else if (choice.parameter == "rope.scaling.kind") {
          RopeParams p;
          p.scaling.kind = parse_rope_scaling_kind(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).scaling.kind, p.scaling.kind);
        } else if (choice.parameter == "sinusoidal.layout") {
          SinusoidalParams p;
          p.layout = parse_sinusoidal_layout(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).layout, p.layout);
        } else if (choice.parameter == "sinusoidal.frequencies") {
          SinusoidalParams p;
          p.frequencies = parse_sinusoidal_frequencies(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).frequencies, p.frequencies);
        } else if (choice.parameter == "alibi.mode") {
          AlibiParams p;
          p.mode = parse_alibi_mode(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p)).mode, p.mode);
        } else if (choice.parameter == "attention.mask") {
          AttentionParams p;
          p.mask = parse_attention_mask(value);
          EXPECT_EQ(plugin::from_abi(plugin::to_abi(p, 1.0, nullptr, nullptr)).mask, p.mask);
        } else {
          ADD_FAILURE() << "a parameter this test does not know: " << choice.parameter;
        }
      }
    }
  }
}

TEST(AbiConversion, PinsTheAbiCodes) {
  EXPECT_EQ(plugin::to_abi(Format::f64), POSENC_F64);
  EXPECT_EQ(plugin::to_abi(Format::f32), POSENC_F32);
  EXPECT_EQ(plugin::to_abi(Format::bf16), POSENC_BF16);
  EXPECT_EQ(plugin::to_abi(Format::f16), POSENC_F16);
  for (const Format f : kAllFormats) EXPECT_EQ(plugin::from_abi(plugin::to_abi(f)), f);
  RopeParams p;
  p.layout = RopeLayout::half;
  p.partial = PartialRotary::proportional;
  p.scaling.kind = RopeScalingKind::longrope;
  const posenc_rope_params a = plugin::to_abi(p);
  EXPECT_EQ(a.layout, 1);
  EXPECT_EQ(a.partial, 1);
  EXPECT_EQ(a.scaling.kind, POSENC_SCALING_LONGROPE);
  p.scaling.kind = RopeScalingKind::llama3;
  EXPECT_EQ(plugin::to_abi(p).scaling.kind, POSENC_SCALING_LLAMA3);
  SinusoidalParams s;
  s.layout = SinusoidalLayout::concatenated;
  s.frequencies = SinusoidalFrequencies::tensor2tensor;
  EXPECT_EQ(plugin::to_abi(s).layout, 1);
  EXPECT_EQ(plugin::to_abi(s).frequencies, 1);
  AlibiParams m;
  m.mode = AlibiMode::symmetric;
  EXPECT_EQ(plugin::to_abi(m).mode, 1);
}

TEST(AbiConversion, RefusesEveryOutOfRangeIntNamingTheField) {
  const posenc_rope_params rope = plugin::to_abi(RopeParams{});
  auto rope_with = [&](auto change) {
    return refusal([&] {
      posenc_rope_params a = rope;
      change(a);
      plugin::from_abi(a);
    });
  };
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.layout = 7; }),
            "invalid rope.layout = 7: must be 0 (interleaved) or 1 (half)");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.partial = -1; }),
            "invalid rope.partial = -1: must be 0 (standard) or 1 (proportional)");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.n_axes = 0; }),
            "invalid rope.n_axes = 0: must be in [1, 4]: 1, or the number of M-RoPE sections");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.n_axes = 5; }),
            "invalid rope.n_axes = 5: must be in [1, 4]: 1, or the number of M-RoPE sections");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.scaling.kind = 7; }),
            "invalid rope.scaling.kind = 7: must be 0 (none), 1 (linear), 2 (ntk), 3 (dynamic), 4 (yarn), "
            "5 (llama3) or 6 (longrope)");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.scaling.n_short_factor = -1; }),
            "invalid rope.scaling.n_short_factor = -1: must be >= 0");
  EXPECT_EQ(rope_with([](posenc_rope_params& a) { a.scaling.n_long_factor = 2; }),
            "invalid rope.scaling.long_factor = null: must be non-null when n_long_factor = 2");
  EXPECT_EQ(refusal([] { plugin::from_abi(posenc_sinusoidal_params{8, 10000.0, 2, 0}); }),
            "invalid sinusoidal.layout = 2: must be 0 (interleaved) or 1 (concatenated)");
  EXPECT_EQ(refusal([] { plugin::from_abi(posenc_sinusoidal_params{8, 10000.0, 0, 3}); }),
            "invalid sinusoidal.frequencies = 3: must be 0 (paper) or 1 (tensor2tensor)");
  EXPECT_EQ(refusal([] { plugin::from_abi(posenc_alibi_params{8, 2}); }),
            "invalid alibi.mode = 2: must be 0 (causal) or 1 (symmetric)");
  EXPECT_EQ(refusal([] { plugin::from_abi(static_cast<posenc_dtype>(4)); }),
            "invalid dtype = 4: must be 0 (f64), 1 (f32), 2 (bf16) or 3 (f16)");
  EXPECT_EQ(refusal([] { plugin::working_format_from_abi("posenc_plugin_info.working_format[bf16]", 3); }),
            "invalid posenc_plugin_info.working_format[bf16] = 3: must be 0 (the default), 1 (f64) or 2 (f32)");
}

// Every field of the attention parameters, each to a value of its own, through the ABI and back;
// the rope and alibi parameters it points to come back too.
TEST(AbiConversion, RoundTripsAttentionParameters) {
  AttentionParams p;
  p.head_dim = 12;
  p.value_dim = 10;
  p.query_heads = 6;
  p.kv_heads = 3;
  RopeParams rope;
  rope.head_dim = 12;
  rope.rotary_dim = 8;
  rope.base = 500000.0;
  rope.scaling = all_fields(RopeScalingKind::yarn);
  p.rope = rope;
  p.rope_table_given = true;
  p.alibi = AlibiParams{6, AlibiMode::symmetric};
  p.mask = AttentionMask::explicit_;
  p.scale_denominator = 256.0;
  p.scale_mscale_all_dim = 0.707;
  const posenc_rope_params abi_rope = plugin::to_abi(*p.rope);
  const posenc_alibi_params abi_alibi = plugin::to_abi(*p.alibi);
  const posenc_attention_params a = plugin::to_abi(p, 0.0625, &abi_rope, &abi_alibi);
  EXPECT_EQ(a.rope, &abi_rope);
  EXPECT_EQ(a.alibi, &abi_alibi);
  EXPECT_EQ(a.scale, 0.0625);
  EXPECT_EQ(a.scale_fields, POSENC_SCALE_DENOMINATOR | POSENC_SCALE_MSCALE_ALL_DIM);
  EXPECT_EQ(a.mask, POSENC_MASK_EXPLICIT);
  EXPECT_EQ(a.rope_table_given, 1);
  const AttentionParams back = plugin::from_abi(a);
  expect_same(*back.rope, *p.rope);
  EXPECT_EQ(back.alibi, p.alibi);
  // The binary64 rounding of a defined scale is not the definition: it stays out of the params.
  EXPECT_EQ(back.scale, std::nullopt);
  EXPECT_EQ(back, p);

  AttentionParams plain;
  plain.head_dim = plain.value_dim = 4;
  plain.query_heads = plain.kv_heads = 1;
  plain.scale = 0.3;
  const posenc_attention_params b = plugin::to_abi(plain, 0.3, &abi_rope, &abi_alibi);
  EXPECT_EQ(b.rope, nullptr);  // p has neither: the pointers given are not used
  EXPECT_EQ(b.alibi, nullptr);
  EXPECT_EQ(b.scale_fields, POSENC_SCALE_GIVEN);
  EXPECT_EQ(b.mask, POSENC_MASK_NONE);
  EXPECT_EQ(plugin::from_abi(b), plain);
}

TEST(AbiConversion, RefusesUndefinedAttentionCodesNamingTheField) {
  AttentionParams p;
  p.head_dim = p.value_dim = 4;
  p.query_heads = p.kv_heads = 1;
  const posenc_attention_params a = plugin::to_abi(p, 0.5, nullptr, nullptr);
  auto with = [&](auto change) {
    return refusal([&] {
      posenc_attention_params b = a;
      change(b);
      plugin::from_abi(b);
    });
  };
  EXPECT_EQ(with([](posenc_attention_params& b) { b.mask = 3; }),
            "invalid attention.mask = 3: must be 0 (none), 1 (causal) or 2 (explicit)");
  EXPECT_EQ(with([](posenc_attention_params& b) { b.scale_fields = 8; }),
            "invalid attention.scale_fields = 8: must be a combination of 1 (given), 2 (denominator) and 4 "
            "(mscale_all_dim)");
  EXPECT_EQ(with([](posenc_attention_params& b) { b.scale_fields = POSENC_SCALE_GIVEN | POSENC_SCALE_DENOMINATOR; }),
            "invalid attention.scale_fields = 3: must be 1 (given) alone: a given scale has no denominator or "
            "mscale_all_dim");
  EXPECT_EQ(refusal([] { plugin::rounding_format_from_abi("posenc_plugin_info.score_format[f32]", 5); }),
            "invalid posenc_plugin_info.score_format[f32] = 5: must be 0 (not rounded), 1 (f64), 2 (f32), 3 (bf16) "
            "or 4 (f16)");
}

TEST(Abi, RoundingFormatCodes) {
  EXPECT_EQ(plugin::rounding_format_from_abi("r", POSENC_ROUNDING_NONE), std::nullopt);
  EXPECT_EQ(plugin::rounding_format_from_abi("r", POSENC_ROUNDING_F64), Format::f64);
  EXPECT_EQ(plugin::rounding_format_from_abi("r", POSENC_ROUNDING_F32), Format::f32);
  EXPECT_EQ(plugin::rounding_format_from_abi("r", POSENC_ROUNDING_BF16), Format::bf16);
  EXPECT_EQ(plugin::rounding_format_from_abi("r", POSENC_ROUNDING_F16), Format::f16);
  for (const Format f : kAllFormats) {
    EXPECT_EQ(plugin::rounding_format_from_abi("r", plugin::rounding_format_to_abi(f)), f);
  }
  EXPECT_EQ(plugin::rounding_format_to_abi(std::nullopt), POSENC_ROUNDING_NONE);
}

TEST(Abi, WorkingFormatCodes) {
  EXPECT_EQ(plugin::working_format_from_abi("w", POSENC_WORKING_DEFAULT), std::nullopt);
  EXPECT_EQ(plugin::working_format_from_abi("w", POSENC_WORKING_F64), Format::f64);
  EXPECT_EQ(plugin::working_format_from_abi("w", POSENC_WORKING_F32), Format::f32);
}

}  // namespace
