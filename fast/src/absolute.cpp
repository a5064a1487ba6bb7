// Sinusoidal tables, ALiBi and learned lookups: small next to RoPE, written once for every path
// (only the sincos kernel is per-ISA, and it returns the same bits everywhere).
#include <cmath>
#include <limits>
#include <string>

#include "frequencies.hpp"
#include "kernels.hpp"
#include "output_size.hpp"
#include "posenc/errors.hpp"
#include "posenc/strided_view.hpp"

namespace posenc::fast {
namespace {

// The parameters, the row buffer's size and every position, before the first row is written.
void check_sinusoidal_call(const SinusoidalParams& p, std::span<const std::int64_t> positions, std::size_t floats,
                           const char* name) {
  validate(p);
  detail::check_floats(name, floats, positions.size(), p.d_model);
  for (auto position : positions) {
    validate_sinusoidal_position(position);
    if (position > kMaxPosition) {
      throw InvalidParameter("sinusoidal.position", std::to_string(position), "in [0, 2^32] (the fast path's accurate range)");
    }
  }
}

// sin and cos of PE(position) in binary64, pair by pair (position already checked).
void sinusoidal_pairs(const SinusoidalParams& p, std::int64_t position, Isa isa, std::vector<double>& s,
                      std::vector<double>& c) {
  const auto half = static_cast<std::size_t>(p.d_model / 2);
  std::vector<double> pos(half, static_cast<double>(position)), hi(half), lo(half);
  for (std::size_t i = 0; i < half; ++i) {
    const detail::SplitFrequency w = detail::split(formulas::sinusoidal_frequency<long double>(p, static_cast<std::int64_t>(i)));
    hi[i] = w.hi;
    lo[i] = w.lo;
  }
  s.resize(half);
  c.resize(half);
  detail::kernels(isa).sincos(pos.data(), hi.data(), lo.data(), s.data(), c.data(), half);
}

std::size_t sin_index(const SinusoidalParams& p, std::size_t i) {
  return static_cast<std::size_t>(p.sin_index(static_cast<std::int64_t>(i)));
}
std::size_t cos_index(const SinusoidalParams& p, std::size_t i) {
  return static_cast<std::size_t>(p.cos_index(static_cast<std::int64_t>(i)));
}

long double slope(const AlibiParams& p, std::int64_t head) {
  const AlibiSlopeExponent e = alibi_slope_exponent(p, head);
  return std::exp2(static_cast<long double>(e.numerator) / static_cast<long double>(e.denominator));
}

}  // namespace

void sinusoidal_table(const SinusoidalParams& p, std::span<const std::int64_t> positions, std::span<float> out,
                      Isa isa) {
  check_sinusoidal_call(p, positions, out.size(), "out");
  std::vector<double> s, c;
  const auto d = static_cast<std::size_t>(p.d_model);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    sinusoidal_pairs(p, positions[k], isa, s, c);
    for (std::size_t i = 0; i < s.size(); ++i) {
      out[k * d + sin_index(p, i)] = static_cast<float>(s[i]);
      out[k * d + cos_index(p, i)] = static_cast<float>(c[i]);
    }
  }
}

void sinusoidal_embed(const SinusoidalParams& p, std::span<const std::int64_t> positions, std::span<float> x, Isa isa) {
  check_sinusoidal_call(p, positions, x.size(), "x");
  std::vector<double> s, c;
  const auto d = static_cast<std::size_t>(p.d_model);
  const auto scale = static_cast<double>(std::sqrt(static_cast<long double>(p.d_model)));
  for (std::size_t k = 0; k < positions.size(); ++k) {
    sinusoidal_pairs(p, positions[k], isa, s, c);
    float* row = x.data() + k * d;
    // In binary64, then one rounding: x sqrt(d) + PE is within an ulp of binary32.
    for (std::size_t i = 0; i < s.size(); ++i) {
      float& a = row[sin_index(p, i)];
      float& b = row[cos_index(p, i)];
      a = static_cast<float>(std::fma(static_cast<double>(a), scale, s[i]));
      b = static_cast<float>(std::fma(static_cast<double>(b), scale, c[i]));
    }
  }
}

std::vector<float> alibi_slopes(const AlibiParams& p) {
  validate(p);
  std::vector<float> out;
  for (std::int64_t h = 0; h < p.n_heads; ++h) out.push_back(static_cast<float>(slope(p, h)));
  return out;
}

void alibi_add_bias(const AlibiParams& p, const AlibiScores& s) {
  validate(p);
  const std::int64_t n_query = s.n_query, n_key = s.n_key, q0 = s.first_query, k0 = s.first_key;
  if (n_query < 0) throw InvalidParameter("scores.n_query", std::to_string(n_query), ">= 0");
  if (n_key < 0) throw InvalidParameter("scores.n_key", std::to_string(n_key), ">= 0");
  constexpr std::int64_t kMax = std::int64_t{1} << 53;
  if (q0 < 0 || q0 > kMax - n_query) {
    throw InvalidParameter("scores.first_query", std::to_string(q0), "in [0, 2^53 - n_query]");
  }
  if (k0 < 0 || k0 > kMax - n_key) throw InvalidParameter("scores.first_key", std::to_string(k0), "in [0, 2^53 - n_key]");
  float* scores = s.scores.data();
  if (!scores && n_query > 0 && n_key > 0) throw InvalidParameter("scores", "null", "non-null");
  const std::size_t bytes = check_view({"scores", scores, p.n_heads, n_query, n_key, s.head_stride, s.query_stride, sizeof(float)},
                                       "scores.head_stride", "scores.query_stride", true);
  if (bytes > s.scores.size_bytes()) {
    throw InvalidParameter("scores", std::to_string(s.scores.size()) + " floats",
                           "at least the view's extent, " + std::to_string(bytes / sizeof(float)) + " floats");
  }
  for (std::int64_t h = 0; h < p.n_heads; ++h) {
    const long double m = slope(p, h);
    for (std::int64_t i = 0; i < n_query; ++i) {
      float* row = scores + h * s.head_stride + i * s.query_stride;
      for (std::int64_t j = 0; j < n_key; ++j) {
        std::int64_t distance = (q0 + i) - (k0 + j);
        if (distance < 0 && p.mode == AlibiMode::causal) {
          row[j] = -std::numeric_limits<float>::infinity();  // the causal mask
          continue;
        }
        if (distance < 0) distance = -distance;
        row[j] += static_cast<float>(-m * static_cast<long double>(distance));
      }
    }
  }
}

void learned_lookup(const LearnedParams& p, std::span<const float> table, std::span<const std::int64_t> positions,
                    std::span<float> out) {
  validate(p);
  detail::check_floats("table", table.size(), static_cast<std::size_t>(p.max_positions), p.dim);
  detail::check_floats("out", out.size(), positions.size(), p.dim);
  for (auto position : positions) validate_learned_position(p, position);  // all before any write
  const auto d = static_cast<std::size_t>(p.dim);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const float* row = table.data() + static_cast<std::size_t>(positions[k]) * d;
    std::copy(row, row + d, out.data() + k * d);
  }
}

}  // namespace posenc::fast
