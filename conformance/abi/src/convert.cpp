#include "posenc/abi/convert.hpp"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace posenc::plugin {
namespace {

// An enumerator and its ABI code. The codes are written out here, once for both directions:
// posenc's enums are never cast to or from plugin.h's ints by declaration order.
template <class E>
struct Code {
  std::int32_t abi;
  E value;
};

template <class E, std::size_t N>
constexpr bool distinct(const std::array<Code<E>, N>& table) {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (table[i].abi == table[j].abi || table[i].value == table[j].value) return false;
    }
  }
  return true;
}

constexpr std::array kDtypes{Code<Format>{POSENC_F64, Format::f64}, Code<Format>{POSENC_F32, Format::f32},
                             Code<Format>{POSENC_BF16, Format::bf16}, Code<Format>{POSENC_F16, Format::f16}};
constexpr std::array kWorkingFormats{Code<Format>{POSENC_WORKING_F64, Format::f64},
                                     Code<Format>{POSENC_WORKING_F32, Format::f32}};
constexpr std::array kRoundingFormats{
    Code<Format>{POSENC_ROUNDING_F64, Format::f64}, Code<Format>{POSENC_ROUNDING_F32, Format::f32},
    Code<Format>{POSENC_ROUNDING_BF16, Format::bf16}, Code<Format>{POSENC_ROUNDING_F16, Format::f16}};
constexpr std::array kMasks{Code<AttentionMask>{POSENC_MASK_NONE, AttentionMask::none},
                            Code<AttentionMask>{POSENC_MASK_CAUSAL, AttentionMask::causal},
                            Code<AttentionMask>{POSENC_MASK_EXPLICIT, AttentionMask::explicit_}};
constexpr std::array kScalingKinds{
    Code<RopeScalingKind>{POSENC_SCALING_NONE, RopeScalingKind::none},
    Code<RopeScalingKind>{POSENC_SCALING_LINEAR, RopeScalingKind::linear},
    Code<RopeScalingKind>{POSENC_SCALING_NTK, RopeScalingKind::ntk},
    Code<RopeScalingKind>{POSENC_SCALING_DYNAMIC, RopeScalingKind::dynamic},
    Code<RopeScalingKind>{POSENC_SCALING_YARN, RopeScalingKind::yarn},
    Code<RopeScalingKind>{POSENC_SCALING_LLAMA3, RopeScalingKind::llama3},
    Code<RopeScalingKind>{POSENC_SCALING_LONGROPE, RopeScalingKind::longrope}};
// plugin.h's comments on the struct fields give these codes.
constexpr std::array kRopeLayouts{Code<RopeLayout>{0, RopeLayout::interleaved}, Code<RopeLayout>{1, RopeLayout::half}};
constexpr std::array kPartials{Code<PartialRotary>{0, PartialRotary::standard},
                               Code<PartialRotary>{1, PartialRotary::proportional}};
constexpr std::array kSinusoidalLayouts{Code<SinusoidalLayout>{0, SinusoidalLayout::interleaved},
                                        Code<SinusoidalLayout>{1, SinusoidalLayout::concatenated}};
constexpr std::array kFrequencies{Code<SinusoidalFrequencies>{0, SinusoidalFrequencies::paper},
                                  Code<SinusoidalFrequencies>{1, SinusoidalFrequencies::tensor2tensor}};
constexpr std::array kAlibiModes{Code<AlibiMode>{0, AlibiMode::causal}, Code<AlibiMode>{1, AlibiMode::symmetric}};
static_assert(distinct(kDtypes) && distinct(kWorkingFormats) && distinct(kRoundingFormats) && distinct(kMasks) &&
              distinct(kScalingKinds) && distinct(kRopeLayouts) && distinct(kPartials) &&
              distinct(kSinusoidalLayouts) && distinct(kFrequencies) && distinct(kAlibiModes));

template <class E, std::size_t N>
std::int32_t encode(const std::array<Code<E>, N>& table, E value) {
  for (const auto& code : table) {
    if (code.value == value) return code.abi;
  }
  // Only an enumerator added to posenc without its row above; abi_test converts every one.
  throw std::logic_error("posenc: " + std::string(to_string(value)) + " has no ABI code");
}

template <class E, std::size_t N>
E decode(std::string_view field, std::int32_t abi, const std::array<Code<E>, N>& table) {
  std::string allowed;
  for (std::size_t i = 0; i < N; ++i) {
    if (table[i].abi == abi) return table[i].value;
    allowed += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::to_string(table[i].abi) + " (" +
               std::string(to_string(table[i].value)) + ")";
  }
  throw InvalidParameter(std::string(field), std::to_string(abi), allowed);
}

// A scaling array from its pointer and length; a negative length, or a null pointer with a
// positive one, is refused rather than read as empty.
std::vector<double> factors(std::string_view field, const double* values, int64_t n) {
  const std::string name(field);
  if (n < 0) throw InvalidParameter("rope.scaling.n_" + name, std::to_string(n), ">= 0");
  if (n > 0 && !values) {
    throw InvalidParameter("rope.scaling." + name, "null", "non-null when n_" + name + " = " + std::to_string(n));
  }
  return n > 0 ? std::vector<double>(values, values + n) : std::vector<double>{};
}

constexpr int32_t kMaxAxes = sizeof(posenc_rope_params::mrope_section) / sizeof(int64_t);

}  // namespace

posenc_dtype to_abi(Format f) { return static_cast<posenc_dtype>(encode(kDtypes, f)); }

Format from_abi(posenc_dtype t) { return decode("dtype", static_cast<std::int32_t>(t), kDtypes); }

std::optional<Format> working_format_from_abi(std::string_view field, std::int32_t w) {
  if (w == POSENC_WORKING_DEFAULT) return std::nullopt;
  try {
    return decode(field, w, kWorkingFormats);
  } catch (const InvalidParameter& e) {
    throw InvalidParameter(e.parameter(), e.value(), "0 (the default), " + e.allowed());
  }
}

std::optional<Format> rounding_format_from_abi(std::string_view field, std::int32_t r) {
  if (r == POSENC_ROUNDING_NONE) return std::nullopt;
  try {
    return decode(field, r, kRoundingFormats);
  } catch (const InvalidParameter& e) {
    throw InvalidParameter(e.parameter(), e.value(), "0 (not rounded), " + e.allowed());
  }
}

std::int32_t rounding_format_to_abi(std::optional<Format> f) {
  return f ? encode(kRoundingFormats, *f) : POSENC_ROUNDING_NONE;
}

posenc_rope_params to_abi(const RopeParams& p) {
  posenc_rope_params a{};
  a.head_dim = p.head_dim;
  a.rotary_dim = p.rotary_dim;
  a.base = p.base;
  a.layout = encode(kRopeLayouts, p.layout);
  a.partial = encode(kPartials, p.partial);
  a.inverse = p.inverse;
  a.n_axes = static_cast<int32_t>(p.position_axes());
  for (std::size_t i = 0; i < p.mrope_section.size() && i < kMaxAxes; ++i) a.mrope_section[i] = p.mrope_section[i];
  const RopeScaling& s = p.scaling;
  posenc_rope_scaling& t = a.scaling;
  t.kind = encode(kScalingKinds, s.kind);
  // Copies an optional field and marks it set in t.fields.
  auto optional = [&t](const auto& v, auto& field, uint32_t bit) {
    if (v) {
      field = *v;
      t.fields |= bit;
    }
  };
  optional(s.factor, t.factor, POSENC_FIELD_FACTOR);
  optional(s.original_max_positions, t.original_max_positions, POSENC_FIELD_ORIGINAL_MAX_POSITIONS);
  optional(s.seq_len, t.seq_len, POSENC_FIELD_SEQ_LEN);
  optional(s.beta_fast, t.beta_fast, POSENC_FIELD_BETA_FAST);
  optional(s.beta_slow, t.beta_slow, POSENC_FIELD_BETA_SLOW);
  optional(s.truncate, t.truncate, POSENC_FIELD_TRUNCATE);
  optional(s.mscale, t.mscale, POSENC_FIELD_MSCALE);
  optional(s.mscale_all_dim, t.mscale_all_dim, POSENC_FIELD_MSCALE_ALL_DIM);
  optional(s.attention_factor, t.attention_factor, POSENC_FIELD_ATTENTION_FACTOR);
  optional(s.low_freq_factor, t.low_freq_factor, POSENC_FIELD_LOW_FREQ_FACTOR);
  optional(s.high_freq_factor, t.high_freq_factor, POSENC_FIELD_HIGH_FREQ_FACTOR);
  t.n_short_factor = static_cast<int64_t>(s.short_factor.size());
  t.n_long_factor = static_cast<int64_t>(s.long_factor.size());
  t.short_factor = s.short_factor.empty() ? nullptr : s.short_factor.data();
  t.long_factor = s.long_factor.empty() ? nullptr : s.long_factor.data();
  return a;
}

RopeParams from_abi(const posenc_rope_params& a) {
  RopeParams p;
  p.head_dim = a.head_dim;
  p.rotary_dim = a.rotary_dim;
  p.base = a.base;
  p.layout = decode("rope.layout", a.layout, kRopeLayouts);
  p.partial = decode("rope.partial", a.partial, kPartials);
  p.inverse = a.inverse != 0;
  if (a.n_axes < 1 || a.n_axes > kMaxAxes) {
    throw InvalidParameter("rope.n_axes", std::to_string(a.n_axes),
                           "in [1, " + std::to_string(kMaxAxes) + "]: 1, or the number of M-RoPE sections");
  }
  // plugin.h: the sections are used when n_axes > 1; one axis is plain RoPE.
  if (a.n_axes > 1) p.mrope_section.assign(a.mrope_section, a.mrope_section + a.n_axes);
  const posenc_rope_scaling& s = a.scaling;
  RopeScaling& t = p.scaling;
  t.kind = decode("rope.scaling.kind", s.kind, kScalingKinds);
  // Reads an optional field when its bit in s.fields is set.
  auto optional = [&s](auto& field, const auto& value, uint32_t bit) {
    if (s.fields & bit) field = value;
  };
  optional(t.factor, s.factor, POSENC_FIELD_FACTOR);
  optional(t.original_max_positions, s.original_max_positions, POSENC_FIELD_ORIGINAL_MAX_POSITIONS);
  optional(t.seq_len, s.seq_len, POSENC_FIELD_SEQ_LEN);
  optional(t.beta_fast, s.beta_fast, POSENC_FIELD_BETA_FAST);
  optional(t.beta_slow, s.beta_slow, POSENC_FIELD_BETA_SLOW);
  optional(t.truncate, s.truncate != 0, POSENC_FIELD_TRUNCATE);
  optional(t.mscale, s.mscale, POSENC_FIELD_MSCALE);
  optional(t.mscale_all_dim, s.mscale_all_dim, POSENC_FIELD_MSCALE_ALL_DIM);
  optional(t.attention_factor, s.attention_factor, POSENC_FIELD_ATTENTION_FACTOR);
  optional(t.low_freq_factor, s.low_freq_factor, POSENC_FIELD_LOW_FREQ_FACTOR);
  optional(t.high_freq_factor, s.high_freq_factor, POSENC_FIELD_HIGH_FREQ_FACTOR);
  t.short_factor = factors("short_factor", s.short_factor, s.n_short_factor);
  t.long_factor = factors("long_factor", s.long_factor, s.n_long_factor);
  return p;
}

posenc_sinusoidal_params to_abi(const SinusoidalParams& p) {
  return {p.d_model, p.base, encode(kSinusoidalLayouts, p.layout), encode(kFrequencies, p.frequencies)};
}

SinusoidalParams from_abi(const posenc_sinusoidal_params& a) {
  SinusoidalParams p;
  p.d_model = a.d_model;
  p.base = a.base;
  p.layout = decode("sinusoidal.layout", a.layout, kSinusoidalLayouts);
  p.frequencies = decode("sinusoidal.frequencies", a.frequencies, kFrequencies);
  return p;
}

posenc_alibi_params to_abi(const AlibiParams& p) { return {p.n_heads, encode(kAlibiModes, p.mode)}; }

AlibiParams from_abi(const posenc_alibi_params& a) {
  AlibiParams p;
  p.n_heads = a.n_heads;
  p.mode = decode("alibi.mode", a.mode, kAlibiModes);
  return p;
}

posenc_attention_params to_abi(const AttentionParams& p, double scale, const posenc_rope_params* rope,
                               const posenc_alibi_params* alibi) {
  posenc_attention_params a{};
  a.head_dim = p.head_dim;
  a.value_dim = p.value_dim;
  a.query_heads = p.query_heads;
  a.kv_heads = p.kv_heads;
  a.rope = p.rope ? rope : nullptr;
  a.alibi = p.alibi ? alibi : nullptr;
  a.scale = scale;
  if (p.scale) a.scale_fields |= POSENC_SCALE_GIVEN;
  if (p.scale_denominator) {
    a.scale_fields |= POSENC_SCALE_DENOMINATOR;
    a.scale_denominator = *p.scale_denominator;
  }
  if (p.scale_mscale_all_dim) {
    a.scale_fields |= POSENC_SCALE_MSCALE_ALL_DIM;
    a.scale_mscale_all_dim = *p.scale_mscale_all_dim;
  }
  a.mask = encode(kMasks, p.mask);
  a.rope_table_given = p.rope_table_given;
  return a;
}

AttentionParams from_abi(const posenc_attention_params& a) {
  constexpr std::uint32_t kScaleFields = POSENC_SCALE_GIVEN | POSENC_SCALE_DENOMINATOR | POSENC_SCALE_MSCALE_ALL_DIM;
  if (a.scale_fields & ~kScaleFields) {
    throw InvalidParameter("attention.scale_fields", std::to_string(a.scale_fields),
                           "a combination of 1 (given), 2 (denominator) and 4 (mscale_all_dim)");
  }
  if ((a.scale_fields & POSENC_SCALE_GIVEN) && (a.scale_fields & ~std::uint32_t{POSENC_SCALE_GIVEN})) {
    throw InvalidParameter("attention.scale_fields", std::to_string(a.scale_fields),
                           "1 (given) alone: a given scale has no denominator or mscale_all_dim");
  }
  AttentionParams p;
  p.head_dim = a.head_dim;
  p.value_dim = a.value_dim;
  p.query_heads = a.query_heads;
  p.kv_heads = a.kv_heads;
  if (a.rope) p.rope = from_abi(*a.rope);
  if (a.alibi) p.alibi = from_abi(*a.alibi);
  p.rope_table_given = a.rope_table_given != 0;
  p.mask = decode("attention.mask", a.mask, kMasks);
  if (a.scale_fields & POSENC_SCALE_GIVEN) p.scale = a.scale;
  if (a.scale_fields & POSENC_SCALE_DENOMINATOR) p.scale_denominator = a.scale_denominator;
  if (a.scale_fields & POSENC_SCALE_MSCALE_ALL_DIM) p.scale_mscale_all_dim = a.scale_mscale_all_dim;
  return p;
}

}  // namespace posenc::plugin
