// Cross-check of the two independent backends: MPFR (correctly rounded elementary functions) and
// Boost's cpp_bin_float must certify bit-identical roundings in all four formats, and the same
// 41-digit decimal, on random parameters and inputs of every family. RC_PARAMS sets the case
// count (CTest: 10,000 per family). Floating-point inputs are drawn from raw bit patterns and
// special values, since RapidCheck's own double generator never yields subnormals, -0 or huge
// values.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <sstream>

#include "posenc/reference/reference.hpp"

namespace posenc {

std::ostream& operator<<(std::ostream& os, const Rounded& r) {
  os << r.exact;
  for (Format f : kAllFormats) os << " " << to_string(f) << "=" << r.hex(f);
  return os;
}

namespace {

using reference::Backend;

double any_finite_double() {
  return *rc::gen::oneOf(
      // Raw bit patterns: every binade, subnormals, both zeros.
      rc::gen::suchThat(rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                                     [](std::uint64_t b) { return std::bit_cast<double>(b); }),
                        [](double x) { return std::isfinite(x); }),
      // Ordinary magnitudes, as activations have.
      rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::int32_t>(), rc::gen::inRange(-40, 10)),
                   [](auto p) { return std::ldexp(static_cast<double>(p.first), p.second - 31); }),
      rc::gen::element(0.0, -0.0, 1.0, -1.0, 0x1p-1074, -0x1p-1022, 0x1.fffffffffffffp+1023, 0x1p-24,
                       65504.0, 1 + 0x1p-24));
}

std::vector<double> finite_doubles(std::size_t n) {
  std::vector<double> x(n);
  for (auto& v : x) v = any_finite_double();
  return x;
}

std::int64_t any_position(std::int64_t min) {
  std::int64_t p = *rc::gen::oneOf(
      rc::gen::inRange<std::int64_t>(0, 64), rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 31),
      rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 53),
      rc::gen::element<std::int64_t>(2147483647, 16777215, 16777216, 16777217, 1000000,
                                     std::int64_t{1} << 53));
  if (min < 0 && *rc::gen::arbitrary<bool>()) p = -p;
  return p;
}

double positive_factor() {
  return *rc::gen::oneOf(rc::gen::element(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0),
                         rc::gen::map(rc::gen::inRange(1, 1 << 20), [](int v) { return v / 4096.0; }));
}

RopeParams any_rope_params() {
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
      auto betas = *rc::gen::element(std::pair{32.0, 1.0}, std::pair{1.0, 1.0}, std::pair{16.0, 2.0});
      s.beta_fast = betas.first;
      s.beta_slow = betas.second;
      s.truncate = *rc::gen::arbitrary<bool>();
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

std::string describe(const RopeParams& p) {
  std::ostringstream os;
  os << "head_dim=" << p.head_dim << " rotary_dim=" << p.rotary_dim << " base=" << std::hexfloat << p.base
     << " layout=" << to_string(p.layout) << " partial=" << to_string(p.partial) << " inverse=" << p.inverse
     << " scaling=" << to_string(p.scaling.kind) << " mrope_sections=" << p.mrope_section.size();
  return os.str();
}

std::vector<std::int64_t> any_rope_position(const RopeParams& p) {
  std::vector<std::int64_t> pos;
  for (std::int64_t a = 0; a < p.position_axes(); ++a) pos.push_back(any_position(-1));
  return pos;
}

RC_GTEST_PROP(CrossCheck, Rope, ()) {
  const RopeParams p = any_rope_params();
  RC_LOG() << describe(p) << "\n";
  RC_TAG(to_string(p.scaling.kind));
  const auto m = any_rope_position(p);
  const auto x = finite_doubles(static_cast<std::size_t>(p.head_dim));
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      RC_ASSERT(reference::rope_rotate(p, m, x, Backend::mpfr) ==
                reference::rope_rotate(p, m, x, Backend::cpp_bin_float));
      break;
    case 1:
      RC_ASSERT(reference::rope_table_row(p, m, Backend::mpfr) ==
                reference::rope_table_row(p, m, Backend::cpp_bin_float));
      break;
    case 2: {
      const auto n = any_rope_position(p);
      const auto k = finite_doubles(static_cast<std::size_t>(p.head_dim));
      RC_ASSERT(reference::rope_dot(p, m, n, x, k, Backend::mpfr) ==
                reference::rope_dot(p, m, n, x, k, Backend::cpp_bin_float));
      break;
    }
    default:
      RC_ASSERT(reference::rope_frequencies(p, Backend::mpfr) ==
                reference::rope_frequencies(p, Backend::cpp_bin_float));
  }
}

RC_GTEST_PROP(CrossCheck, Sinusoidal, ()) {
  SinusoidalParams p;
  p.d_model = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.base = *rc::gen::element(10000.0, 500.0, 1e6, 1.25);
  p.layout = *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated);
  p.frequencies = *rc::gen::element(SinusoidalFrequencies::paper, SinusoidalFrequencies::tensor2tensor);
  const auto a = any_position(0);
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      RC_ASSERT(reference::sinusoidal_row(p, a, Backend::mpfr) ==
                reference::sinusoidal_row(p, a, Backend::cpp_bin_float));
      break;
    case 1: {
      const auto x = finite_doubles(static_cast<std::size_t>(p.d_model));
      RC_ASSERT(reference::sinusoidal_embed(p, a, x, Backend::mpfr) ==
                reference::sinusoidal_embed(p, a, x, Backend::cpp_bin_float));
      break;
    }
    default: {
      const auto b = any_position(0);
      RC_ASSERT(reference::sinusoidal_dot(p, a, b, Backend::mpfr) ==
                reference::sinusoidal_dot(p, a, b, Backend::cpp_bin_float));
    }
  }
}

RC_GTEST_PROP(CrossCheck, Alibi, ()) {
  AlibiParams p;
  const bool slopes = *rc::gen::arbitrary<bool>();
  // All slopes of up to 80 heads; single biases of up to 5000 heads.
  p.n_heads = *rc::gen::inRange<std::int64_t>(1, slopes ? 81 : 5001);
  p.mode = *rc::gen::element(AlibiMode::causal, AlibiMode::symmetric);
  if (slopes) {
    RC_ASSERT(reference::alibi_slopes(p, Backend::mpfr) == reference::alibi_slopes(p, Backend::cpp_bin_float));
  } else {
    const auto head = *rc::gen::inRange<std::int64_t>(0, p.n_heads);
    auto i = any_position(0), j = any_position(0);
    if (p.mode == AlibiMode::causal && j > i) std::swap(i, j);
    RC_ASSERT(reference::alibi_bias(p, head, i, j, Backend::mpfr) ==
              reference::alibi_bias(p, head, i, j, Backend::cpp_bin_float));
  }
}

RC_GTEST_PROP(CrossCheck, Learned, ()) {
  LearnedParams p;
  p.max_positions = *rc::gen::inRange<std::int64_t>(1, 6);
  p.dim = *rc::gen::inRange<std::int64_t>(1, 9);
  const auto table = finite_doubles(static_cast<std::size_t>(p.parameter_count()));
  const auto pos = *rc::gen::inRange<std::int64_t>(0, p.max_positions);
  const auto a = reference::learned_lookup(p, table, pos, Backend::mpfr);
  RC_ASSERT(a == reference::learned_lookup(p, table, pos, Backend::cpp_bin_float));
  for (std::size_t j = 0; j < a.size(); ++j) {
    RC_ASSERT(a[j].f64() == table[static_cast<std::size_t>(pos * p.dim) + j]);
  }
}

}  // namespace
}  // namespace posenc
