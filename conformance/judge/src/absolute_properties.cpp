// Identities of the absolute encodings and biases: sinusoidal shift-linearity and relative dot
// products (Vaswani et al. 2017, 3.5: "PE(pos+k) can be represented as a linear function of
// PE(pos)"), ALiBi's dependence on i - j only (Press et al. 2022), learned-table bounds.
#include <cmath>

#include "posenc/judge/generators.hpp"
#include "property_support.hpp"

namespace posenc::conformance::properties {
namespace {

using generators::any_sinusoidal_params;
using generators::describe;

struct Row {
  std::vector<double> pe, allowed;
};

Row sinusoidal_row(Implementation& impl, const SinusoidalParams& p, std::int64_t position, const Tolerance& t) {
  const VectorGroup g = group_of(CaseType::sinusoidal_row, p);
  const VectorCase c = position_case(position);
  Row r;
  r.pe = call(impl, g, c);
  r.allowed = allowed(g, c, r.pe, t);
  return r;
}

// Where pair i's sine and cosine sit (as size_t indices), and its frequency (in long double: the
// property's own arithmetic must not add error comparable to the implementation's).
std::size_t sin_index(const SinusoidalParams& p, std::size_t i) {
  return static_cast<std::size_t>(p.sin_index(static_cast<std::int64_t>(i)));
}
std::size_t cos_index(const SinusoidalParams& p, std::size_t i) {
  return static_cast<std::size_t>(p.cos_index(static_cast<std::int64_t>(i)));
}
long double frequency(const SinusoidalParams& p, std::size_t i) {
  const auto e = p.frequency_exponent(static_cast<std::int64_t>(i));
  return std::pow(static_cast<long double>(p.base),
                  -static_cast<long double>(e.numerator) / static_cast<long double>(e.denominator));
}

void sinusoidal_shift_linearity(Implementation& impl, const Tolerance& t) {
  const auto p = any_sinusoidal_params();
  const auto pos = any_position(), k = any_position(1 << 10);
  const auto a = sinusoidal_row(impl, p, pos, t), b = sinusoidal_row(impl, p, pos + k, t);
  for (std::size_t i = 0; i < static_cast<std::size_t>(p.d_model / 2); ++i) {
    const long double turn = static_cast<long double>(k) * frequency(p, i);
    const long double s = a.pe[sin_index(p, i)], c = a.pe[cos_index(p, i)];
    const long double sin_shifted = s * std::cos(turn) + c * std::sin(turn);
    const long double cos_shifted = c * std::cos(turn) - s * std::sin(turn);
    const double carried = a.allowed[sin_index(p, i)] + a.allowed[cos_index(p, i)] + 4 * unit();
    const auto check = [&](std::size_t j, long double rotated) {
      if (!(std::fabs(b.pe[j] - rotated) <= carried + b.allowed[j])) {
        RC_FAIL(describe(p) + ": PE(" + std::to_string(pos + k) + ")[" + std::to_string(j) + "] = " + show(b.pe[j]) +
                " but PE(" + std::to_string(pos) + ") rotated by " + std::to_string(k) + " w_" + std::to_string(i) +
                " gives " + show(static_cast<double>(rotated)));
      }
    };
    check(sin_index(p, i), sin_shifted);
    check(cos_index(p, i), cos_shifted);
  }
}

struct Dot {
  double value, allowed;
};

Dot dot(const Row& a, const Row& b) {
  long double sum = 0, magnitude = 0;
  double allowed = 0;
  for (std::size_t j = 0; j < a.pe.size(); ++j) {
    sum += static_cast<long double>(a.pe[j]) * b.pe[j];
    magnitude += std::fabs(static_cast<long double>(a.pe[j]) * b.pe[j]);
    allowed += a.allowed[j] * std::fabs(b.pe[j]) + b.allowed[j] * std::fabs(a.pe[j]);
  }
  return {static_cast<double>(sum), allowed + 2 * unit() * static_cast<double>(magnitude)};
}

void sinusoidal_distance_only(Implementation& impl, const Tolerance& t) {
  const auto p = any_sinusoidal_params();
  const auto a = any_position(), b = any_position(), shift = any_position();
  const Dot before = dot(sinusoidal_row(impl, p, a, t), sinusoidal_row(impl, p, b, t));
  const Dot after = dot(sinusoidal_row(impl, p, a + shift, t), sinusoidal_row(impl, p, b + shift, t));
  if (!(std::fabs(before.value - after.value) <= before.allowed + after.allowed)) {
    RC_FAIL(describe(p) + ": PE(a).PE(b) = " + show(before.value) + " at (" + std::to_string(a) + ", " +
            std::to_string(b) + ") but " + show(after.value) + " after shifting both by " + std::to_string(shift));
  }
  const Row r = sinusoidal_row(impl, p, a, t);
  const Dot self = dot(r, r);
  const double half = static_cast<double>(p.d_model) / 2;
  if (!(std::fabs(self.value - half) <= self.allowed)) {
    RC_FAIL(describe(p) + ": PE(" + std::to_string(a) + ").PE(" + std::to_string(a) + ") = " + show(self.value) +
            " instead of d_model / 2 = " + show(half));
  }
}

void sinusoidal_unit_circle(Implementation& impl, const Tolerance& t) {
  const auto p = any_sinusoidal_params();
  const auto pos = any_position();
  const Row r = sinusoidal_row(impl, p, pos, t);
  for (std::size_t i = 0; i < static_cast<std::size_t>(p.d_model / 2); ++i) {
    const double s = r.pe[sin_index(p, i)], c = r.pe[cos_index(p, i)];
    const double es = r.allowed[sin_index(p, i)], ec = r.allowed[cos_index(p, i)];
    if (!(std::fabs(s) <= 1) || !(std::fabs(c) <= 1)) {
      RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ", pair " + std::to_string(i) + ": sin " + show(s) +
              ", cos " + show(c) + " outside [-1, 1]");
    }
    if (!(std::fabs(s * s + c * c - 1) <= 2 * (es + ec) + 4 * unit())) {
      RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ", pair " + std::to_string(i) +
              ": sin^2 + cos^2 = " + show(s * s + c * c));
    }
  }
}

AlibiParams any_alibi_params(AlibiMode mode) {
  AlibiParams p;
  p.n_heads = *rc::gen::inRange<std::int64_t>(1, 65);
  p.mode = mode;
  return p;
}

std::string describe(const AlibiParams& p) {
  return std::to_string(p.n_heads) + " heads, " + std::string(to_string(p.mode));
}

struct Bias {
  double value, allowed;
};

Bias bias(Implementation& impl, const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key,
          const Tolerance& t) {
  const VectorGroup g = group_of(CaseType::alibi_bias, p);
  const VectorCase c = bias_case(head, query, key);
  const auto y = call(impl, g, c);
  return {y[0], allowed(g, c, y, t)[0]};
}

void alibi_distance_only(Implementation& impl, const Tolerance& t) {
  const auto p = any_alibi_params(*rc::gen::element(AlibiMode::causal, AlibiMode::symmetric));
  const auto head = *rc::gen::inRange<std::int64_t>(0, p.n_heads);
  auto i = any_position(), j = any_position();
  if (p.mode == AlibiMode::causal && j > i) std::swap(i, j);
  const auto shift = any_position();
  const Bias a = bias(impl, p, head, i, j, t), b = bias(impl, p, head, i + shift, j + shift, t);
  // Equal values pass, infinities among them: a bias beyond the format's range overflows to the
  // same -inf on both sides (the vectors expect -inf there too).
  if (!(a.value == b.value || std::fabs(a.value - b.value) <= a.allowed + b.allowed)) {
    RC_FAIL(describe(p) + ", head " + std::to_string(head) + ": bias(" + std::to_string(i) + ", " + std::to_string(j) +
            ") = " + show(a.value) + " but " + show(b.value) + " after shifting both by " + std::to_string(shift));
  }
}

void alibi_monotone(Implementation& impl, const Tolerance& t) {
  const auto p = any_alibi_params(*rc::gen::element(AlibiMode::causal, AlibiMode::symmetric));
  const auto head = *rc::gen::inRange<std::int64_t>(0, p.n_heads);
  const auto query = any_position();
  const auto near = *rc::gen::inRange<std::int64_t>(0, query + 1);
  const auto far = *rc::gen::inRange<std::int64_t>(near, query + 1);
  // Keys at distances near <= far before the query (every mode allows keys before the query).
  const auto key = [&](std::int64_t distance) { return query - distance; };
  const Bias a = bias(impl, p, head, query, key(near), t), b = bias(impl, p, head, query, key(far), t);
  if (!(b.value <= a.value + a.allowed + b.allowed) || !(a.value <= 0)) {
    RC_FAIL(describe(p) + ", head " + std::to_string(head) + ", query " + std::to_string(query) + ": bias " +
            show(a.value) + " at distance " + std::to_string(near) + ", " + show(b.value) + " at distance " +
            std::to_string(far));
  }
}

// BLOOM adds slope * key to the scores instead of -slope * (query - key): the per-row constant
// slope * query cancels in the softmax, so both must give the same attention weights.
void alibi_key_only_softmax(Implementation& impl, const Tolerance& t) {
  const auto p = any_alibi_params(AlibiMode::causal);
  const auto head = *rc::gen::inRange<std::int64_t>(0, p.n_heads);
  const auto query = *rc::gen::inRange<std::int64_t>(0, 32);
  const VectorGroup g = group_of(CaseType::alibi_slopes, p);
  const double slope = call(impl, g, VectorCase{}).at(static_cast<std::size_t>(head));
  std::vector<long double> relative, key_only;
  double worst = 0;  // the largest error of any logit, which bounds each weight's relative change
  for (std::int64_t key = 0; key <= query; ++key) {
    const double score = std::ldexp(*rc::gen::inRange(-1024, 1024), -8);
    const Bias b = bias(impl, p, head, query, key, t);
    relative.push_back(score + static_cast<long double>(b.value));
    key_only.push_back(score + static_cast<long double>(slope) * static_cast<long double>(key));
    worst = std::max(worst, b.allowed + 2 * unit() * slope * static_cast<double>(query));
  }
  const auto softmax = [](std::vector<long double> v) {
    long double top = v[0], sum = 0;
    for (auto x : v) top = std::max(top, x);
    for (auto& x : v) sum += (x = std::exp(x - top));
    for (auto& x : v) x /= sum;
    return v;
  };
  const auto a = softmax(relative), b = softmax(key_only);
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (!(std::fabs(a[j] - b[j]) <= a[j] * 4 * worst + 16 * unit())) {
      RC_FAIL(describe(p) + ", head " + std::to_string(head) + ", query " + std::to_string(query) + ", key " +
              std::to_string(j) + ": softmax weight " + show(static_cast<double>(a[j])) + " with the bias, " +
              show(static_cast<double>(b[j])) + " with slope * key (slope " + show(slope) + ")");
    }
  }
}

void learned_out_of_range(Implementation& impl, const Tolerance&) {
  LearnedParams p;
  p.max_positions = *rc::gen::inRange<std::int64_t>(1, 64);
  p.dim = *rc::gen::inRange<std::int64_t>(1, 4);
  VectorGroup g = group_of(CaseType::learned_lookup, p);
  g.table.assign(static_cast<std::size_t>(p.parameter_count()), 0.5);
  const VectorCase c = position_case(*rc::gen::element<std::int64_t>(-1, p.max_positions, p.max_positions + 1, 1 << 20));
  const Format formats[] = {format()};
  const Outcome o = impl.run(g, c, formats).at(0);
  if (o.status == Status::unsupported) RC_DISCARD("unsupported");
  if (o.status != Status::invalid) {
    RC_FAIL("position " + std::to_string(c.position[0]) + " of a " + std::to_string(p.max_positions) +
            "-row table was not refused");
  }
}

}  // namespace

std::vector<Named> absolute_properties() {
  return {
      {"sinusoidal_shift_linearity: PE(p + k) is PE(p) rotated by k w_i in each pair", sinusoidal_shift_linearity},
      {"sinusoidal_distance_only: PE(a).PE(b) depends on a - b only, PE(p).PE(p) = d/2", sinusoidal_distance_only},
      {"sinusoidal_unit_circle: |PE| <= 1 and sin^2 + cos^2 = 1", sinusoidal_unit_circle},
      {"alibi_distance_only: bias(i, j) depends on i - j only", alibi_distance_only},
      {"alibi_monotone: the bias never grows with distance, and is <= 0", alibi_monotone},
      {"alibi_key_only_softmax: key-only bias (BLOOM) gives the same attention weights", alibi_key_only_softmax},
      {"learned_out_of_range: positions outside [0, max_positions) are refused", learned_out_of_range},
  };
}

}  // namespace posenc::conformance::properties
