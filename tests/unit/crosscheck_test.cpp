// Cross-check of the two independent backends: MPFR (correctly rounded elementary functions) and
// Boost's cpp_bin_float must certify bit-identical roundings in all four formats, and the same
// 41-digit decimal, on random parameters and inputs of every family. RC_PARAMS sets the case
// count (CTest: 10,000 per family; 1,000 under the sanitizers). Floating-point inputs are drawn
// from raw bit patterns and special values, since RapidCheck's own double generator never yields
// subnormals, -0 or huge values.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <algorithm>
#include <bit>
#include <iostream>
#include <optional>
#include <cmath>
#include <sstream>

#include "posenc/judge/generators.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc {

std::ostream& operator<<(std::ostream& os, const Rounded& r) {
  os << r.exact;
  for (Format f : kAllFormats) os << " " << to_string(f) << "=" << r.hex(f);
  return os;
}

namespace {

using reference::Backend;
using generators::any_rope_params;
using generators::describe;

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
  const SinusoidalParams p = generators::any_sinusoidal_params();
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

// Attention (SPEC.md section 2.7): random small configurations of the properties' generator
// (every encoding, scaling, mask and scale field; a given table too), positions of any size,
// and nonzero inputs of ordinary magnitudes with full binary64 significands. Both backends must
// certify the same O and L, or both fail to: a row whose exact output is 0 or a rounding midpoint
// reached through rotations has no certifiable rounding (the properties discard such cases).
// A case costs about 2 ms with both backends, so this runs a tenth of the families' case count
// (RC_PARAMS max_success): 1,000 in `make test`, 100 under the sanitizers.
TEST(CrossCheck, Attention) {
  rc::detail::TestParams params;
  params.seed = rc::detail::configuration().testParams.seed;
  params.maxSuccess = std::max(1, rc::detail::configuration().testParams.maxSuccess / 10);
  rc::detail::TestMetadata metadata;
  metadata.id = "CrossCheck.Attention";
  rc::detail::TestListenerAdapter quiet;
  const auto result = rc::detail::checkTestable(
      [] {
        AttentionParams p = generators::any_attention_params();
        if (p.rope && *rc::gen::arbitrary<bool>()) p.rope_table_given = true;
        const auto shape = generators::any_attention_shape(p, *rc::gen::element<std::int64_t>(64, std::int64_t{1} << 31, std::int64_t{1} << 40));
        RC_LOG() << generators::describe(p) << " table_given=" << p.rope_table_given << "\n";
        auto ordinary = [](std::size_t n) {
          std::vector<double> x(n);
          for (auto& v : x) {
            const auto [m, e] = *rc::gen::pair(rc::gen::nonZero<std::int32_t>(), rc::gen::inRange(-10, 4));
            v = std::ldexp(static_cast<double>(m), e - 31);
          }
          return x;
        };
        const std::vector<double> q = ordinary(static_cast<std::size_t>(shape.queries * p.query_heads * p.head_dim));
        const std::vector<double> k = ordinary(static_cast<std::size_t>(shape.keys * p.kv_heads * p.head_dim));
        const std::vector<double> v = ordinary(static_cast<std::size_t>(shape.keys * p.kv_heads * p.value_dim));
        std::vector<double> table;
        if (p.rope_table_given) table = ordinary(static_cast<std::size_t>((shape.queries + shape.keys) * 2 * p.rope->pair_count()));
        const AttentionInputs in{shape.queries, shape.keys, shape.query_positions, shape.key_positions, q, k, v, shape.mask, table};
        auto run = [&](Backend b) -> std::optional<std::vector<Rounded>> {
          try {
            return reference::attention(p, in, b).values;
          } catch (const Uncertifiable&) {
            return std::nullopt;
          }
        };
        const auto mpfr = run(Backend::mpfr);
        RC_ASSERT(mpfr == run(Backend::cpp_bin_float));
        if (!mpfr) RC_DISCARD("neither backend certifies this case");
      },
      metadata, params, quiet);
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  EXPECT_TRUE(result.match(success)) << (result.match(failure) ? failure.description : "gave up (too many uncertifiable cases)");
  if (result.match(success)) std::cout << success.numSuccess << " attention cases agree\n";
}

}  // namespace
}  // namespace posenc
