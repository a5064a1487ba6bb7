// Properties of the encoding in use: a tiny attention built on the implementation's RoPE, and a
// differential check against the reference on random parameters of every family and scaling.
#include <cmath>

#include "posenc/errors.hpp"
#include "posenc/vectors/expected.hpp"
#include "posenc/judge/generators.hpp"
#include "property_support.hpp"

namespace posenc::conformance::properties {
namespace {

using Matrix = std::vector<std::vector<double>>;

// Token contents from one generated seed (SplitMix64): shrinking then changes the seed, never
// makes two tokens equal, which would make every permutation trivially harmless.
Matrix tokens(std::uint64_t seed, std::size_t n, std::size_t d) {
  Matrix m(n, std::vector<double>(d));
  for (auto& row : m) {
    for (auto& v : row) {
      seed += 0x9e3779b97f4a7c15;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      z ^= z >> 31;
      // A multiple of 2^-g in [-1, 1), exact in the properties' format (grid_bits()).
      const int g = grid_bits();
      v = std::ldexp(static_cast<double>(z >> (63 - g)) - std::ldexp(1.0, g), -g);
    }
  }
  return m;
}

// softmax(q k^T / sqrt(d)) v, in long double.
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix out(q.size(), std::vector<double>(v[0].size()));
  for (std::size_t i = 0; i < q.size(); ++i) {
    std::vector<long double> w(k.size());
    long double top = -INFINITY, sum = 0;
    for (std::size_t j = 0; j < k.size(); ++j) {
      long double s = 0;
      for (std::size_t e = 0; e < q[i].size(); ++e) s += static_cast<long double>(q[i][e]) * k[j][e];
      w[j] = s / std::sqrt(static_cast<long double>(q[i].size()));
      top = std::max(top, w[j]);
    }
    for (auto& x : w) sum += (x = std::exp(x - top));
    for (std::size_t e = 0; e < v[0].size(); ++e) {
      long double o = 0;
      for (std::size_t j = 0; j < v.size(); ++j) o += w[j] / sum * v[j][e];
      out[i][e] = static_cast<double>(o);
    }
  }
  return out;
}

Matrix permuted(const Matrix& m, std::size_t shift) {
  Matrix out(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) out[i] = m[(i + shift) % m.size()];
  return out;
}

double largest_difference(const Matrix& a, const Matrix& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t e = 0; e < a[i].size(); ++e) worst = std::max(worst, std::fabs(a[i][e] - b[i][e]));
  }
  return worst;
}

// Without positional information attention commutes with permuting the tokens; with RoPE at
// positions 0..n-1 it must not (an encoding that ignores the position would).
void attention_permutation(Implementation& impl, const Tolerance& t) {
  RopeParams p;
  p.head_dim = p.rotary_dim = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.base = *rc::gen::element(10000.0, 500000.0);
  p.layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half);
  const auto n = static_cast<std::size_t>(*rc::gen::inRange(3, 7));
  const auto shift = static_cast<std::size_t>(*rc::gen::inRange<int>(1, static_cast<int>(n)));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto d = static_cast<std::size_t>(p.head_dim);
  const Matrix q = tokens(seed, n, d), k = tokens(seed ^ 1, n, d), v = tokens(seed ^ 2, n, d);
  const auto describe = [&] {
    return generators::describe(p) + ", " + std::to_string(n) + " tokens, token seed " + std::to_string(seed) +
           ", permutation: cyclic shift by " + std::to_string(shift);
  };

  if (!(largest_difference(attention(permuted(q, shift), permuted(k, shift), permuted(v, shift)),
                           permuted(attention(q, k, v), shift)) <= 1e-15)) {
    RC_FAIL(describe() + ": attention without positions is not permutation-equivariant");
  }
  const auto encode = [&](const Matrix& x) {
    Matrix out;
    for (std::size_t i = 0; i < x.size(); ++i) out.push_back(rotate(impl, p, static_cast<std::int64_t>(i), x[i], t).y);
    return out;
  };
  const Matrix plain = permuted(attention(encode(q), encode(k), v), shift);
  const Matrix moved = attention(encode(permuted(q, shift)), encode(permuted(k, shift)), permuted(v, shift));
  if (!(largest_difference(plain, moved) > 1e-6)) {
    RC_FAIL(describe() + ": with the implementation's RoPE the attention output is still permutation-equivariant "
            "(largest difference " + show(largest_difference(plain, moved)) + "): the encoding ignores the position");
  }
}

// A random valid case of any family, its inputs exact in binary64.
struct RandomCase {
  VectorGroup group;
  VectorCase c;
  std::string description;
};

RandomCase any_case() {
  RandomCase r;
  switch (*rc::gen::inRange(0, 6)) {
    case 0: {
      const auto p = generators::any_rope_params();
      r.group = group_of(*rc::gen::element(CaseType::rope_rotate, CaseType::rope_table), p);
      r.c.x = any_vector(p.head_dim);
      for (std::int64_t a = 0; a < p.position_axes(); ++a) r.c.position.push_back(any_position());
      if (r.group.type == CaseType::rope_table) r.c.x.clear();
      r.description = generators::describe(p);
      break;
    }
    case 1: {
      const auto p = generators::any_sinusoidal_params();
      r.group = group_of(*rc::gen::element(CaseType::sinusoidal_row, CaseType::sinusoidal_embed), p);
      r.c.position = {any_position()};
      if (r.group.type == CaseType::sinusoidal_embed) r.c.x = any_vector(p.d_model);
      r.description = generators::describe(p);
      break;
    }
    case 2:
    case 3: {
      AlibiParams p;
      p.n_heads = *rc::gen::inRange<std::int64_t>(1, 65);
      p.mode = *rc::gen::element(AlibiMode::causal, AlibiMode::symmetric);
      r.group = group_of(*rc::gen::element(CaseType::alibi_slopes, CaseType::alibi_bias), p);
      r.c.head = *rc::gen::inRange<std::int64_t>(0, p.n_heads);
      r.c.query = any_position();
      r.c.key = *rc::gen::inRange<std::int64_t>(0, p.mode == AlibiMode::causal ? r.c.query + 1 : std::int64_t{1} << 31);
      r.description = std::to_string(p.n_heads) + " heads, " + std::string(to_string(p.mode));
      break;
    }
    case 4: {
      const auto p = generators::any_attention_params();
      r.group = group_of(CaseType::attention, p);
      const auto s = generators::any_attention_shape(p, std::int64_t{1} << 31);
      AttentionData& a = r.c.attention;
      a.queries = s.queries;
      a.keys = s.keys;
      a.query_positions = s.query_positions;
      a.key_positions = s.key_positions;
      a.mask = s.mask;
      a.q = any_nonzero_vector(a.queries * p.query_heads * p.head_dim);
      a.k = any_nonzero_vector(a.keys * p.kv_heads * p.head_dim);
      a.v = any_nonzero_vector(a.keys * p.kv_heads * p.value_dim);
      r.description = generators::describe(p) + ", positions from " + std::to_string(s.key_positions.front()) +
                      ", q = " + show(a.q) + ", k = " + show(a.k) + ", v = " + show(a.v);
      break;
    }
    default: {
      LearnedParams p;
      p.max_positions = *rc::gen::inRange<std::int64_t>(1, 9);
      p.dim = *rc::gen::inRange<std::int64_t>(1, 9);
      r.group = group_of(CaseType::learned_lookup, p);
      r.group.table = any_vector(p.parameter_count());
      r.c.position = {*rc::gen::inRange<std::int64_t>(0, p.max_positions)};
      r.description = std::to_string(p.max_positions) + " x " + std::to_string(p.dim) + " table";
    }
  }
  return r;
}

void differential(Implementation& impl, const Tolerance& t) {
  RandomCase r = any_case();
  try {
    fill_expected(r.group, r.c);  // for attention also the bound's ingredients
  } catch (const Uncertifiable&) {
    // An attention output that is exactly 0 or a rounding midpoint, reached through inexact
    // arithmetic (attention_properties.cpp, answer()): nothing to judge it against.
    RC_DISCARD("the reference cannot certify this case's rounding");
  }
  const auto y = call(impl, r.group, r.c);
  const auto specs = element_specs(r.group, r.c);
  for (std::size_t j = 0; j < y.size(); ++j) {
    const auto e = check_element(specs[j], r.c.expected.of(format())[j], y[j], format(), t);
    if (!e.pass) {
      RC_FAIL(std::string(to_string(r.group.type)) + ", " + r.description + ", position " +
              (r.c.position.empty() ? std::string("-") : std::to_string(r.c.position[0])) + ", x = " + show(r.c.x) +
              ": element " + std::to_string(j) + " = " + show(y[j]) + ", reference " + r.c.expected.exact[j] +
              ", scaled error " + std::to_string(e.scaled) + " > bound " + std::to_string(e.bound));
    }
  }
}

}  // namespace

std::vector<Named> model_properties() {
  return {
      {"attention_permutation: attention is permutation-equivariant without RoPE and not with it",
       attention_permutation},
      {"differential: random parameters of every family and scaling agree with the reference", differential},
  };
}

}  // namespace posenc::conformance::properties
