// Sinusoidal tables, ALiBi and learned lookups: small next to RoPE, written once for every path
// (only the sincos kernel is per-ISA, and it returns the same bits everywhere).
#include <cmath>
#include <limits>
#include <string>

#include "frequencies.hpp"
#include "kernels.hpp"
#include "posenc/errors.hpp"
#include "posenc/strided_view.hpp"

namespace posenc::fast {
namespace {

// sin and cos of PE(position) in binary64, pair by pair.
void sinusoidal_pairs(const SinusoidalParams& p, std::int64_t position, Isa isa, std::vector<double>& s,
                      std::vector<double>& c) {
  validate_sinusoidal_position(position);
  if (position > kMaxPosition) {
    throw InvalidParameter("sinusoidal.position", std::to_string(position), "in [0, 2^32] (the fast path's accurate range)");
  }
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

void sinusoidal_table(const SinusoidalParams& p, std::span<const std::int64_t> positions, float* out, Isa isa) {
  validate(p);
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

void sinusoidal_embed(const SinusoidalParams& p, std::span<const std::int64_t> positions, float* x, Isa isa) {
  validate(p);
  std::vector<double> s, c;
  const auto d = static_cast<std::size_t>(p.d_model);
  const auto scale = static_cast<double>(std::sqrt(static_cast<long double>(p.d_model)));
  for (std::size_t k = 0; k < positions.size(); ++k) {
    sinusoidal_pairs(p, positions[k], isa, s, c);
    float* row = x + k * d;
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

void alibi_add_bias(const AlibiParams& p, float* scores, std::int64_t n_query, std::int64_t n_key,
                    std::int64_t head_stride, std::int64_t query_stride, std::int64_t q0, std::int64_t k0) {
  validate(p);
  if (n_query < 0) throw InvalidParameter("n_query", std::to_string(n_query), ">= 0");
  if (n_key < 0) throw InvalidParameter("n_key", std::to_string(n_key), ">= 0");
  constexpr std::int64_t kMax = std::int64_t{1} << 53;
  if (q0 < 0 || q0 > kMax - n_query) throw InvalidParameter("alibi.q0", std::to_string(q0), "in [0, 2^53 - n_query]");
  if (k0 < 0 || k0 > kMax - n_key) throw InvalidParameter("alibi.k0", std::to_string(k0), "in [0, 2^53 - n_key]");
  if (!scores && n_query > 0 && n_key > 0) throw InvalidParameter("scores", "null", "non-null");
  check_view({"scores", scores, p.n_heads, n_query, n_key, head_stride, query_stride, sizeof(float)}, "scores.head_stride",
                     "scores.query_stride", true);
  for (std::int64_t h = 0; h < p.n_heads; ++h) {
    const long double m = slope(p, h);
    for (std::int64_t i = 0; i < n_query; ++i) {
      float* row = scores + h * head_stride + i * query_stride;
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

void learned_lookup(const LearnedParams& p, const float* table, std::span<const std::int64_t> positions, float* out) {
  validate(p);
  for (auto position : positions) validate_learned_position(p, position);  // all before any write
  const auto d = static_cast<std::size_t>(p.dim);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const float* row = table + static_cast<std::size_t>(positions[k]) * d;
    std::copy(row, row + d, out + k * d);
  }
}

}  // namespace posenc::fast
