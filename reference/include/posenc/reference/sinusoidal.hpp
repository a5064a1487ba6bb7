#pragma once
// Sinusoidal encoding, exact real math (Vaswani et al. 2017, section 3.5): the frequencies w_i of
// spec's posenc/formulas/sinusoidal_frequency.hpp (paper and tensor2tensor, cited there) in
// certified Approx<R>, and
//   PE(p, .) = sin(p w_i), cos(p w_i), interleaved (2i, 2i+1) or concatenated (i, d/2 + i).
#include <span>
#include <vector>

#include "posenc/formulas/sinusoidal_frequency.hpp"
#include "posenc/params/sinusoidal.hpp"
#include "posenc/reference/approx.hpp"
#include "posenc/reference/approx_number.hpp"

namespace posenc::ref {

template <class R>
std::vector<Approx<R>> sinusoidal_frequencies(const SinusoidalParams& p) {
  const std::int64_t half = p.d_model / 2;
  const auto log_base = formulas::sinusoidal_log_base<Approx<R>>(p);
  std::vector<Approx<R>> w;
  w.reserve(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) w.push_back(formulas::sinusoidal_frequency<Approx<R>>(p, i, log_base));
  return w;
}

template <class R>
std::vector<Approx<R>> sinusoidal_row(const SinusoidalParams& p, std::int64_t position) {
  const auto w = sinusoidal_frequencies<R>(p);
  const std::size_t half = w.size();
  std::vector<Approx<R>> row(2 * half);
  const Approx<R> pos = exact_int<R>(position);
  for (std::size_t i = 0; i < half; ++i) {
    const Approx<R> angle = pos * w[i];
    row[static_cast<std::size_t>(p.sin_index(static_cast<std::int64_t>(i)))] = sin(angle);
    row[static_cast<std::size_t>(p.cos_index(static_cast<std::int64_t>(i)))] = cos(angle);
  }
  return row;
}

// The embedding combination of the paper (section 3.4): x * sqrt(d_model) + PE(p).
template <class R>
std::vector<Approx<R>> sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                        std::span<const double> x) {
  auto row = sinusoidal_row<R>(p, position);
  const Approx<R> scale = sqrt(exact_int<R>(p.d_model));
  for (std::size_t j = 0; j < row.size(); ++j) row[j] = exact_double<R>(x[j]) * scale + row[j];
  return row;
}

template <class R>
Approx<R> sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b) {
  return dot(sinusoidal_row<R>(p, a), sinusoidal_row<R>(p, b));
}

}  // namespace posenc::ref
