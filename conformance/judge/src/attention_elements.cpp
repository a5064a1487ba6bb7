#include "attention_elements.hpp"

#include <algorithm>
#include <cmath>

#include "posenc/formulas/rope_frequencies.hpp"
#include "rope_knowledge.hpp"

namespace posenc::conformance {
namespace {

// The softmax scale of SPEC.md section 2.7 in long double: it sizes a tolerance.
long double softmax_scale(const AttentionParams& p) {
  if (p.scale) return *p.scale;
  long double s = 1 / std::sqrt(p.scale_denominator ? static_cast<long double>(*p.scale_denominator)
                                                    : static_cast<long double>(p.head_dim));
  if (p.scale_mscale_all_dim) {
    const long double g = formulas::rope_detail::yarn_mscale<long double>(*p.rope->scaling.factor, *p.scale_mscale_all_dim);
    s *= g * g;
  }
  return s;
}

long double norm_in_long_double(std::span<const double> v) {
  long double sum = 0;
  for (double x : v) sum += static_cast<long double>(x) * x;
  return std::sqrt(sum);
}

// The largest (6 + 2|ln w_i| + c_i) |t_i| of a token's pairs at `position` (SPEC.md section 5:
// an angle formed in W errs by that many u_W per unit of the pair's norm).
double largest_angle_error(const RopeParams& p, const RopeKnowledge& k, std::span<const std::int64_t> position) {
  double worst = 0;
  for (std::size_t i = 0; i < k.inv_freq.size(); ++i) {
    if (!(k.inv_freq[i] > 0)) continue;
    const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
    const double t = std::fabs(static_cast<double>(position[axis]) * k.inv_freq[i]);
    worst = std::max(worst, (angle_error(k.inv_freq[i]) + k.condition[i]) * t);
  }
  return worst;
}

double slope(const AlibiParams& p, std::int64_t head) {
  const AlibiSlopeExponent e = alibi_slope_exponent(p, head);
  return std::exp2(static_cast<double>(e.numerator) / static_cast<double>(e.denominator));
}

}  // namespace

void attention_elements(std::vector<ElementSpec>& out, const cases::Attention& a, const VectorCase& c) {
  const AttentionParams& p = a.p;
  const AttentionInputs& in = a.in;
  const auto axes = static_cast<std::size_t>(p.position_axes());
  const auto d = static_cast<std::size_t>(p.head_dim);
  const auto dv = static_cast<std::size_t>(p.value_dim);
  const long double scale = softmax_scale(p);
  const RopeKnowledge* rope = p.rope ? &rope_knowledge(*p.rope) : nullptr;
  const long double m = rope ? rope->attention : 1;
  const bool angles = rope && !p.rope_table_given;
  std::vector<long double> key_norms;
  std::vector<double> key_angle_errors;
  for (std::int64_t j = 0; j < in.keys; ++j) {
    const auto position = in.key_positions.subspan(static_cast<std::size_t>(j) * axes, axes);
    key_angle_errors.push_back(angles ? largest_angle_error(*p.rope, *rope, position) : 0.0);
    for (std::int64_t g = 0; g < p.kv_heads; ++g) {
      key_norms.push_back(norm_in_long_double(in.k.subspan(static_cast<std::size_t>(j * p.kv_heads + g) * d, d)));
    }
  }
  const std::size_t o_count = static_cast<std::size_t>(in.queries * p.query_heads) * dv;
  for (std::int64_t i = 0; i < in.queries; ++i) {
    const auto query_position = in.query_positions.subspan(static_cast<std::size_t>(i) * axes, axes);
    const double query_angle_error = angles ? largest_angle_error(*p.rope, *rope, query_position) : 0.0;
    for (std::int64_t h = 0; h < p.query_heads; ++h) {
      const std::size_t row = static_cast<std::size_t>(i * p.query_heads + h);
      const std::int64_t g = p.kv_head(h);
      const long double q_norm = norm_in_long_double(in.q.subspan(row * d, d));
      AttentionElement e;
      e.head_dim = static_cast<double>(p.head_dim);
      e.rotated = p.rope.has_value();
      e.query_angle_error = query_angle_error;
      e.logit_range = c.attention.logit_range.at(row);
      std::vector<double> low(dv, INFINITY), high(dv, -INFINITY), largest(dv, 0);
      for (std::int64_t j = 0; j < in.keys; ++j) {
        if (!attention_visible(p, in, i, j)) continue;
        e.keys += 1;
        const long double sigma = scale * m * m * q_norm * key_norms[static_cast<std::size_t>(j * p.kv_heads + g)];
        e.sigma = std::max(e.sigma, static_cast<double>(sigma));
        e.key_angle_error = std::max(e.key_angle_error, key_angle_errors[static_cast<std::size_t>(j)]);
        if (p.alibi) {
          const auto key = in.key_positions[static_cast<std::size_t>(j) * axes];
          const double distance = std::fabs(static_cast<double>(query_position[0]) - static_cast<double>(key));
          e.bias = std::max(e.bias, slope(*p.alibi, h) * distance);
        }
        const double* v = &in.v[static_cast<std::size_t>(j * p.kv_heads + g) * dv];
        for (std::size_t k = 0; k < dv; ++k) {
          low[k] = std::min(low[k], v[k]);
          high[k] = std::max(high[k], v[k]);
          largest[k] = std::max(largest[k], std::fabs(v[k]));
        }
      }
      for (std::size_t k = 0; k < dv; ++k) {
        ElementSpec& spec = out[row * dv + k];
        AttentionElement element = e;
        element.kappa = c.attention.kappa.at(row * dv + k);
        element.pv = c.attention.pv.at(row * dv + k);
        element.magnitude = std::fabs(static_cast<double>(spec.exact));
        element.v_range = high[k] - low[k];
        element.v_max = largest[k];
        spec.scale = element.pv;
        spec.attention = element;
      }
      ElementSpec& lse = out[o_count + row];
      e.lse = true;
      e.magnitude = std::fabs(static_cast<double>(lse.exact));
      lse.scale = std::max(e.magnitude, 1.0);
      lse.attention = e;
    }
  }
}

std::vector<double> attention_largest_errors(const std::vector<ElementSpec>& specs) {
  std::vector<double> out;
  out.reserve(specs.size());
  for (const auto& s : specs) {
    const AttentionElement& e = *s.attention;
    const double largest = e.lse ? 2 * e.sigma + e.bias + std::log(std::max(e.keys, 1.0)) : e.v_range;
    out.push_back(s.scale > 0 ? largest / s.scale : 0);
  }
  return out;
}

double attention_bound(const AttentionElement& e, const Tolerance& t, Format storage) {
  const double u_f = unit_roundoff(storage);
  // The angles' working format sizes `standard`'s angle allowance, the attention's its arithmetic
  // (the same unless the implementation declares them apart).
  const double u_angle = unit_roundoff(t.working_format(storage));
  const double u_w = unit_roundoff(t.attention_working_format(storage));
  const auto score = t.score_format(storage), probability = t.probability_format(storage);
  // A declared format's rounding: relative u, and below its normal range absolute half its
  // smallest subnormal.
  const double u_s = score ? unit_roundoff(*score) : 0;
  const double tiny_s = score ? std::ldexp(0.5, spec(*score).min_quantum()) : 0;
  const double u_p = probability ? unit_roundoff(*probability) : 0;
  const double tiny_p = probability ? std::ldexp(0.5, spec(*probability).min_quantum()) : 0;
  auto gamma = [](double n, double u) { return n * u < 1 ? n * u / (1 - n * u) : INFINITY; };
  // A rotated vector stored in F: each element within 6 u_F of its pair's norm (the strict RoPE
  // bound), plus under `standard` its angle's error formed in W, so its norm within rho.
  double rho_q = 0, rho_k = 0;
  if (e.rotated) {
    const bool standard = t.profile == Profile::standard;
    rho_q = std::sqrt(2.0) * (6 * u_f + (standard ? e.query_angle_error * u_angle : 0));
    rho_k = std::sqrt(2.0) * (6 * u_f + (standard ? e.key_angle_error * u_angle : 0));
  }
  const double grow = (1 + rho_q) * (1 + rho_k);
  const double n = e.keys;
  const double gamma_2n = gamma(2 * n, u_w);
  // The largest error of any one logit as the softmax sees it (a logit-equivalent perturbation).
  const double delta = (rho_q + rho_k + rho_q * rho_k) * e.sigma + (gamma(e.head_dim, u_w) + 3 * u_w) * grow * e.sigma +
                       3 * (u_s * (grow * e.sigma + e.bias) + tiny_s) + 4 * u_w * e.bias + 3 * u_w * e.logit_range +
                       (2 * n + 3) * u_w + u_p;
  double bound = 0;
  if (e.lse) {
    bound = delta + gamma_2n + 3 * u_w * (e.magnitude + e.logit_range + 1);
  } else {
    bound = std::expm1(2 * delta) * e.kappa + (gamma_2n + u_p) * e.pv + (gamma_2n + 2 * u_w) * e.magnitude +
            n * tiny_p * e.v_max;
  }
  return bound + u_f * (e.magnitude + bound);
}

}  // namespace posenc::conformance
