#pragma once
// RoPE outputs in exact real math. For pair i = (a, b) with angle t = pos[axis(i)] * inv_freq_i
// (negated when inverse) and attention factor m:
//   y_a = m (x_a cos t - x_b sin t),  y_b = m (x_a sin t + x_b cos t)
// Elements outside the rotated span are copied unchanged (including the sign of zero).
#include <span>
#include <vector>

#include "posenc/reference/rope_frequencies.hpp"

namespace posenc::ref {

// Table row of one position: [m cos t_0 .. m cos t_{n-1}, m sin t_0 .. m sin t_{n-1}], n pairs.
template <class R>
std::vector<Approx<R>> rope_table_row(const RopeParams& p, const RopeFrequencies<R>& f,
                                      std::span<const std::int64_t> position) {
  const std::size_t n = f.inv_freq.size();
  std::vector<Approx<R>> row(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
    Approx<R> angle = exact_int<R>(position[axis]) * f.inv_freq[i];
    row[i] = cos(angle) * f.attention_factor;
    row[n + i] = sin(angle) * f.attention_factor;
  }
  return row;
}

// x rotated by a table row (rope_table_row's layout: n cosines, then n sines, times m).
template <class R>
std::vector<Approx<R>> rotate_by_row(const RopeParams& p, const std::vector<Approx<R>>& row, std::span<const double> x) {
  std::vector<Approx<R>> y;
  y.reserve(x.size());
  for (double v : x) y.push_back(exact_double<R>(v));
  const std::size_t n = row.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<std::size_t>(p.pair_first(static_cast<std::int64_t>(i)));
    const auto b = static_cast<std::size_t>(p.pair_second(static_cast<std::int64_t>(i)));
    const Approx<R>& c = row[i];
    const Approx<R> s = p.inverse ? -row[n + i] : row[n + i];
    const Approx<R> xa = y[a], xb = y[b];
    y[a] = xa * c - xb * s;
    y[b] = xa * s + xb * c;
  }
  return y;
}

template <class R>
std::vector<Approx<R>> rope_rotate(const RopeParams& p, const RopeFrequencies<R>& f,
                                   std::span<const std::int64_t> position, std::span<const double> x) {
  return rotate_by_row(p, rope_table_row(p, f, position), x);
}

// The attention logit q.k after rotating q at position m and k at position n.
template <class R>
Approx<R> rope_dot(const RopeParams& p, const RopeFrequencies<R>& f, std::span<const std::int64_t> m,
                   std::span<const std::int64_t> n, std::span<const double> q,
                   std::span<const double> k) {
  return dot(rope_rotate(p, f, m, q), rope_rotate(p, f, n, k));
}

}  // namespace posenc::ref
