#pragma once
// Scaled dot-product attention in exact real math (SPEC.md section 2.7). For query row i and
// query head h, over the keys j the row sees:
//   s_j = scale * q'_ih . k'_jg + b_hij        (g = h's KV head; q', k' rotated by RoPE or not)
//   O_ih = sum_j exp(s_j - M) v_jg / sum_j exp(s_j - M),  L_ih = M + ln sum_j exp(s_j - M)
// with M = max_j s_j: subtracting it changes nothing in exact math and keeps exp's argument <= 0,
// so no intermediate overflows however large the logits.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "posenc/formulas/attention_scale.hpp"
#include "posenc/params/attention.hpp"
#include "posenc/reference/alibi.hpp"
#include "posenc/reference/approx_number.hpp"
#include "posenc/reference/attention_terms.hpp"
#include "posenc/reference/rope.hpp"

namespace posenc::ref {

// A vector of certified values with binary64-range copies of each value's magnitude and error
// bound, so that a long sum of products gets one error bound summed in long double instead of
// a bound per operation at the working precision: an attention row takes n * head_dim products
// for its logits and n * value_dim for its outputs, and per-operation bounds made the largest
// shipped case cost minutes instead of seconds. `doubles` holds the values when every one is
// exact and a binary64 value (unrotated inputs, weights of exactly tied logits), so that an
// exact sum stays exact: a logit or output that is exactly a rounding midpoint (a 25-bit logit
// rounded to binary32) can be certified only as an exact value.
template <class R>
struct BoundedVector {
  std::vector<R> v;
  std::vector<long double> magnitude, error;
  std::optional<std::vector<double>> doubles;

  static BoundedVector from(const std::vector<Approx<R>>& a) {
    BoundedVector out;
    out.v.reserve(a.size());
    std::vector<double> exact;
    bool all_exact = true;
    for (const auto& x : a) {
      out.v.push_back(x.v);
      out.magnitude.push_back(std::fabs(static_cast<long double>(x.v)));
      out.error.push_back(static_cast<long double>(x.e));
      if (!all_exact) continue;
      const double d = static_cast<double>(x.v);
      all_exact = x.is_exact() && R(d) == x.v;
      exact.push_back(d);
    }
    if (all_exact) out.doubles = std::move(exact);
    return out;
  }
};

// Whether sum_i a_i b_i of binary64 values is exact at `digits` bits: each product has at most
// 106 significant bits, and every partial sum's bits lie between the lowest bit of the smallest
// product and the top of the largest plus the carries of n terms.
inline bool exact_sum_of_products(const std::vector<double>& a, const std::vector<double>& b, int digits) {
  int top = std::numeric_limits<int>::min(), bottom = std::numeric_limits<int>::max();
  auto lowest_bit = [](double x) {
    int e = 0;
    const double m = std::frexp(std::fabs(x), &e);  // m in [0.5, 1), 53 bits below 2^0
    auto bits = static_cast<std::uint64_t>(std::ldexp(m, 53));
    return e - 53 + std::countr_zero(bits);
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0 || b[i] == 0) continue;
    int ea = 0, eb = 0;
    (void)std::frexp(a[i], &ea);
    (void)std::frexp(b[i], &eb);
    top = std::max(top, ea + eb);
    bottom = std::min(bottom, lowest_bit(a[i]) + lowest_bit(b[i]));
  }
  if (top == std::numeric_limits<int>::min()) return true;
  return top + static_cast<int>(std::bit_width(a.size())) - bottom <= digits && 106 <= digits;
}

// sum_i a_i b_i with one error bound: each term propagates |a||e_b| + |b||e_a| + e_a e_b, and
// the n products and n sums at the working precision round by at most u each, which the
// recursive-summation bound covers with (n + 1) u sum |a_i b_i|. The long double sum's own
// roundings (2^-64 relative per operation) and those of the magnitudes are absorbed by
// inflating the result by 2^-20 relative, for up to 2^24 terms.
template <class R>
Approx<R> bounded_dot(const BoundedVector<R>& a, const BoundedVector<R>& b) {
  R sum = 0;
  long double propagated = 0, magnitudes = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    sum += a.v[i] * b.v[i];
    propagated += a.magnitude[i] * b.error[i] + b.magnitude[i] * a.error[i] + a.error[i] * b.error[i];
    magnitudes += a.magnitude[i] * b.magnitude[i];
  }
  if (a.doubles && b.doubles && exact_sum_of_products(*a.doubles, *b.doubles, kDigits<R>)) {
    return Approx<R>::exact(sum == 0 ? R(0) : sum);
  }
  const long double rounding = static_cast<long double>(a.v.size() + 1) *
                               std::ldexp(1.0L, 1 - kDigits<R>) * magnitudes;
  const long double bound = (propagated + rounding) * (1 + std::ldexp(1.0L, -20));
  return {sum, R(bound)};
}

// The exact softmax scale (formulas/attention_scale.hpp, certified).
template <class R>
Approx<R> attention_scale(const AttentionParams& p) {
  return formulas::attention_scale<Approx<R>>(p);
}

// What attention_row needs of a case at one precision: the scale, the frequencies and every
// key rotated once ([key][kv_head] rows of head_dim), shared by every query row and head.
template <class R>
struct AttentionContext {
  Approx<R> scale;
  std::optional<RopeFrequencies<R>> frequencies;
  std::vector<BoundedVector<R>> keys;
};

// Token t of the case (queries first, then keys) rotated: x given, at `position`.
template <class R>
std::vector<Approx<R>> attention_rotate(const AttentionParams& p, const AttentionInputs& in,
                                        const AttentionContext<R>& c, std::int64_t token,
                                        std::span<const std::int64_t> position, std::span<const double> x) {
  if (!p.rope) {
    std::vector<Approx<R>> y;
    y.reserve(x.size());
    for (double v : x) y.push_back(exact_double<R>(v));
    return y;
  }
  if (p.rope_table_given) {
    const auto width = static_cast<std::size_t>(2 * p.rope->pair_count());
    std::vector<Approx<R>> row;
    row.reserve(width);
    for (double v : in.table.subspan(static_cast<std::size_t>(token) * width, width)) row.push_back(exact_double<R>(v));
    return rotate_by_row(*p.rope, row, x);
  }
  return rope_rotate(*p.rope, *c.frequencies, position, x);
}

template <class R>
AttentionContext<R> attention_context(const AttentionParams& p, const AttentionInputs& in) {
  AttentionContext<R> c{attention_scale<R>(p), std::nullopt, {}};
  if (p.rope && !p.rope_table_given) c.frequencies = rope_frequencies<R>(*p.rope);
  const auto axes = static_cast<std::size_t>(p.position_axes());
  const auto d = static_cast<std::size_t>(p.head_dim);
  for (std::int64_t j = 0; j < in.keys; ++j) {
    const auto position = in.key_positions.subspan(static_cast<std::size_t>(j) * axes, axes);
    for (std::int64_t g = 0; g < p.kv_heads; ++g) {
      const auto x = in.k.subspan(static_cast<std::size_t>(j * p.kv_heads + g) * d, d);
      c.keys.push_back(BoundedVector<R>::from(attention_rotate(p, in, c, in.queries + j, position, x)));
    }
  }
  return c;
}

// An upper bound of x >= 0 in binary64, from a long double within 2^-60 relative of it.
inline double upward(long double x) {
  return std::nextafter(static_cast<double>(x * (1 + std::ldexp(1.0L, -40))), std::numeric_limits<double>::infinity());
}

// O (value_dim values) then L of query row i and query head h.
template <class R>
std::vector<Approx<R>> attention_row(const AttentionParams& p, const AttentionInputs& in, const AttentionContext<R>& c,
                                     std::int64_t i, std::int64_t h, AttentionTerms& terms) {
  const auto axes = static_cast<std::size_t>(p.position_axes());
  const auto d = static_cast<std::size_t>(p.head_dim);
  const auto dv = static_cast<std::size_t>(p.value_dim);
  const std::int64_t g = p.kv_head(h);
  const auto query_position = in.query_positions.subspan(static_cast<std::size_t>(i) * axes, axes);
  const auto query = BoundedVector<R>::from(attention_rotate(
      p, in, c, i, query_position, in.q.subspan(static_cast<std::size_t>(i * p.query_heads + h) * d, d)));
  std::vector<std::int64_t> visible;
  std::vector<Approx<R>> logits;
  for (std::int64_t j = 0; j < in.keys; ++j) {
    if (!attention_visible(p, in, i, j)) continue;
    Approx<R> s = c.scale * bounded_dot(query, c.keys[static_cast<std::size_t>(j * p.kv_heads + g)]);
    if (p.alibi) s = s + alibi_bias<R>(*p.alibi, h, query_position[0], in.key_positions[static_cast<std::size_t>(j) * axes]);
    visible.push_back(j);
    logits.push_back(s);
  }
  Approx<R> top = logits.front(), bottom = logits.front();
  for (const auto& s : logits) top = max(top, s), bottom = min(bottom, s);
  std::vector<Approx<R>> weights;
  weights.reserve(logits.size());
  Approx<R> sum = Approx<R>::exact(R(0));
  for (const auto& s : logits) {
    weights.push_back(exp(s - top));
    sum = sum + weights.back();
  }
  // sum_j w_j v_jk for every column k at once, with its bound as bounded_dot forms it; when
  // every weight is exact (exactly tied logits), per column through bounded_dot, which keeps an
  // exact sum exact.
  const auto weight_vector = BoundedVector<R>::from(weights);
  std::vector<Approx<R>> out(dv + 1, Approx<R>::exact(R(0)));
  if (weight_vector.doubles) {
    for (std::size_t k = 0; k < dv; ++k) {
      std::vector<Approx<R>> column;
      for (std::int64_t j : visible) column.push_back(exact_double<R>(in.v[static_cast<std::size_t>(j * p.kv_heads + g) * dv + k]));
      out[k] = bounded_dot(weight_vector, BoundedVector<R>::from(column)) / sum;
    }
  } else {
    std::vector<R> numerator(dv, R(0));
    std::vector<long double> propagated(dv, 0), magnitudes(dv, 0);
    for (std::size_t n = 0; n < visible.size(); ++n) {
      const double* v = &in.v[static_cast<std::size_t>(visible[n] * p.kv_heads + g) * dv];
      for (std::size_t k = 0; k < dv; ++k) {
        numerator[k] += weights[n].v * v[k];
        propagated[k] += weight_vector.error[n] * std::fabs(v[k]);
        magnitudes[k] += weight_vector.magnitude[n] * std::fabs(v[k]);
      }
    }
    const long double u = std::ldexp(1.0L, 1 - kDigits<R>);
    for (std::size_t k = 0; k < dv; ++k) {
      const long double rounding = static_cast<long double>(visible.size() + 1) * u * magnitudes[k];
      const Approx<R> column{numerator[k], R((propagated[k] + rounding) * (1 + std::ldexp(1.0L, -20)))};
      out[k] = column / sum;
    }
  }
  out[dv] = top + log(sum);
  // The bound's ingredients size a tolerance: long double is ample, rounded up to binary64.
  const auto total = static_cast<long double>(sum.v);
  terms.kappa.assign(dv, 0);
  terms.pv.assign(dv, 0);
  for (std::size_t k = 0; k < dv; ++k) {
    const auto o = static_cast<long double>(out[k].v);
    long double kappa = 0, pv = 0;
    for (std::size_t n = 0; n < visible.size(); ++n) {
      const long double weight = static_cast<long double>(weights[n].v) / total;
      const double v = in.v[static_cast<std::size_t>(visible[n] * p.kv_heads + g) * dv + k];
      kappa += weight * std::fabs(v - o);
      pv += weight * std::fabs(static_cast<long double>(v));
    }
    terms.kappa[k] = upward(kappa);
    terms.pv[k] = upward(pv);
  }
  terms.logit_range = upward(static_cast<long double>(top.v - bottom.v) + static_cast<long double>(top.e + bottom.e));
  return out;
}

}  // namespace posenc::ref
