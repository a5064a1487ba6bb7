// Every validation error names the parameter, the value and the allowed range; nothing is clamped.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "numbers.hpp"
#include "posenc/params.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc {
namespace {

void expect_error(const std::function<void()>& f, const std::string& message, const std::string& parameter) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const InvalidParameter& e) {
    EXPECT_EQ(e.what(), message);
    EXPECT_EQ(e.parameter(), parameter);
  }
}

RopeParams rope(std::int64_t head_dim = 8) {
  RopeParams p;
  p.head_dim = p.rotary_dim = head_dim;
  return p;
}

RopeParams scaled(RopeScalingKind kind) {
  RopeParams p = rope(64);
  p.scaling.kind = kind;
  p.scaling.factor = 4.0;
  switch (kind) {
    case RopeScalingKind::dynamic:
      p.scaling.original_max_positions = 4096;
      p.scaling.seq_len = 8192;
      break;
    case RopeScalingKind::yarn:
      p.scaling.original_max_positions = 4096;
      break;
    case RopeScalingKind::llama3:
      p.scaling.original_max_positions = 8192;
      p.scaling.low_freq_factor = 1.0;
      p.scaling.high_freq_factor = 4.0;
      break;
    case RopeScalingKind::longrope:
      p.scaling.original_max_positions = 4096;
      p.scaling.seq_len = 100;
      p.scaling.short_factor.assign(32, 1.0);
      p.scaling.long_factor.assign(32, 2.0);
      break;
    default:
      break;
  }
  return p;
}

template <class P>
std::function<void()> validating(P p) {
  return [p] { validate(p); };
}

TEST(Validation, ValidParametersPass) {
  for (auto k : {RopeScalingKind::linear, RopeScalingKind::ntk, RopeScalingKind::dynamic,
                 RopeScalingKind::yarn, RopeScalingKind::llama3, RopeScalingKind::longrope}) {
    EXPECT_NO_THROW(validate(scaled(k))) << to_string(k);
  }
  EXPECT_NO_THROW(validate(rope()));
  EXPECT_NO_THROW(validate(SinusoidalParams{.d_model = 512}));
  EXPECT_NO_THROW(validate(AlibiParams{.n_heads = 12}));
  EXPECT_NO_THROW(validate(LearnedParams{.max_positions = 1024, .dim = 768}));
}

TEST(Validation, Sinusoidal) {
  expect_error(validating(SinusoidalParams{.d_model = 7}),
               "invalid sinusoidal.d_model = 7: must be an even integer >= 2", "sinusoidal.d_model");
  expect_error(validating(SinusoidalParams{.d_model = 0}),
               "invalid sinusoidal.d_model = 0: must be an even integer >= 2", "sinusoidal.d_model");
  expect_error(validating(SinusoidalParams{.d_model = 4, .base = 1.0}),
               "invalid sinusoidal.base = 1: must be finite and > 1", "sinusoidal.base");
  expect_error(validating(SinusoidalParams{.d_model = 4, .base = -5.0}),
               "invalid sinusoidal.base = -5: must be finite and > 1", "sinusoidal.base");
  expect_error(validating(SinusoidalParams{.d_model = 4, .base = INFINITY}),
               "invalid sinusoidal.base = inf: must be finite and > 1", "sinusoidal.base");
  expect_error([] { validate_sinusoidal_position(-1); },
               "invalid sinusoidal.position = -1: must be an integer in [0, 9007199254740992]",
               "sinusoidal.position");
  expect_error([] { parse_sinusoidal_layout("paper"); },
               "invalid sinusoidal.layout = 'paper': must be one of interleaved, concatenated",
               "sinusoidal.layout");
  expect_error([] { parse_sinusoidal_frequencies("fairseq"); },
               "invalid sinusoidal.frequencies = 'fairseq': must be one of paper, tensor2tensor",
               "sinusoidal.frequencies");
}

TEST(Validation, Learned) {
  LearnedParams gpt2{.max_positions = 1024, .dim = 768};
  EXPECT_EQ(gpt2.parameter_count(), 786432);  // seed 000: GPT-2 small's 1024 x 768 table
  EXPECT_NO_THROW(validate_learned_position(gpt2, 1023));
  expect_error([&] { validate_learned_position(gpt2, 1024); },
               "invalid learned.position = 1024: must be an integer in [0, 1023]", "learned.position");
  expect_error([&] { validate_learned_position(gpt2, -1); },
               "invalid learned.position = -1: must be an integer in [0, 1023]", "learned.position");
  expect_error(validating(LearnedParams{.max_positions = 0, .dim = 4}),
               "invalid learned.max_positions = 0: must be an integer in [1, 4294967296]",
               "learned.max_positions");
  expect_error(validating(LearnedParams{.max_positions = 4, .dim = 0}),
               "invalid learned.dim = 0: must be an integer in [1, 1048576]", "learned.dim");
  std::vector<double> short_table(5);
  expect_error([&] { reference::learned_lookup(LearnedParams{.max_positions = 2, .dim = 3}, short_table, 0); },
               "invalid learned.table = (5 values): must be exactly 6 values", "learned.table");
}

TEST(Validation, Alibi) {
  expect_error(validating(AlibiParams{.n_heads = 0}),
               "invalid alibi.n_heads = 0: must be an integer in [1, 1048576]", "alibi.n_heads");
  expect_error([] { validate_alibi_head(AlibiParams{.n_heads = 8}, 8); },
               "invalid alibi.head = 8: must be an integer in [0, 7]", "alibi.head");
  expect_error([] { validate_alibi_positions(AlibiParams{.n_heads = 8}, 3, 5); },
               "invalid alibi.key_position = 5: must be <= query_position (3) in causal mode",
               "alibi.key_position");
  EXPECT_NO_THROW(validate_alibi_positions(AlibiParams{.n_heads = 8, .mode = AlibiMode::symmetric}, 3, 5));
  expect_error([] { validate_alibi_positions(AlibiParams{.n_heads = 8}, -1, -2); },
               "invalid alibi.query_position = -1: must be an integer in [0, 9007199254740992]",
               "alibi.query_position");
  expect_error([] { parse_alibi_mode("bidirectional"); },
               "invalid alibi.mode = 'bidirectional': must be one of causal, symmetric", "alibi.mode");
}

TEST(Validation, RopeShape) {
  auto p = rope();
  p.head_dim = 7;
  expect_error(validating(p), "invalid rope.head_dim = 7: must be an even integer >= 2", "rope.head_dim");
  p = rope();
  p.rotary_dim = 10;
  expect_error(validating(p), "invalid rope.rotary_dim = 10: must be an integer in [2, 8]", "rope.rotary_dim");
  p.rotary_dim = 3;
  expect_error(validating(p), "invalid rope.rotary_dim = 3: must be an even integer >= 2", "rope.rotary_dim");
  p = rope();
  p.base = 0.0;
  expect_error(validating(p), "invalid rope.base = 0: must be finite and > 1", "rope.base");
  p.base = NAN;
  expect_error(validating(p), "invalid rope.base = nan: must be finite and > 1", "rope.base");
  p = rope();
  p.mrope_section = {1, 2};
  expect_error(validating(p), "invalid rope.mrope_section = (sum 3): must be sections summing to rotary_dim/2 = 4",
               "rope.mrope_section");
  p.mrope_section = {4, 0};
  expect_error(validating(p), "invalid rope.mrope_section[1] = 0: must be an integer in [1, 4]",
               "rope.mrope_section[1]");
  p.mrope_section = {1, 1, 1, 1, 0};
  expect_error(validating(p), "invalid rope.mrope_section = (5 sections): must be at most 4 sections",
               "rope.mrope_section");
  p = rope();
  std::int64_t two[] = {1, 2};
  expect_error([&] { validate_rope_positions(p, two); },
               "invalid rope.positions = (2 coordinates): must be exactly 1 coordinate(s) per token (one per M-RoPE "
               "section)",
               "rope.positions");
  std::vector<double> x(7, 1.0);
  std::int64_t pos[] = {0};
  expect_error([&] { reference::rope_rotate(p, pos, x); }, "invalid rope.x = (7 values): must be exactly 8 values",
               "rope.x");
  x.assign(8, 1.0);
  // NaN propagates to its pair (SPEC.md section 2.3); an infinity has no rule and is refused.
  x[5] = INFINITY;
  expect_error([&] { reference::rope_rotate(p, pos, x); }, "invalid rope.x[5] = inf: must be finite or NaN", "rope.x[5]");
  x[5] = NAN;
  const auto y = reference::rope_rotate(p, pos, x);
  for (std::size_t j = 0; j < y.size(); ++j) {
    const bool pair_of_5 = p.layout == RopeLayout::interleaved ? j / 2 == 2 : j % 4 == 1;
    EXPECT_EQ(y[j].exact == "nan", pair_of_5) << "element " << j;
  }
  std::vector<double> q(8, 1.0), k(8, 1.0);
  q[0] = NAN;
  expect_error([&] { reference::rope_dot(p, pos, pos, q, k); }, "invalid rope.q[0] = nan: must be finite", "rope.q[0]");
  expect_error([] { parse_rope_layout("neox"); }, "invalid rope.layout = 'neox': must be one of interleaved, half",
               "rope.layout");
  expect_error([] { parse_rope_scaling_kind("ntk-by-parts"); },
               "invalid rope.scaling.kind = 'ntk-by-parts': must be one of none, linear, ntk, dynamic, yarn, llama3, "
               "longrope",
               "rope.scaling.kind");
  expect_error([] { parse_partial_rotary("gemma"); },
               "invalid rope.partial = 'gemma': must be one of standard, proportional", "rope.partial");
}

TEST(Validation, RopeScalingFields) {
  auto p = rope();
  p.scaling.factor = 2.0;
  expect_error(validating(p), "invalid rope.scaling.factor = 2: must be absent for scaling 'none'",
               "rope.scaling.factor");
  p = scaled(RopeScalingKind::linear);
  p.scaling.factor.reset();
  expect_error(validating(p), "invalid rope.scaling.factor = (missing): must be set for scaling 'linear': finite and > 0",
               "rope.scaling.factor");
  p.scaling.factor = 0.0;
  expect_error(validating(p), "invalid rope.scaling.factor = 0: must be finite and > 0", "rope.scaling.factor");
  p.scaling.factor = -2.0;
  expect_error(validating(p), "invalid rope.scaling.factor = -2: must be finite and > 0", "rope.scaling.factor");
  p = scaled(RopeScalingKind::linear);
  p.scaling.beta_fast = 32;
  expect_error(validating(p), "invalid rope.scaling.beta_fast = 32: must be absent for scaling 'linear'",
               "rope.scaling.beta_fast");
  p = scaled(RopeScalingKind::ntk);
  p.head_dim = p.rotary_dim = 2;
  expect_error(validating(p), "invalid rope.rotary_dim = 2: must be >= 4 for scaling 'ntk' (exponent d/(d-2))",
               "rope.rotary_dim");
  p = scaled(RopeScalingKind::dynamic);
  p.scaling.seq_len.reset();
  expect_error(validating(p),
               "invalid rope.scaling.seq_len = (missing): must be set for scaling 'dynamic': an integer in [1, 2^40]",
               "rope.scaling.seq_len");
  p = scaled(RopeScalingKind::yarn);
  p.scaling.original_max_positions = 0;
  expect_error(validating(p), "invalid rope.scaling.original_max_positions = 0: must be an integer in [1, 1099511627776]",
               "rope.scaling.original_max_positions");
  p = scaled(RopeScalingKind::yarn);
  p.scaling.beta_fast = 0.5;
  expect_error(validating(p), "invalid rope.scaling.beta_fast = 0.5: must be >= beta_slow (1)", "rope.scaling.beta_fast");
  p = scaled(RopeScalingKind::yarn);
  p.scaling.mscale = 0.0;
  expect_error(validating(p), "invalid rope.scaling.mscale = 0: must be finite and > 0", "rope.scaling.mscale");
  p = scaled(RopeScalingKind::llama3);
  p.scaling.high_freq_factor = 0.5;
  expect_error(validating(p), "invalid rope.scaling.high_freq_factor = 0.5: must be finite and >= 1",
               "rope.scaling.high_freq_factor");
  p.scaling.high_freq_factor = 1.0;  // equal factors: an empty medium band (Llama 4)
  EXPECT_NO_THROW(validate(p));
  p = scaled(RopeScalingKind::longrope);
  p.scaling.long_factor.pop_back();
  expect_error(validating(p), "invalid rope.scaling.long_factor = (31 values): must be exactly rotary_dim/2 = 32 values",
               "rope.scaling.long_factor");
  p = scaled(RopeScalingKind::longrope);
  p.scaling.short_factor[3] = -1.0;
  expect_error(validating(p), "invalid rope.scaling.short_factor[3] = -1: must be finite and > 0",
               "rope.scaling.short_factor[3]");
  p = scaled(RopeScalingKind::longrope);
  p.scaling.original_max_positions = 1;
  expect_error(validating(p),
               "invalid rope.scaling.original_max_positions = 1: must be an integer in [2, 1099511627776]",
               "rope.scaling.original_max_positions");
  p = scaled(RopeScalingKind::yarn);
  p.partial = PartialRotary::proportional;
  expect_error(validating(p),
               "invalid rope.scaling.kind = 'yarn': must be none or linear with the proportional partial-rotary "
               "convention",
               "rope.scaling.kind");
}

// The two attention rules the golden vectors cannot show (a vector file keeps a mask for explicit
// masks and a table for given tables only); attention/invalid.json has one case per other rule.
TEST(Validation, AttentionMaskOrTableWhereNoneIsRead) {
  AttentionParams p;
  p.head_dim = p.value_dim = 2;
  p.query_heads = p.kv_heads = 1;
  p.rope = rope(2);
  p.mask = AttentionMask::causal;
  const std::vector<std::int64_t> positions{0};
  const std::vector<double> x{0.5, 0.25};
  const std::vector<std::uint8_t> mask{1};
  const std::vector<double> table{1, 0, 1, 0};
  AttentionInputs in{1, 1, positions, positions, x, x, x, {}, {}};
  EXPECT_NO_THROW(validate(p, in));
  in.mask = mask;
  expect_error([&] { validate(p, in); }, "invalid attention.mask = (1 values): must be absent for mask 'causal'",
               "attention.mask");
  in.mask = {};
  in.table = table;
  expect_error([&] { validate(p, in); }, "invalid attention.table = (4 values): must be absent unless rope_table_given",
               "attention.table");
  p.rope_table_given = true;
  EXPECT_NO_THROW(validate(p, in));
}

TEST(Validation, CommandLineNumbers) {
  using cli::parse_double;
  EXPECT_EQ(parse_double("--x", "0x1.8p+1"), 3.0);
  EXPECT_EQ(parse_double("--x", "-0.1"), -0.1);
  EXPECT_EQ(parse_double("--x", "0x1p-1074"), std::ldexp(1.0, -1074));
  expect_error([] { parse_double("--base", "1e400"); },
               "invalid --base = '1e400': must be a value within the binary64 range", "--base");
  expect_error([] { parse_double("--base", "nan"); },
               "invalid --base = 'nan': must be a finite decimal or C99 hex float (e.g. 0.5, 0x1p-1)", "--base");
  expect_error([] { parse_double("--base", "12abc"); },
               "invalid --base = '12abc': must be a finite decimal or C99 hex float (e.g. 0.5, 0x1p-1)", "--base");
  expect_error([] { cli::parse_int64("--position", "1.5"); },
               "invalid --position = '1.5': must be a decimal integer in [-2^63, 2^63-1]", "--position");
  expect_error([] { cli::parse_int64("--position", "9223372036854775808"); },
               "invalid --position = '9223372036854775808': must be a decimal integer in [-2^63, 2^63-1]",
               "--position");
  expect_error([] { cli::parse_bool("--inverse", "yes"); }, "invalid --inverse = 'yes': must be true or false",
               "--inverse");
  EXPECT_EQ(cli::parse_int64_list("--p", "3,-1"), (std::vector<std::int64_t>{3, -1}));
}

}  // namespace
}  // namespace posenc
