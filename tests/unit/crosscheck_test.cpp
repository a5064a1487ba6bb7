// Cross-check of the two independent backends: MPFR (correctly rounded elementary functions) and
// Boost's cpp_bin_float must certify bit-identical roundings in all four formats, and the same
// 41-digit decimal, on random parameters and inputs of every family. RC_PARAMS sets the case
// count (CTest: 10,000 per family; 1,000 under the sanitizers). Floating-point inputs are drawn
// from raw bit patterns and special values, since RapidCheck's own double generator never yields
// subnormals, -0 or huge values.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
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

}  // namespace
}  // namespace posenc
