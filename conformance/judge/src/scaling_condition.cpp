#include "scaling_condition.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "posenc/formulas/rope_frequencies.hpp"

namespace posenc::conformance {
namespace {

using L = long double;
namespace rope = formulas::rope_detail;

// The largest u a working format may have (binary32): whether an intermediate's error can reach a
// pair is decided for it, which only adds terms in binary64.
constexpr L kLargestU = 0x1p-24L;

// A blend weight whose unrounded value `raw` lies outside [0, 1] by more than its error (in units
// of u) is clamped to 0 or 1 whatever that error: exact, the pair gets no term.
bool reached(L raw, L error) {
  const L outside = raw < 0 ? -raw : raw > 1 ? raw - 1 : 0;
  return outside <= error * kLargestU;
}

// w = e (r/s + 1 - r): the relative error of w per unit of absolute error in the weight r,
// |1 - 1/s| / (r/s + 1 - r), at most s - 1 for s > 1 (at r = 1, the fully scaled pairs).
L blend_condition(L r, L s) { return std::fabs(1 - 1 / s) / (r / s + 1 - r); }

// A blended frequency's term: the weight's error times the blend's condition, plus the
// complement 1 - r formed once or twice (HF: 1 - (1 - ramp), 2u) and the blend's two products
// and sum of non-negative terms (3u relative).
double blended(L raw, L raw_error, L s) {
  if (!reached(raw, raw_error)) return 0;
  const L r = std::clamp(raw, L{0}, L{1});
  return static_cast<double>(blend_condition(r, s) * (raw_error + 2) + 3);
}

void yarn(const RopeParams& p, std::vector<double>& out) {
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  const std::int64_t original = *s.original_max_positions;
  const L base = p.base;
  // c = D ln(rho) / (2 ln base), rho = L0 / (beta 2 pi), formed in W: rho's three roundings (3u
  // relative: 3u absolute in ln rho), ln within 1 ulp (2u |ln rho|), ln base (2u), the product by
  // D and the quotient (u each): |dc| <= (6 |c| + 3 D / (2 ln base)) u.
  auto end = [&](double beta) { return rope::yarn_correction_dim<L>(beta, dim, base, original); };
  auto end_error = [&](L c) { return 6 * std::fabs(c) + 3 * static_cast<L>(dim) / (2 * std::log(base)); };
  L low = end(s.yarn_beta_fast()), high = end(s.yarn_beta_slow());
  // Truncated ends are integers (floor, ceil): exact once floor and ceil decide as the exact
  // values do (a wrong decision is a jump no condition number covers: SPEC.md section 5).
  L low_error = s.yarn_truncate() ? 0 : end_error(low), high_error = s.yarn_truncate() ? 0 : end_error(high);
  bool same = s.yarn_beta_fast() == s.yarn_beta_slow();
  if (s.yarn_truncate()) {
    low = std::floor(low);
    high = std::ceil(high);
    same = false;
  }
  // Clamping is 1-Lipschitz: it never enlarges an end's error.
  low = std::max(low, L{0});
  high = std::min(high, static_cast<L>(dim - 1));
  if (same || low == high) {
    high += L{1} / 1000;
    high_error += L{1} / 1000;  // 0.001 rounded in W
  }
  const L width = high - low;
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    // raw = (i - low) / width: d raw / d high = -raw / width, d raw / d low = (raw - 1) / width;
    // the subtraction, the width and the quotient rounded add 3 |raw|.
    const L raw = (static_cast<L>(i) - low) / width;
    const L raw_error = (std::fabs(raw) * high_error + std::fabs(raw - 1) * low_error) / std::fabs(width) +
                        3 * std::fabs(raw);
    out[static_cast<std::size_t>(i)] = blended(raw, raw_error, *s.factor);
  }
}

void llama3(const RopeParams& p, std::vector<double>& out) {
  const RopeScaling& s = p.scaling;
  const L lo = *s.low_freq_factor, hi = *s.high_freq_factor, original = static_cast<L>(*s.original_max_positions);
  const std::int64_t exponent_dim = p.partial == PartialRotary::proportional ? p.head_dim : p.rotary_dim;
  // Equal factors have no blend: each pair is kept or divided, a decision (a wrong one is a
  // jump no condition number covers, as YaRN's floor and ceil), so no term.
  if (lo == hi) return;
  const auto e = rope::default_inv_freq<L>(p.base, exponent_dim, p.rotary_dim / 2);
  for (std::size_t i = 0; i < e.size(); ++i) {
    // sigma = (L0 / lambda - lo) / (hi - lo), lambda = 2 pi / e: e formed in W within
    // (3 + 2 |ln e|) u (this section's pow and division), 2 pi, lambda and L0 / lambda three
    // more roundings, so q = L0 / lambda has relative error (6 + 2 |ln e|) u; the subtraction,
    // hi - lo and the quotient add 3 |sigma|. The weight on e / factor is 1 - sigma.
    const L q = original * e[i] / (2 * std::numbers::pi_v<L>);
    const L sigma = (q - lo) / (hi - lo);
    const L sigma_error = q * (6 + 2 * std::fabs(std::log(e[i]))) / (hi - lo) + 3 * std::fabs(sigma);
    out[i] = blended(1 - sigma, sigma_error, *s.factor);
  }
}

// base' = base alpha^(D/(D-2)) formed in W from alpha with relative error alpha_error (u units):
// the power's condition D/(D-2) on it, the exponent rounded (|ln alpha| D/(D-2) in ln base'), pow
// within 1 ulp (2), the product by base and base' rounded to W (1 each). ln w_i =
// -(2i/D_e) ln base', so w_i's relative error is 2i/D_e times base''s.
void ntk(const RopeParams& p, L alpha, L alpha_error, std::vector<double>& out) {
  const L k = static_cast<L>(p.rotary_dim) / static_cast<L>(p.rotary_dim - 2);
  const L base_error = k * alpha_error + k * std::fabs(std::log(alpha)) + 4;
  const std::int64_t exponent_dim = p.partial == PartialRotary::proportional ? p.head_dim : p.rotary_dim;
  for (std::int64_t i = 0; i < p.rotary_dim / 2; ++i) {
    out[static_cast<std::size_t>(i)] =
        static_cast<double>(2 * static_cast<L>(i) / static_cast<L>(exponent_dim) * base_error);
  }
}

}  // namespace

std::vector<double> scaling_condition(const RopeParams& p) {
  std::vector<double> out(static_cast<std::size_t>(p.pair_count()), 0.0);
  const RopeScaling& s = p.scaling;
  switch (s.kind) {
    case RopeScalingKind::yarn:
      yarn(p, out);
      break;
    case RopeScalingKind::llama3:
      llama3(p, out);
      break;
    case RopeScalingKind::ntk:
      ntk(p, *s.factor, 0, out);  // alpha is the config's factor, exact
      break;
    case RopeScalingKind::dynamic: {
      // alpha = f L'/L0 - (f - 1), L' = max(L, L0): f L' and / L0 (2 f L'/L0 absolute), f - 1
      // (|f - 1|) and the difference (|alpha|) rounded.
      const L f = *s.factor, original = static_cast<L>(*s.original_max_positions);
      const L length = static_cast<L>(std::max(*s.seq_len, *s.original_max_positions));
      const L alpha = f * length / original - (f - 1);
      ntk(p, alpha, (2 * f * length / original + std::fabs(f - 1) + std::fabs(alpha)) / std::fabs(alpha), out);
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace posenc::conformance
