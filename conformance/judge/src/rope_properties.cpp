// RoPE identities: rotation algebra (identity at 0, composition, inverse, linearity, norm),
// relative-position dot products, the layout permutation, and consistency between scalings.
#include <bit>
#include <cmath>

#include "posenc/judge/generators.hpp"
#include "posenc/reference/reference.hpp"
#include "property_support.hpp"

namespace posenc::conformance::properties {
namespace {

using generators::any_rope_params;
using generators::describe;

double attention_factor(const RopeParams& p) { return reference::rope_frequencies(p).back().f64(); }

std::string element(const RopeParams& p, std::int64_t position, std::size_t j) {
  return describe(p) + ", position " + std::to_string(position) + ", element " + std::to_string(j);
}

void zero_rotation(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto x = any_vector(p.head_dim);
  const auto r = rotate(impl, p, 0, x, t);
  const double m = attention_factor(p);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const bool rotated = j < static_cast<std::size_t>(p.rotated_span());
    const double expected = rotated ? m * x[j] : x[j];
    if (!(std::fabs(r.y[j] - expected) <= r.allowed[j] + 2 * unit() * std::fabs(expected))) {
      RC_FAIL(element(p, 0, j) + ": x = " + show(x) + ", attention factor " + show(m) + ", y = " + show(r.y));
    }
  }
}

void partial_passthrough(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto pos = any_position();
  const auto x = any_vector(p.head_dim);
  const auto r = rotate(impl, p, pos, x, t);
  for (auto j = static_cast<std::size_t>(p.rotated_span()); j < x.size(); ++j) {
    if (std::bit_cast<std::uint64_t>(r.y[j]) != std::bit_cast<std::uint64_t>(x[j])) {
      RC_FAIL(element(p, pos, j) + " past the rotated span changed: " + show(x[j]) + " -> " + show(r.y[j]));
    }
  }
}

void scaling_by_two(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto pos = any_position();
  const auto x = any_vector(p.head_dim);
  auto x2 = x;
  for (auto& v : x2) v *= 2;
  const auto y = rotate(impl, p, pos, x, t).y, y2 = rotate(impl, p, pos, x2, t).y;
  for (std::size_t j = 0; j < y.size(); ++j) {
    if (y2[j] != 2 * y[j]) RC_FAIL(element(p, pos, j) + ": R(2x) = " + show(y2[j]) + ", 2 R(x) = " + show(2 * y[j]));
  }
}

void norm_preservation(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto pos = any_position();
  const auto x = any_vector(p.head_dim);
  const auto r = rotate(impl, p, pos, x, t);
  const double m = std::fabs(attention_factor(p));
  long double nx = 0, ny = 0;
  double slack = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double w = j < static_cast<std::size_t>(p.rotated_span()) ? m : 1;
    nx += static_cast<long double>(w * x[j]) * (w * x[j]);
    ny += static_cast<long double>(r.y[j]) * r.y[j];
    slack += r.allowed[j];
  }
  const double expected = static_cast<double>(std::sqrt(nx)), got = static_cast<double>(std::sqrt(ny));
  if (!(std::fabs(got - expected) <= slack + 4 * unit() * expected)) {
    RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ": |y| = " + show(got) + " but |x| times the attention factor = " +
            show(expected));
  }
}

void inverse(Implementation& impl, const Tolerance& t) {
  auto p = plain_rope();
  const auto pos = any_position();
  const auto x = any_vector(p.head_dim);
  const auto forward = rotate(impl, p, pos, x, t);
  p.inverse = true;
  const auto back = rotate(impl, p, pos, forward.y, t);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!(std::fabs(back.y[j] - x[j]) <= 2 * forward.allowed[j] + back.allowed[j] + 4 * unit() * std::fabs(x[j]))) {
      RC_FAIL(element(p, pos, j) + ": comes back as " + show(back.y[j]) + " from " + show(x[j]));
    }
  }
}

void composition(Implementation& impl, const Tolerance& t) {
  const auto p = plain_rope();
  const auto a = any_position(std::int64_t{1} << 30), b = any_position(std::int64_t{1} << 30);
  const auto x = any_vector(p.head_dim);
  const auto ra = rotate(impl, p, a, x, t);
  const auto rba = rotate(impl, p, b, ra.y, t);
  const auto rab = rotate(impl, p, a + b, x, t);
  double carried = 0;  // R(a)'s error, rotated by R(b) into any element of the pair
  for (double e : ra.allowed) carried = std::max(carried, 2 * e);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!(std::fabs(rba.y[j] - rab.y[j]) <= carried + rba.allowed[j] + rab.allowed[j] + 2 * unit() * std::fabs(rab.y[j]))) {
      RC_FAIL(element(p, a + b, j) + ": R(" + std::to_string(b) + ") R(" + std::to_string(a) + ") x = " +
              show(rba.y[j]) + " but R(a + b) x = " + show(rab.y[j]) + ", x = " + show(x));
    }
  }
}

void additivity(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto pos = any_position();
  const auto x = any_vector(p.head_dim), y = any_vector(p.head_dim);
  std::vector<double> sum(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) sum[j] = x[j] + y[j];  // exact: a 2^-19 grid
  const auto rx = rotate(impl, p, pos, x, t), ry = rotate(impl, p, pos, y, t), rs = rotate(impl, p, pos, sum, t);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double separate = rx.y[j] + ry.y[j];
    if (!(std::fabs(rs.y[j] - separate) <= rx.allowed[j] + ry.allowed[j] + rs.allowed[j] + 2 * unit() * std::fabs(separate))) {
      RC_FAIL(element(p, pos, j) + ": R(x + y) = " + show(rs.y[j]) + " but R(x) + R(y) = " + show(separate) +
              ", x = " + show(x) + ", y = " + show(y));
    }
  }
}

void layout_permutation(Implementation& impl, const Tolerance& t) {
  auto interleaved = any_rope_params();
  interleaved.layout = RopeLayout::interleaved;
  auto half = interleaved;
  half.layout = RopeLayout::half;
  const auto pos = any_position();
  const auto x = any_vector(interleaved.head_dim);
  // P moves pair i's elements from (2i, 2i+1) to (i, i + span/2); the tail stays.
  std::vector<std::size_t> to(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) to[j] = j;
  for (std::int64_t i = 0; i < interleaved.pair_count(); ++i) {
    to[static_cast<std::size_t>(interleaved.pair_first(i))] = static_cast<std::size_t>(half.pair_first(i));
    to[static_cast<std::size_t>(interleaved.pair_second(i))] = static_cast<std::size_t>(half.pair_second(i));
  }
  std::vector<double> px(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) px[to[j]] = x[j];
  const auto ri = rotate(impl, interleaved, pos, x, t), rh = rotate(impl, half, pos, px, t);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!(std::fabs(rh.y[to[j]] - ri.y[j]) <= ri.allowed[j] + rh.allowed[to[j]])) {
      RC_FAIL(describe(half) + ", position " + std::to_string(pos) + ": half-layout element " + std::to_string(to[j]) +
              " = " + show(rh.y[to[j]]) + " but interleaved element " + std::to_string(j) + " = " + show(ri.y[j]));
    }
  }
}

void distance_only(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto m = any_position(1 << 20), n = any_position(1 << 20), shift = any_position(1 << 20);
  const auto q = any_vector(p.head_dim), k = any_vector(p.head_dim);
  double allowed = 0;
  auto logit = [&](std::int64_t a, std::int64_t b) {
    const auto rq = rotate(impl, p, a, q, t), rk = rotate(impl, p, b, k, t);
    long double sum = 0, magnitude = 0;
    for (std::size_t j = 0; j < q.size(); ++j) {
      sum += static_cast<long double>(rq.y[j]) * rk.y[j];
      magnitude += std::fabs(static_cast<long double>(rq.y[j]) * rk.y[j]);
      allowed += rq.allowed[j] * std::fabs(rk.y[j]) + rk.allowed[j] * std::fabs(rq.y[j]);
    }
    allowed += 2 * unit() * static_cast<double>(magnitude);
    return static_cast<double>(sum);
  };
  const double before = logit(m, n), after = logit(m + shift, n + shift);
  if (!(std::fabs(before - after) <= allowed)) {
    RC_FAIL(describe(p) + ": q.k = " + show(before) + " at (" + std::to_string(m) + ", " + std::to_string(n) + ") but " +
            show(after) + " after shifting both by " + std::to_string(shift));
  }
}

void linear_scaling(Implementation& impl, const Tolerance& t) {
  auto none = plain_rope();
  none.scaling = RopeScaling{};
  auto linear = none;
  linear.scaling.kind = RopeScalingKind::linear;
  const auto factor = *rc::gen::inRange<std::int64_t>(2, 9);
  linear.scaling.factor = static_cast<double>(factor);
  const auto pos = any_position(1 << 24);
  const auto x = any_vector(none.head_dim);
  const auto a = rotate(impl, none, pos, x, t), b = rotate(impl, linear, pos * factor, x, t);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!(std::fabs(a.y[j] - b.y[j]) <= a.allowed[j] + b.allowed[j])) {
      RC_FAIL(element(none, pos, j) + ": " + show(a.y[j]) + " unscaled but " + show(b.y[j]) + " with linear factor " +
              std::to_string(factor) + " at position " + std::to_string(pos * factor));
    }
  }
}

// Every scaling set to do nothing: factor 1 (and unit short/long factors for LongRoPE), or
// dynamic NTK at a sequence no longer than the original context.
RopeScaling identity_scaling(const RopeParams& p) {
  RopeScaling s;
  const bool ntk_ok = p.rotary_dim >= 4;
  s.kind = *rc::gen::element(RopeScalingKind::linear, RopeScalingKind::yarn, RopeScalingKind::llama3,
                             RopeScalingKind::longrope, ntk_ok ? RopeScalingKind::ntk : RopeScalingKind::linear,
                             ntk_ok ? RopeScalingKind::dynamic : RopeScalingKind::linear);
  s.factor = 1.0;
  const auto original = *rc::gen::inRange<std::int64_t>(2, 1 << 20);
  switch (s.kind) {
    case RopeScalingKind::dynamic:
      s.factor = generators::positive_factor();
      s.original_max_positions = original;
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, original + 1);
      break;
    case RopeScalingKind::yarn:
      s.original_max_positions = original;
      break;
    case RopeScalingKind::llama3:
      s.original_max_positions = original;
      s.low_freq_factor = 1.0;
      s.high_freq_factor = 4.0;
      break;
    case RopeScalingKind::longrope:
      s.original_max_positions = original;
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, 1 << 21);
      s.short_factor.assign(static_cast<std::size_t>(p.rotary_dim / 2), 1.0);
      s.long_factor = s.short_factor;
      break;
    default:
      break;
  }
  return s;
}

void scaling_consistency(Implementation& impl, const Tolerance& t) {
  auto none = any_rope_params();
  none.partial = PartialRotary::standard;
  none.scaling = RopeScaling{};
  auto scaled = none;
  scaled.scaling = identity_scaling(none);
  const auto pos = any_position();
  const auto x = any_vector(none.head_dim);
  const auto a = rotate(impl, none, pos, x, t), b = rotate(impl, scaled, pos, x, t);
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!(std::fabs(a.y[j] - b.y[j]) <= a.allowed[j] + b.allowed[j])) {
      RC_FAIL(element(scaled, pos, j) + ": " + show(b.y[j]) + " but " + show(a.y[j]) + " without scaling");
    }
  }
}

void table_unit_circle(Implementation& impl, const Tolerance& t) {
  const auto p = any_rope_params();
  const auto pos = any_position();
  const VectorGroup g = group_of(CaseType::rope_table, p);
  const VectorCase c = rope_case(p, pos, {});
  const auto row = call(impl, g, c);
  const auto ok = allowed(g, c, row, t);
  const double m = std::fabs(attention_factor(p));
  const std::size_t pairs = row.size() / 2;
  for (std::size_t i = 0; i < pairs; ++i) {
    const double cs = row[i], sn = row[pairs + i], ec = ok[i], es = ok[pairs + i];
    if (!(std::fabs(cs) <= m * (1 + 2 * unit()) + ec) || !(std::fabs(sn) <= m * (1 + 2 * unit()) + es)) {
      RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ", pair " + std::to_string(i) + ": |cos| or |sin| exceeds the attention factor " + show(m));
    }
    const double r2 = cs * cs + sn * sn;
    if (!(std::fabs(r2 - m * m) <= 2 * m * (ec + es) + 4 * unit() * m * m)) {
      RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ", pair " + std::to_string(i) + ": cos^2 + sin^2 = " +
              show(r2) + " instead of " + show(m * m));
    }
  }
}

}  // namespace

std::vector<Named> rope_properties() {
  return {
      {"rope_zero_rotation: position 0 is the identity times the attention factor", zero_rotation},
      {"rope_partial_passthrough: dims past the rotated span are copied bit for bit", partial_passthrough},
      {"rope_scaling_by_two: R(2x) = 2 R(x) exactly", scaling_by_two},
      {"rope_norm_preservation: |R x| = m |x|", norm_preservation},
      {"rope_inverse: the inverse rotation undoes the rotation", inverse},
      {"rope_composition: R(b) R(a) = R(a + b)", composition},
      {"rope_additivity: R(x + y) = R(x) + R(y)", additivity},
      {"rope_layout_permutation: half layout = interleaved layout up to a fixed permutation", layout_permutation},
      {"rope_distance_only: q.k at (m, n) equals q.k at (m + s, n + s)", distance_only},
      {"rope_linear_scaling: factor s at position s p equals no scaling at p", linear_scaling},
      {"rope_scaling_consistency: every scaling with factor 1, and dynamic below the original length, equals none",
       scaling_consistency},
      {"rope_table_unit_circle: cos^2 + sin^2 = m^2, |cos|, |sin| <= m", table_unit_circle},
  };
}

}  // namespace posenc::conformance::properties
